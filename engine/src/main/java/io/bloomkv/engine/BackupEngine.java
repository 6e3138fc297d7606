package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.version.FileNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.slf4j.Logger;

/**
 * Incremental backups of databases in one backup directory (RocksDB's {@code BackupEngine}), built on
 * {@link Db#checkpoint}. Layout (engine/FORMAT.md, "Backup directory"):
 *
 * <pre>
 * BACKUP_DIR/meta/ID                    one metadata file per backup: its files, sizes and CRC32C checksums
 * BACKUP_DIR/shared/N_CRC_SIZE.sst      tables, shared by every backup that holds them (named by number, checksum, size)
 * BACKUP_DIR/private/ID/               the backup's own MANIFEST, CURRENT and WALs
 * BACKUP_DIR/tmp/                       a backup being made
 * BACKUP_DIR/LOCK                       held by the writable engine open on the directory
 * </pre>
 *
 * <p>{@link #createBackup} checkpoints the database into {@code tmp/} (hard links where it can, copies elsewhere),
 * moves each table into {@code shared/} unless a file of the same name (number, CRC32C, size) is there already, moves
 * the rest into {@code private/ID/}, syncs, and last writes {@code meta/ID} (a temp file renamed into place): the
 * backup exists once its metadata does. A create that fails removes what it had stored before it returns, its
 * metadata too if it failed after renaming it into place (syncing {@code meta/}), as RocksDB deletes a backup whose
 * create failed, so a create that threw leaves no listed backup (its data is removed only once {@code meta/} syncs,
 * so that the metadata cannot come back after a crash naming removed files). Once the metadata is durable the create
 * has succeeded: removing its emptied {@code tmp/ID/} afterwards is clean-up, and a failure there is logged (a WARN on
 * the database's info log), not thrown, as RocksDB counts a backup as created once its metadata is stored. The backup
 * holds exactly the writes acknowledged before the call (the checkpoint's point), concurrent writers notwithstanding.
 *
 * <p>{@link #garbageCollect} (RocksDB's {@code GarbageCollect}) removes what a crashed or failed create, or a crashed
 * or failed delete, left: {@code tmp/}, private directories and metadata temp files of backups without metadata, and
 * the shared tables no backup names. As RocksDB's, {@link #open} removes nothing (it locks and lists): a collection is
 * due from the open, and the engine's first {@link #createBackup}, {@link #deleteBackup} or {@link #purgeOldBackups}
 * runs it before its own work; one that fails stays due for the next. Every delete and purge also removes, after the
 * metadata, the files no remaining backup names (the first one after the open from the listing of the collection it
 * has just run, so that the directory is scanned once), and a failed create collects what it stored, so that none of
 * them leaves files no backup names. {@link #openReadOnly} never collects, and writes nothing.
 *
 * <p>{@link #deleteBackup} and {@link #purgeOldBackups} remove a backup's metadata first, then the files no remaining
 * backup names (RocksDB's {@code DeleteBackup}, {@code PurgeOldBackups}). A purge keeps the newest valid backups and
 * leaves damaged ones alone (below).
 *
 * <p>{@link #verify} recomputes every file's checksum; {@link #restore} copies a backup into an empty directory,
 * checking each file's size and checksum as it copies, and writes CURRENT last. A missing or damaged file is a
 * {@link CorruptionException} naming it; a restore that meets one leaves no CURRENT (and removes what it wrote).
 *
 * <p>A damaged backup (RocksDB's corrupt backup) is left out of {@link #backups} and named by {@link
 * #corruptedBackups}, with why by {@link #corruptedBackupReasons}: one whose metadata does not parse, or that names a
 * file that is missing or not of the recorded size (checked on every listing from one listing of {@code shared/} and
 * of each {@code private/ID/} with sizes, no checksum, as RocksDB checks when it opens). Verifying or restoring it is a
 * {@link CorruptionException} naming the metadata file or the data file, and {@link #deleteBackup} removes it ({@link
 * #purgeOldBackups} neither counts nor deletes it). It blocks nothing else: backups are still created (with ids above
 * it), listed, deleted and purged. Its files stay until it is deleted, for a repair: its private directory, and the
 * shared tables its metadata names; while some backup's metadata does not parse, which tables it names is unknown, so
 * no shared table is removed. A create that stores a table again replaces a {@code shared/} file of the wrong size
 * under its name. RocksDB differs: a corrupt backup holds no references there (its metadata counts only once it has
 * loaded whole), so the garbage collection that its first delete or purge after opening runs removes the corrupt
 * backup's private directory and every shared table only corrupt backups name.
 *
 * <p>One writable BackupEngine per backup directory at a time: {@link #open} takes an exclusive lock on {@code LOCK}
 * in the directory ({@link FileSystem#tryLock}, as {@link Db#open} on a database's), held until {@link #close}, and
 * refuses a second writable open, of another process or of this JVM, with {@link BackupEngineLockedException}; two
 * writers would remove each other's creates in progress and give the same id twice. Its methods are synchronized.
 * Read-only engines ({@link #openReadOnly}) take no lock and may list, verify and restore while it works, as RocksDB's
 * {@code BackupEngineReadOnly}: a backup being created is absent from their listing until its metadata is in place,
 * and one deleted meanwhile fails to verify or restore. The lock file is no backup's: never collected, listed or
 * restored. The file system must be the one the backed-up databases use, so that the checkpoint's files can be moved.
 */
public final class BackupEngine implements AutoCloseable {
    static final String META_MAGIC = "bloomkv-backup";
    static final int META_VERSION = 1;
    private static final String SHARED = "shared";
    private static final String PRIVATE = "private";
    private static final String META = "meta";
    private static final String TMP = "tmp";
    private static final int BUFFER = 1 << 20;
    /** A {@code shared/} table name as {@link #createBackup} writes it: {@code N_CCCCCCCC_S.sst}. */
    private static final java.util.regex.Pattern SHARED_NAME =
            java.util.regex.Pattern.compile("[0-9]{1,18}_[0-9a-f]{8}_[0-9]{1,19}\\.sst");

    private final FileSystem fs;
    private final Path root;
    /** The lock on {@code LOCK} of a writable engine, released by {@link #close}; a no-op for a read-only one. */
    private final java.io.Closeable lock;
    /** Guarded by this: {@link #close} was called; every operation is refused from then on. */
    private boolean closed;
    /** Where clean-up that failed after a successful create is reported: the database info log ({@link DbLog}). */
    private final Logger log;
    /** Opened by {@link #openReadOnly}: nothing in the backup directory is written or removed. */
    private final boolean readOnly;
    /**
     * Guarded by this: a garbage collection is due (RocksDB's {@code might_need_garbage_collect_}): from the open, and
     * from any collection or clean-up that did not complete, until a collection completes. The next create, delete or
     * purge runs it first.
     */
    private boolean collectionDue = true;

    /** A file of a backup: its path relative to the backup directory, size and CRC32C. */
    public record BackupFile(String path, long size, int crc32c) {}

    /** A backup: its id, when it was made (ms since the epoch), and its files. */
    public record BackupInfo(int id, long timestampMillis, List<BackupFile> files) {
        /** Bytes of all its files (shared ones included). */
        public long size() {
            long n = 0;
            for (BackupFile f : files) {
                n += f.size();
            }
            return n;
        }
    }

    /**
     * Guarded by this: the highest backup id this engine has seen (at open, or created since), so that the id of a
     * newest backup deleted while the engine is open is not given again before a reopen (RocksDB's
     * {@code latest_backup_id_}). A create that fails does not count: its id is given to the next create.
     */
    private int latestId;

    private BackupEngine(FileSystem fs, Path root, Logger log, int latestId, boolean readOnly, java.io.Closeable lock) {
        this.fs = fs;
        this.root = root;
        this.log = log;
        this.latestId = latestId;
        this.readOnly = readOnly;
        this.lock = lock;
    }

    /**
     * The backups in {@code backupDir} on the real file system (the directory and its {@code meta/}, {@code shared/},
     * {@code private/} and {@code tmp/} are created if missing), writable: the engine holds the directory's {@code
     * LOCK} until {@link #close}. Nothing is removed: what a crashed create or delete left stays until this engine's
     * first create, delete or purge, or {@link #garbageCollect}, collects it (as RocksDB's {@code BackupEngine::Open}).
     *
     * @throws BackupEngineLockedException if another writable engine, of another process or of this JVM, has the
     *     directory open
     * @throws InvalidArgumentException if {@code backupDir} is a file, or a directory holding other files
     */
    public static BackupEngine open(Path backupDir) {
        return open(backupDir, FileSystem.disk());
    }

    /** {@link #open(Path)} on {@code fs}. */
    public static BackupEngine open(Path backupDir, FileSystem fs) {
        return open(backupDir, fs, DbLog.LOG);
    }

    /** {@link #open(Path, FileSystem)}, reporting to {@code log} (tests pass a recording logger). */
    static BackupEngine open(Path backupDir, FileSystem fs, Logger log) {
        if (backupDir == null || fs == null) {
            throw new InvalidArgumentException("backup directory and file system must not be null");
        }
        Path root = backupDir.toAbsolutePath().normalize();
        java.io.Closeable lock = null;
        try {
            if (fs.exists(root)
                    && !fs.exists(root.resolve(META))
                    && !fs.list(root).isEmpty()) {
                throw new InvalidArgumentException("not a backup directory (it holds other files): " + root);
            }
            for (String d : List.of(META, SHARED, PRIVATE, TMP)) {
                fs.createDirectories(root.resolve(d));
            }
            // Before the listing: the highest id is this engine's to give out only once no other writer can add one.
            lock = fs.tryLock(FileNames.lockFile(root)).orElseThrow(() -> new BackupEngineLockedException(root));
            List<Integer> ids = ids(fs, root);
            return new BackupEngine(fs, root, log, ids.isEmpty() ? 0 : ids.get(ids.size() - 1), false, lock);
        } catch (java.nio.file.NotDirectoryException | java.nio.file.FileAlreadyExistsException e) {
            releaseAfterFailedOpen(lock, e);
            throw new InvalidArgumentException("backup directory is a file: " + root);
        } catch (IOException e) {
            BloomKvIOException failure = new BloomKvIOException("cannot open backup directory " + root, e);
            releaseAfterFailedOpen(lock, failure);
            throw failure;
        } catch (RuntimeException e) {
            releaseAfterFailedOpen(lock, e);
            throw e;
        }
    }

    /** Releases the lock of an open that failed after taking it (if it did); a problem is added to {@code failure}. */
    private static void releaseAfterFailedOpen(java.io.Closeable lock, Throwable failure) {
        if (lock == null) {
            return;
        }
        try {
            lock.close();
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * The backups in the existing backup directory {@code backupDir} on the real file system, read-only (RocksDB's
     * {@code BackupEngineReadOnly}): nothing there is created, written or removed, and no lock is taken, so it may
     * list, verify and restore while a writable engine (of this or another process) creates backups there; a backup
     * whose create is in progress is absent from its listing until the create has stored its metadata. {@link
     * #createBackup}, {@link #deleteBackup}, {@link #purgeOldBackups} and {@link #garbageCollect} throw {@link
     * BackupReadOnlyException}.
     *
     * @throws InvalidArgumentException if {@code backupDir} is not a backup directory (it has no {@code meta/})
     */
    public static BackupEngine openReadOnly(Path backupDir) {
        return openReadOnly(backupDir, FileSystem.disk());
    }

    /** {@link #openReadOnly(Path)} on {@code fs}. */
    public static BackupEngine openReadOnly(Path backupDir, FileSystem fs) {
        if (backupDir == null || fs == null) {
            throw new InvalidArgumentException("backup directory and file system must not be null");
        }
        Path root = backupDir.toAbsolutePath().normalize();
        try {
            if (!fs.exists(root.resolve(META))) {
                throw new InvalidArgumentException("not a backup directory (no " + META + "/): " + root);
            }
            List<Integer> ids = ids(fs, root);
            return new BackupEngine(fs, root, DbLog.LOG, ids.isEmpty() ? 0 : ids.get(ids.size() - 1), true, () -> {});
        } catch (java.nio.file.NotDirectoryException e) {
            throw new InvalidArgumentException("not a backup directory (" + META + " is a file): " + root);
        } catch (IOException e) {
            throw new BloomKvIOException("cannot open backup directory " + root, e);
        }
    }

    /** Whether this engine was opened by {@link #openReadOnly}. */
    public boolean isReadOnly() {
        return readOnly;
    }

    private void checkWritable(String operation) {
        checkOpen(operation);
        if (readOnly) {
            throw new BackupReadOnlyException(root, operation);
        }
    }

    /** Caller holds this. */
    private void checkOpen(String operation) {
        if (closed) {
            throw new BackupEngineClosedException(root, operation);
        }
    }

    /**
     * Releases the directory's {@code LOCK} (a writable engine's), so that another engine may open it writable; every
     * later call but {@link #directory}, {@link #isReadOnly} and this one throws {@link BackupEngineClosedException}.
     * Waits for a call in progress on another thread. Closing again does nothing.
     *
     * @throws BloomKvIOException if the lock cannot be released
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            lock.close();
        } catch (IOException e) {
            throw new BloomKvIOException("cannot release the lock of backup directory " + root, e);
        }
    }

    /** The backup directory (absolute). */
    public Path directory() {
        return root;
    }

    /**
     * What {@link #createBackup(Db, Progress)} reports while it runs, on the calling thread (RocksDB's
     * {@code progress_callback}): once the checkpoint knows its files, how many there are and the bytes to go; then
     * the files and bytes done so far, as the checkpoint copies the tables it could not hard-link (a backup directory
     * on another file system than the database's) and as each file is checksummed (every byte is read) and stored.
     * Where every table is linked, nothing is copied and the bytes are those of the backup ({@link BackupInfo#size});
     * where tables are copied, their bytes count twice, copied and then checksummed. A callback that throws (a caller
     * cancelling the backup) fails the create with that exception, as is; the create then removes what it had stored,
     * its checkpoint included, and leaves no backup. Only {@link #progressed} must be written, so a lambda is a
     * progress: {@code (files, bytes) -> ...}.
     */
    @FunctionalInterface
    public interface Progress {
        /** Reports nothing. */
        Progress NONE = (files, bytes) -> {};

        /**
         * Called once, before {@link #progressed}: {@code files} files are to be stored, and {@code bytes} bytes in all
         * to be copied by the checkpoint (the tables it could not link) and checksummed (every file of the
         * checkpoint). Does nothing unless overridden.
         */
        default void started(int files, long bytes) {}

        /**
         * {@code files} files are stored and {@code bytes} bytes copied or checksummed so far (both count up, never
         * down, to the totals of {@link #started}); called after every MiB copied or read and after every file
         * stored.
         */
        void progressed(int files, long bytes);
    }

    /**
     * Backs up {@code db} (a writable database on this engine's file system): a new backup holding exactly the
     * writes acknowledged before the call. Tables already in the backup directory are not copied again. Returns once
     * the backup's metadata is durable; a failure to remove the emptied work directory {@code tmp/ID/} after that is
     * logged, not thrown (the backup exists and is whole), and the next garbage collection removes it. Its id
     * is one above every id this engine has seen since it was opened, so a deleted newest backup's id is not given
     * again until a reopen (RocksDB's ids, likewise); a create that failed leaves its id to the next.
     */
    public BackupInfo createBackup(Db db) {
        return createBackup(db, Progress.NONE);
    }

    /**
     * {@link #createBackup(Db)}, reporting to {@code progress} how far it is (the command line's progress display):
     * the tables the checkpoint copies, where it cannot hard-link them, then the checkpoint's files, each read once
     * for its checksum, which is most of a backup's time when the checkpoint could link the tables.
     *
     * @throws BackupReadOnlyException on an engine opened {@link #openReadOnly}
     */
    public synchronized BackupInfo createBackup(Db db, Progress progress) {
        if (db == null) {
            throw new InvalidArgumentException("database is null");
        }
        if (progress == null) {
            throw new InvalidArgumentException("progress is null (Progress.NONE reports nothing)");
        }
        checkWritable("createBackup");
        try {
            collectIfDue();
            int id = nextId();
            Path tmp = root.resolve(TMP).resolve(Integer.toString(id));
            long[] bytesDone = {0};
            db.checkpoint(tmp, new Checkpointer.Listener() {
                @Override
                public void planned(int files, long bytes, long copyBytes) {
                    progress.started(files, copyBytes + bytes); // the copy, then the checksum of every file
                }

                @Override
                public void copied(long bytes) {
                    bytesDone[0] += bytes;
                    progress.progressed(0, bytesDone[0]);
                }
            });
            Path priv = root.resolve(PRIVATE).resolve(Integer.toString(id));
            fs.createDirectories(priv);
            List<Path> checkpointFiles = fs.list(tmp);
            List<BackupFile> files = new ArrayList<>();
            for (Path p : checkpointFiles) {
                String name = p.getFileName().toString();
                FileNames.Parsed parsed = FileNames.parse(name);
                int crc = crc32c(p, n -> {
                    bytesDone[0] += n;
                    progress.progressed(files.size(), bytesDone[0]);
                });
                long size = fs.size(p);
                if (parsed != null && parsed.kind() == FileNames.Kind.TABLE) {
                    String sharedName = String.format(Locale.ROOT, "%d_%08x_%d.sst", parsed.number(), crc, size);
                    Path dst = root.resolve(SHARED).resolve(sharedName);
                    if (fs.exists(dst) && fs.size(dst) == size) {
                        fs.delete(p);
                    } else {
                        // Absent, or damaged (its name says its size): replaced, as RocksDB overwrites a shared file
                        // no valid backup names, so the new backup is whole (and so is any that named the bad one).
                        fs.rename(p, dst);
                    }
                    files.add(new BackupFile(SHARED + "/" + sharedName, size, crc));
                } else {
                    fs.rename(p, priv.resolve(name));
                    files.add(new BackupFile(PRIVATE + "/" + id + "/" + name, size, crc));
                }
                progress.progressed(files.size(), bytesDone[0]);
            }
            fs.syncDirectory(root.resolve(SHARED));
            fs.syncDirectory(priv);
            BackupInfo info = new BackupInfo(id, System.currentTimeMillis(), List.copyOf(files));
            writeMeta(info);
            latestId = Math.max(latestId, id);
            // The backup exists (its metadata is durable): from here on nothing may fail the create or remove it.
            removeWorkDirectory(db, id, tmp);
            return info;
        } catch (IOException e) {
            BloomKvIOException failure =
                    new BloomKvIOException("backup of " + db.directory() + " into " + root + " failed", e);
            removeLeftoversOf(failure);
            throw failure;
        } catch (RuntimeException | Error e) {
            removeLeftoversOf(e); // a progress callback that threw, as any other failure
            throw e;
        }
    }

    /**
     * Removes backup {@code id}'s emptied checkpoint directory {@code tmp/ID/} once the backup exists. A failure is
     * logged (WARN) and not thrown: the backup is created (RocksDB counts a backup as created once its metadata is
     * stored); a collection becomes due, which the next create, delete or purge runs ({@link #collectGarbage} removes
     * everything under {@code tmp/}).
     */
    private void removeWorkDirectory(Db db, int id, Path tmp) {
        try {
            fs.delete(tmp);
        } catch (IOException | RuntimeException e) {
            collectionDue = true;
            log.warn(
                    "[{}] backup {} created in {}, but removing its work directory {} failed (the next backup, delete,"
                            + " purge or garbageCollect removes it)",
                    db.directory(),
                    id,
                    root,
                    tmp,
                    e);
        }
    }

    /**
     * Removes at once what a create that failed with {@code failure} had stored (its checkpoint in {@code tmp/},
     * {@code private/ID/}, the tables it moved into {@code shared/}), as the next collection would: a cancelled backup
     * holds no copy of the database. Best effort: a problem is added to {@code failure}.
     */
    private void removeLeftoversOf(Throwable failure) {
        try {
            collectGarbage();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * The backups, oldest first, without the damaged ones ({@link #corruptedBackups}): those whose metadata does not
     * parse, and those naming a file that is missing or not of the recorded size.
     */
    public synchronized List<BackupInfo> backups() {
        checkOpen("backups");
        try {
            return scan().valid();
        } catch (IOException e) {
            throw new BloomKvIOException("cannot list the backups in " + root, e);
        }
    }

    /**
     * The ids of the damaged backups, ascending (RocksDB's {@code GetCorruptedBackups}): those whose metadata does not
     * parse, and those naming a file that is missing or whose size differs from the recorded one (a listing of {@code
     * shared/} and the backup's {@code private/ID/} with sizes, as RocksDB checks when it opens; no checksum is
     * computed, {@link #verify} does that). {@link #corruptedBackupReasons} says why; {@link #deleteBackup} removes
     * them.
     */
    public synchronized List<Integer> corruptedBackups() {
        return List.copyOf(corruptedBackupReasons().keySet());
    }

    /**
     * Each damaged backup ({@link #corruptedBackups}) with why, by ascending id: a {@link CorruptionException} naming
     * the metadata file that does not parse, or the first listed file that is missing or of the wrong size.
     */
    public synchronized SortedMap<Integer, CorruptionException> corruptedBackupReasons() {
        checkOpen("corruptedBackups");
        try {
            return java.util.Collections.unmodifiableSortedMap(scan().damaged());
        } catch (IOException e) {
            throw new BloomKvIOException("cannot list the backups in " + root, e);
        }
    }

    /**
     * Recomputes the size and checksum of every file of backup {@code id}.
     *
     * @throws CorruptionException naming the first file that is missing, of the wrong size, or whose checksum differs
     * @throws InvalidArgumentException if there is no such backup
     */
    public synchronized void verify(int id) {
        checkOpen("verify");
        try {
            BackupInfo info = readMeta(checkId(id));
            for (BackupFile f : info.files()) {
                Path p = root.resolve(f.path());
                if (!fs.exists(p)) {
                    throw new CorruptionException("backup " + id + ": file is missing", p, -1);
                }
                long size = fs.size(p);
                if (size != f.size()) {
                    throw new CorruptionException("backup " + id + ": size " + size + ", expected " + f.size(), p, -1);
                }
                int crc = crc32c(p);
                if (crc != f.crc32c()) {
                    throw new CorruptionException(
                            String.format(Locale.ROOT, "backup %d: checksum %08x, expected %08x", id, crc, f.crc32c()),
                            p,
                            -1);
                }
            }
        } catch (IOException e) {
            throw new BloomKvIOException("cannot verify backup " + id + " in " + root, e);
        }
    }

    /**
     * Restores backup {@code id} into {@code target}, which must not exist or be empty; the result opens with
     * {@link Db#open}. Each file is checked (size, CRC32C) as it is copied; CURRENT is written last.
     *
     * @throws CorruptionException naming a backup file that is missing or damaged (the target is then left without
     *     CURRENT, its files removed)
     */
    public synchronized void restore(int id, Path target) {
        if (target == null) {
            throw new InvalidArgumentException("restore target is null");
        }
        checkOpen("restore");
        Path out = target.toAbsolutePath().normalize();
        List<Path> written = new ArrayList<>();
        try {
            BackupInfo info = readMeta(checkId(id));
            if (fs.exists(out)) {
                if (!fs.list(out).isEmpty()) {
                    throw new InvalidArgumentException("restore target is not empty: " + out);
                }
            } else {
                fs.createDirectories(out);
            }
            BackupFile current = null;
            for (BackupFile f : info.files()) {
                String name = Path.of(f.path()).getFileName().toString();
                if (name.equals(FileNames.CURRENT)) {
                    current = f;
                    continue;
                }
                Path dst;
                if (f.path().startsWith(SHARED + "/")) {
                    dst = FileNames.tableFile(out, sharedTableNumber(name)); // readMeta checked the name
                } else {
                    dst = out.resolve(name);
                }
                written.add(dst);
                copyChecked(id, root.resolve(f.path()), dst, f);
            }
            if (current == null) {
                throw new CorruptionException("backup " + id + " has no CURRENT", metaFile(id), -1);
            }
            Path tmp = FileNames.tempFile(out, 0);
            written.add(tmp);
            copyChecked(id, root.resolve(current.path()), tmp, current);
            fs.syncDirectory(out);
            written.add(FileNames.currentFile(out));
            fs.rename(tmp, FileNames.currentFile(out));
            fs.syncDirectory(out);
        } catch (IOException | RuntimeException e) {
            for (int i = written.size() - 1; i >= 0; i--) {
                try {
                    fs.delete(written.get(i));
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            if (e instanceof IOException io) {
                throw new BloomKvIOException("cannot restore backup " + id + " into " + out, io);
            }
            throw (RuntimeException) e;
        }
    }

    /**
     * Deletes backup {@code id} (RocksDB's {@code DeleteBackup}): its metadata, its private files, and the shared
     * tables no remaining backup names. Crash-safe: the metadata goes first (the backup ceases to exist when its
     * metadata file is unlinked and {@code meta/} synced), then the files only it referenced; a crash between the two
     * leaves unreferenced files that the next engine's first delete, purge or create removes, and never touches a file
     * another backup names, so every remaining backup still verifies and restores. If a collection is due (the first
     * delete, purge or create of this engine, or one after a collection that failed), it runs first; if it fails, the
     * delete throws and deletes nothing. The files of the deleted backup are then found from that collection's
     * listing: the directory is scanned once (this engine's lock keeps other writers out meanwhile).
     *
     * A damaged backup is deleted the same way. The files a remaining damaged backup's metadata names stay, and while
     * some remaining backup's metadata does not parse no shared table is removed (which ones it names is unknown).
     *
     * @throws InvalidArgumentException if there is no such backup
     * @throws BackupReadOnlyException on an engine opened {@link #openReadOnly}
     */
    public synchronized void deleteBackup(int id) {
        checkWritable("deleteBackup");
        try {
            Scan collected = collectIfDue();
            checkId(id);
            deleteMetaThenCollect(List.of(id), collected);
        } catch (IOException e) {
            throw new BloomKvIOException("cannot delete backup " + id + " in " + root, e);
        }
    }

    /**
     * Keeps the {@code keep} newest valid backups (highest ids of {@link #backups}) and deletes the other valid ones,
     * oldest first (RocksDB's {@code PurgeOldBackups}), with the same crash safety as {@link #deleteBackup}: a crash
     * part-way leaves a suffix of the valid backups, each whole. Returns the ids deleted, ascending.
     *
     * <p>A backup whose metadata is damaged ({@link #corruptedBackups}) is neither counted nor deleted, whether its id
     * is above, among or below those kept: as RocksDB, which counts only the backups whose metadata it loaded and
     * leaves a corrupt one until {@code DeleteBackup} removes it. So with backups 1, 2, 3 and 3's metadata damaged,
     * {@code purgeOldBackups(2)} deletes nothing, and {@code purgeOldBackups(0)} deletes 1 and 2 and leaves 3 for
     * {@link #deleteBackup}. The files a damaged backup names stay, as with {@link #deleteBackup}: those its metadata
     * lists, or every shared table while its metadata does not parse. RocksDB differs there: the garbage collection
     * that its first purge or delete after opening runs also removes a corrupt backup's private directory and the
     * shared tables only corrupt backups named, leaving metadata whose data is gone; bloomkv keeps them, so a file or
     * metadata file put back from elsewhere gives back a whole backup, and {@link #deleteBackup} of the damaged backup
     * frees them.
     *
     * <p>A collection that is due runs first, as for {@link #deleteBackup}, even if nothing is to be deleted (as
     * RocksDB's first purge after opening collects).
     *
     * @throws InvalidArgumentException if {@code keep} is negative
     * @throws BackupReadOnlyException on an engine opened {@link #openReadOnly}
     */
    public synchronized List<Integer> purgeOldBackups(int keep) {
        if (keep < 0) {
            throw new InvalidArgumentException("purgeOldBackups: keep must be >= 0, got " + keep);
        }
        checkWritable("purgeOldBackups");
        try {
            Scan collected = collectIfDue();
            // Damaged backups are neither counted nor deleted (RocksDB's corrupt_backups_ are outside its backups_).
            List<Integer> valid = (collected != null ? collected : scan())
                    .valid().stream().map(BackupInfo::id).toList();
            List<Integer> doomed = List.copyOf(valid.subList(0, Math.max(0, valid.size() - keep)));
            deleteMetaThenCollect(doomed, collected);
            return doomed;
        } catch (IOException e) {
            throw new BloomKvIOException("cannot purge old backups in " + root, e);
        }
    }

    /**
     * Unlinks the metadata of each of {@code doomed} in the given (ascending) order, syncing {@code meta/} after
     * each, so that a crash part-way leaves the newest backups; then removes every file no remaining metadata names.
     * Data files are removed only after the metadata naming them is durably gone.
     *
     * <p>{@code collected} is the scan of the collection this call has just completed (the first delete or purge
     * after the open), or null. With it, what is left to remove is known without a second scan: the collection left
     * exactly the files some metadata named, so the doomed backups' private directories and the shared tables only
     * they named are what goes (RocksDB's delete, likewise, removes the files whose reference count drops to zero).
     * That holds because no other writer changes the directory between the two (this engine holds its lock, and its
     * methods are synchronized). Without it, a whole collection runs ({@link #collectGarbage}).
     */
    private void deleteMetaThenCollect(List<Integer> doomed, Scan collected) throws IOException {
        collectionDue = true; // a failure before the removal below completes leaves unnamed files
        for (int id : doomed) {
            fs.delete(metaFile(id));
            fs.syncDirectory(root.resolve(META));
        }
        if (collected == null) {
            collectGarbage();
            return;
        }
        Set<String> named = new HashSet<>();
        boolean namesUnknown = false;
        for (int id : collected.ids()) {
            if (doomed.contains(id)) {
                continue;
            }
            Set<String> names = collected.namedBy().get(id);
            if (names == null) {
                namesUnknown = true; // its metadata does not parse
            } else {
                named.addAll(names);
            }
        }
        for (int id : doomed) {
            Path priv = root.resolve(PRIVATE).resolve(Integer.toString(id));
            if (fs.exists(priv)) {
                deleteTree(priv);
            }
        }
        if (!namesUnknown) {
            for (String f : collected.shared()) {
                // Still there after the collection (it removed the unnamed ones, unless some name was unknown)...
                boolean kept = collected.namesUnknown() || collected.named().contains(f);
                // ...and named by no remaining backup.
                if (kept && !named.contains(f)) {
                    fs.delete(root.resolve(f));
                }
            }
        }
        collectionDue = false;
    }

    /**
     * Removes every file no backup needs (RocksDB's {@code GarbageCollect}): what a create or delete that failed or was
     * cut short by a crash left. That is everything under {@code tmp/} (checkpoints of creates that did not finish),
     * the {@code private/} directories of ids without metadata, metadata temp files ({@code meta/ID.tmp}), and the
     * {@code shared/} tables no metadata names. Never removed: a file a valid backup names, a damaged backup's private
     * directory and the shared tables its metadata names, and, while some backup's metadata does not parse, any shared
     * table (which ones it names is unknown; its {@link #deleteBackup} lifts that). Runs whether or not a collection
     * is due ({@link #open} runs none; the engine's first create, delete or purge runs one, and every delete and purge
     * removes after its metadata unlinks the files no remaining backup names): calling it removes what a crash left
     * without deleting or creating a backup. The directory's {@code LOCK} is not the backups': it stays.
     *
     * <p>Crash-safe: {@code meta/} is synced first, and nothing is removed unless that succeeds, so that no metadata
     * unlinked without a sync can come back after a crash naming removed files.
     *
     * @throws BloomKvIOException if a directory cannot be listed or synced or a file cannot be removed (what could be
     *     removed before it is gone; calling again retries)
     * @throws BackupReadOnlyException on an engine opened {@link #openReadOnly}
     */
    public synchronized void garbageCollect() {
        checkWritable("garbageCollect");
        try {
            collectGarbage();
        } catch (IOException e) {
            throw new BloomKvIOException("cannot collect garbage in " + root, e);
        }
    }

    // ------------------------------------------------------------------ files

    /** Copies {@code src} to {@code dst} (synced), checking its size and CRC32C against {@code f}. */
    private void copyChecked(int id, Path src, Path dst, BackupFile f) throws IOException {
        if (!fs.exists(src)) {
            throw new CorruptionException("backup " + id + ": file is missing", src, -1);
        }
        CRC32C crc = new CRC32C();
        try (ReadableFile in = fs.newReadableFile(src);
                WritableFile w = fs.newWritableFile(dst)) {
            long size = in.size();
            if (size != f.size()) {
                throw new CorruptionException("backup " + id + ": size " + size + ", expected " + f.size(), src, -1);
            }
            byte[] buf = new byte[(int) Math.min(BUFFER, Math.max(1, size))];
            for (long pos = 0; pos < size; ) {
                int n = (int) Math.min(buf.length, size - pos);
                in.readFully(pos, buf, 0, n);
                crc.update(buf, 0, n);
                w.append(buf, 0, n);
                pos += n;
            }
            if ((int) crc.getValue() != f.crc32c()) {
                throw new CorruptionException(
                        String.format(
                                Locale.ROOT,
                                "backup %d: checksum %08x, expected %08x",
                                id,
                                (int) crc.getValue(),
                                f.crc32c()),
                        src,
                        -1);
            }
            w.sync();
        }
    }

    private int crc32c(Path p) throws IOException {
        return crc32c(p, n -> {});
    }

    /** The CRC32C of file {@code p}, telling {@code read} the bytes of each buffer read. */
    private int crc32c(Path p, java.util.function.IntConsumer read) throws IOException {
        CRC32C crc = new CRC32C();
        try (ReadableFile in = fs.newReadableFile(p)) {
            long size = in.size();
            byte[] buf = new byte[(int) Math.min(BUFFER, Math.max(1, size))];
            for (long pos = 0; pos < size; ) {
                int n = (int) Math.min(buf.length, size - pos);
                in.readFully(pos, buf, 0, n);
                crc.update(buf, 0, n);
                pos += n;
                read.accept(n);
            }
        }
        return (int) crc.getValue();
    }

    /**
     * The backups of {@link #scan}: the valid ones, oldest first; each damaged one's reason by id; the paths (relative
     * to the backup directory) every metadata file that parses names, damaged backups' included, and by id; whether
     * some metadata file does not parse, so that what it names is unknown; the ids of every metadata file found; and
     * the files found in {@code shared/} ("shared/NAME").
     */
    private record Scan(
            List<BackupInfo> valid,
            SortedMap<Integer, CorruptionException> damaged,
            Set<String> named,
            boolean namesUnknown,
            List<Integer> ids,
            java.util.Map<Integer, Set<String>> namedBy,
            Set<String> shared) {}

    /**
     * Reads every backup's metadata and checks that each file it names exists with the recorded size, as RocksDB's
     * {@code BackupEngine} does when it opens: {@code shared/} is listed once, each backup's {@code private/ID/} once,
     * with sizes; no file is read. A backup whose metadata does not parse, or that names a file missing or of another
     * size, is damaged. Collects as it goes what the metadata files name, for {@link #collectGarbage}.
     */
    private Scan scan() throws IOException {
        java.util.Map<String, Long> sizes = new java.util.HashMap<>();
        listSizes(SHARED, sizes);
        Set<String> shared = Set.copyOf(sizes.keySet());
        List<BackupInfo> valid = new ArrayList<>();
        SortedMap<Integer, CorruptionException> damaged = new TreeMap<>();
        Set<String> named = new HashSet<>();
        java.util.Map<Integer, Set<String>> namedBy = new java.util.HashMap<>();
        boolean namesUnknown = false;
        List<Integer> ids = new ArrayList<>();
        for (int id : ids()) {
            BackupInfo info;
            try {
                info = readMeta(id);
            } catch (java.nio.file.NoSuchFileException deleted) {
                continue; // deleted since the listing of meta/ (by a writable engine, if this one is read-only)
            } catch (CorruptionException e) {
                ids.add(id);
                damaged.put(id, e);
                namesUnknown = true;
                continue;
            }
            ids.add(id);
            Set<String> names = new HashSet<>();
            for (BackupFile f : info.files()) {
                names.add(f.path());
            }
            named.addAll(names);
            namedBy.put(id, names);
            try {
                listSizes(PRIVATE + "/" + id, sizes);
                for (BackupFile f : info.files()) {
                    Long size = sizes.get(f.path());
                    Path p = root.resolve(f.path());
                    if (size == null) {
                        throw new CorruptionException("backup " + id + ": file is missing", p, -1);
                    }
                    if (size != f.size()) {
                        throw new CorruptionException(
                                "backup " + id + ": size " + size + ", expected " + f.size(), p, -1);
                    }
                }
                valid.add(info);
            } catch (CorruptionException e) {
                damaged.put(id, e);
            }
        }
        return new Scan(List.copyOf(valid), damaged, named, namesUnknown, ids, namedBy, shared);
    }

    /**
     * Adds the files of directory {@code rel} (relative to the backup directory; none if it does not exist) to {@code
     * sizes}, by their path relative to the backup directory ("shared/NAME"), with their sizes.
     */
    private void listSizes(String rel, java.util.Map<String, Long> sizes) throws IOException {
        Path d = root.resolve(rel);
        if (!fs.exists(d)) {
            return;
        }
        for (Path p : fs.list(d)) {
            try {
                sizes.put(rel + "/" + p.getFileName(), fs.size(p));
            } catch (java.nio.file.NoSuchFileException gone) {
                // removed since the listing: missing
            }
        }
    }

    /** Backup ids with a metadata file (parsable or not), ascending. */
    private List<Integer> ids() throws IOException {
        return ids(fs, root);
    }

    private static List<Integer> ids(FileSystem fs, Path root) throws IOException {
        List<Integer> ids = new ArrayList<>();
        for (Path p : fs.list(root.resolve(META))) {
            String name = p.getFileName().toString();
            if (name.matches("[0-9]{1,9}")) {
                ids.add(Integer.parseInt(name));
            }
        }
        ids.sort(null);
        return ids;
    }

    private int checkId(int id) throws IOException {
        if (!ids().contains(id)) {
            throw new InvalidArgumentException("no backup " + id + " in " + root);
        }
        return id;
    }

    private int nextId() throws IOException {
        List<Integer> ids = ids();
        // Above every id with metadata and every id this engine has seen (a deleted newest one included). A private
        // directory left by a failed create is removed by collectGarbage; a live one is never reused.
        return Math.max(ids.isEmpty() ? 0 : ids.get(ids.size() - 1), latestId) + 1;
    }

    private Path metaFile(int id) {
        return root.resolve(META).resolve(Integer.toString(id));
    }

    /** {@link #collectGarbage} if a collection is due ({@link #collectionDue}): its scan, or null if none ran. */
    private Scan collectIfDue() throws IOException {
        return collectionDue ? collectGarbage() : null;
    }

    /**
     * {@link #garbageCollect}, for the engine's own callers, which wrap the exception. The collection is due until
     * this completes, so that one cut short by a failure is run again by the next create, delete or purge. Returns the
     * scan it made once {@code tmp/} was emptied: what it then removed are exactly the files that scan found and no
     * metadata named.
     */
    private Scan collectGarbage() throws IOException {
        collectionDue = true;
        // Data goes only after the metadata naming it is durably gone: a metadata file unlinked without a sync of
        // meta/ (a failed create's, whose sync of meta/ failed, see unpublish) may come back after a crash, naming the
        // files removed here. If meta/ cannot be synced, nothing is removed (the next collection does it).
        fs.syncDirectory(root.resolve(META));
        for (Path dir : fs.list(root.resolve(TMP))) {
            deleteTree(dir);
        }
        Set<Integer> ids = new HashSet<>(ids());
        Scan scan = scan();
        // A damaged backup's private directory stays (its id is in ids), and so do the shared tables its metadata
        // names (in scan.named), for a repair; if its metadata does not parse, which tables it names is unknown.
        for (Path p : fs.list(root.resolve(PRIVATE))) {
            String name = p.getFileName().toString();
            if (!name.matches("[0-9]{1,9}") || !ids.contains(Integer.parseInt(name))) {
                deleteTree(p);
            }
        }
        if (!scan.namesUnknown()) {
            for (Path p : fs.list(root.resolve(SHARED))) {
                if (!scan.named().contains(SHARED + "/" + p.getFileName())) {
                    fs.delete(p);
                }
            }
        }
        for (Path p : fs.list(root.resolve(META))) {
            if (p.getFileName().toString().endsWith(".tmp")) {
                fs.delete(p);
            }
        }
        collectionDue = false;
        return scan;
    }

    private void deleteTree(Path p) throws IOException {
        List<Path> children;
        try {
            children = fs.list(p);
        } catch (java.nio.file.NotDirectoryException e) {
            fs.delete(p);
            return;
        }
        for (Path c : children) {
            deleteTree(c);
        }
        fs.delete(p);
    }

    // -------------------------------------------------------------- metadata (engine/FORMAT.md, "Backup directory")

    private void writeMeta(BackupInfo info) throws IOException {
        StringBuilder sb = new StringBuilder();
        sb.append(META_MAGIC).append(' ').append(META_VERSION).append('\n');
        sb.append("id ").append(info.id()).append('\n');
        sb.append("timestamp ").append(info.timestampMillis()).append('\n');
        sb.append("files ").append(info.files().size()).append('\n');
        for (BackupFile f : info.files()) {
            sb.append(f.path())
                    .append(' ')
                    .append(f.size())
                    .append(' ')
                    .append(String.format(Locale.ROOT, "%08x", f.crc32c()))
                    .append('\n');
        }
        byte[] signed = withChecksumLine(sb.toString().getBytes(StandardCharsets.UTF_8));
        Path tmp = root.resolve(META).resolve(info.id() + ".tmp");
        try (WritableFile w = fs.newWritableFile(tmp)) {
            w.append(signed, 0, signed.length);
            w.sync();
        }
        Path meta = metaFile(info.id());
        try {
            fs.rename(tmp, meta);
            fs.syncDirectory(root.resolve(META));
        } catch (IOException | RuntimeException e) {
            unpublish(meta, e);
            throw e;
        }
    }

    /**
     * Removes the metadata file {@code meta} of a create that failed with {@code failure} once it may have been
     * renamed into place (RocksDB's {@code CreateNewBackup} deletes the new backup on any failure): the caller is told
     * the create failed, so the backup must not be listed. Best effort: a problem is added to {@code failure}, and a
     * metadata file that could not be removed leaves a whole backup (its files were synced before it was written).
     */
    private void unpublish(Path meta, Throwable failure) {
        try {
            if (fs.exists(meta)) {
                fs.delete(meta);
                fs.syncDirectory(root.resolve(META));
            }
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * {@code body} followed by its checksum line: {@code crc32c }, the CRC32C of {@code body} as eight lowercase hex
     * digits, and a newline (the metadata file's last line, engine/FORMAT.md "Backup directory").
     */
    static byte[] withChecksumLine(byte[] body) {
        CRC32C crc = new CRC32C();
        crc.update(body, 0, body.length);
        byte[] tail = String.format(Locale.ROOT, "crc32c %08x\n", (int) crc.getValue())
                .getBytes(StandardCharsets.UTF_8);
        byte[] out = java.util.Arrays.copyOf(body, body.length + tail.length);
        System.arraycopy(tail, 0, out, body.length, tail.length);
        return out;
    }

    /** Parses {@code meta/ID}. @throws CorruptionException naming it when it does not parse or its checksum differs */
    BackupInfo readMeta(int id) throws IOException {
        Path p = metaFile(id);
        byte[] b;
        try (ReadableFile f = fs.newReadableFile(p)) {
            long size = f.size();
            if (size > (64L << 20)) {
                throw new CorruptionException("backup metadata of " + size + " bytes", p, 0);
            }
            b = new byte[(int) size];
            f.readFully(0, b, 0, b.length);
        }
        String text = new String(b, StandardCharsets.UTF_8);
        int tailAt = text.lastIndexOf("crc32c ");
        if (tailAt < 0 || !text.endsWith("\n")) {
            throw new CorruptionException("backup metadata has no checksum line", p, b.length);
        }
        CRC32C crc = new CRC32C();
        byte[] body = text.substring(0, tailAt).getBytes(StandardCharsets.UTF_8);
        crc.update(body, 0, body.length);
        String stored = text.substring(tailAt + 7, text.length() - 1);
        if (!stored.equals(String.format(Locale.ROOT, "%08x", (int) crc.getValue()))) {
            throw new CorruptionException("backup metadata checksum mismatch", p, tailAt);
        }
        try {
            String[] lines = text.substring(0, tailAt).split("\n");
            if (!lines[0].equals(META_MAGIC + " " + META_VERSION)) {
                throw new CorruptionException(
                        "not bloomkv backup metadata version " + META_VERSION + ": '" + lines[0] + "'", p, 0);
            }
            int storedId = Integer.parseInt(field(lines[1], "id"));
            if (storedId != id) {
                throw new CorruptionException("backup metadata names id " + storedId, p, 0);
            }
            long timestamp = Long.parseLong(field(lines[2], "timestamp"));
            int n = Integer.parseInt(field(lines[3], "files"));
            if (n != lines.length - 4) {
                throw new CorruptionException(
                        "backup metadata lists " + (lines.length - 4) + " files, says " + n, p, 0);
            }
            List<BackupFile> files = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String[] parts = lines[4 + i].split(" ");
                if (parts.length != 3 || !listedName(parts[0], id)) {
                    throw new CorruptionException("bad file line '" + lines[4 + i] + "'", p, 0);
                }
                files.add(new BackupFile(parts[0], Long.parseLong(parts[1]), Integer.parseUnsignedInt(parts[2], 16)));
            }
            return new BackupInfo(id, timestamp, List.copyOf(files));
        } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
            throw new CorruptionException("backup metadata does not parse: " + e.getMessage(), p, 0, e);
        }
    }

    /**
     * Whether {@code path} is a name {@link #createBackup} lists: {@code shared/N_CCCCCCCC_S.sst} (a table:
     * {@link #sharedTableNumber}) or {@code private/ID/NAME} with NAME one of the database's own file names that a
     * checkpoint holds besides its tables (CURRENT, a MANIFEST, a log: {@link FileNames#parse}). Anything else (a path
     * that leaves the backup directory, a separator, a NUL or other character the file system refuses, a shared name
     * restore cannot map back to a table number) is damage, reported as a {@link CorruptionException} here rather than
     * failing a later restore.
     */
    private static boolean listedName(String path, int id) {
        if (path.startsWith(SHARED + "/")) {
            return sharedTableNumber(path.substring(SHARED.length() + 1)) >= 0;
        }
        String privatePrefix = PRIVATE + "/" + id + "/";
        if (!path.startsWith(privatePrefix)) {
            return false;
        }
        FileNames.Parsed parsed = FileNames.parse(path.substring(privatePrefix.length()));
        return parsed != null
                && (parsed.kind() == FileNames.Kind.CURRENT
                        || parsed.kind() == FileNames.Kind.MANIFEST
                        || parsed.kind() == FileNames.Kind.LOG);
    }

    /**
     * The table number of a {@code shared/} name as {@link #createBackup} writes it, {@code N_CCCCCCCC_S.sst} (N and S
     * decimal, CCCCCCCC eight lowercase hex digits), or -1 when {@code name} is not one.
     */
    private static long sharedTableNumber(String name) {
        if (!SHARED_NAME.matcher(name).matches()) {
            return -1;
        }
        return Long.parseLong(name.substring(0, name.indexOf('_')));
    }

    private static String field(String line, String name) {
        if (!line.startsWith(name + " ")) {
            throw new NumberFormatException("expected '" + name + " ...', got '" + line + "'");
        }
        return line.substring(name.length() + 1);
    }
}

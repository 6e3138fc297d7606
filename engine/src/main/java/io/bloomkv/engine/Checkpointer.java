package io.bloomkv.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.record.LogReader;
import io.bloomkv.engine.internal.record.LogWriter;
import io.bloomkv.engine.internal.util.ByteReader;
import io.bloomkv.engine.internal.version.FileMetaData;
import io.bloomkv.engine.internal.version.FileNames;
import io.bloomkv.engine.internal.version.Version;
import io.bloomkv.engine.internal.version.VersionEdit;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * {@link Db#checkpoint}: a consistent copy of an open database that another process can open (RocksDB's
 * {@code Checkpoint::CreateCheckpoint}, Pebble's checkpoint.go), taken while writers go on writing.
 *
 * <p>The point of the checkpoint is a sequence number {@code S}: the checkpoint holds exactly the writes with a
 * sequence at or below it, which are the writes acknowledged before the checkpoint call, and none after. How:
 * <ol>
 *   <li>Under the VersionSet's lock: retain the current Version and pin (from deletion) every WAL at or above its
 *       log number, which together hold every write. Then read {@code S}, and sync the WAL (after the writes
 *       queued before): every record at or below {@code S} is then in a WAL file.
 *   <li>Hard-link each table of the Version into the target ({@link FileSystem#link}; tables are immutable); the
 *       tables whose link fails (another device, a file system without links) are copied in step 4.
 *   <li>Rewrite the pinned WALs into the target, keeping the records (whole write batches) at or below {@code S}:
 *       the WAL tail is cut exactly at the point, not at whatever bytes a concurrent writer added. Then write a
 *       MANIFEST holding one snapshot edit (the Version's tables, the log number, {@code S}, a next file number above
 *       every file copied).
 *   <li>Every file but CURRENT and the tables to copy is written, so the checkpoint's files and bytes are known: the
 *       {@link Listener} hears them, then the copy of each unlinked table (synced), buffer by buffer. The Version
 *       stays retained until the end, so no table is deleted before it is copied.
 *   <li>Last, as the commit point, CURRENT (a temp file renamed over it) and a directory sync. A checkpoint cut
 *       short (an error, a crash, a listener that threw) has no CURRENT, and {@link Db#open} refuses such a directory
 *       as "not a database"; after an error the files written are removed.
 * </ol>
 */
final class Checkpointer {
    private static final int COPY_BUFFER = 1 << 20;

    /**
     * The targets of the checkpoints running in this process. Two checkpoints into one new or empty directory both
     * passed the emptiness check; the one that then failed on the other's file removed it in its clean-up, breaking
     * the other, finished, checkpoint. The second is now refused before it looks at the directory.
     */
    private static final java.util.Set<Path> RUNNING = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final FileSystem fs;
    private final Path dbDir;
    private final VersionSet versions;
    private final ObsoleteFiles obsolete;
    private final Runnable syncWal;

    /** What one checkpoint put in its directory: tables linked and copied, and the point. */
    record Result(int tablesLinked, int tablesCopied, int walRecords, long sequence) {}

    /**
     * What a checkpoint reports while it runs, on the checkpointing thread ({@link BackupEngine}'s progress covers the
     * tables the checkpoint copies). An exception thrown here fails the checkpoint with that exception, as is, after
     * its files are removed.
     */
    interface Listener {
        /** Hears nothing. */
        Listener NONE = new Listener() {
            @Override
            public void planned(int files, long bytes, long copyBytes) {}

            @Override
            public void copied(long bytes) {}
        };

        /**
         * Called once, before any {@link #copied}, when every table is linked that could be and the WALs and MANIFEST
         * are written: the finished checkpoint will hold {@code files} files of {@code bytes} bytes in all (CURRENT
         * included), of which {@code copyBytes} (the tables that could not be linked; 0 when all were) are still to
         * be copied.
         */
        void planned(int files, long bytes, long copyBytes);

        /** {@code bytes} more bytes of the tables to copy are written, after every buffer of up to 1 MiB. */
        void copied(long bytes);
    }

    Checkpointer(FileSystem fs, Path dbDir, VersionSet versions, ObsoleteFiles obsolete, Runnable syncWal) {
        this.fs = fs;
        this.dbDir = dbDir;
        this.versions = versions;
        this.obsolete = obsolete;
        this.syncWal = syncWal;
    }

    /**
     * Takes the checkpoint into {@code target}, a directory that must not exist or be empty, telling {@code listener}
     * its files and the bytes it copies. Refused while another checkpoint into {@code target} runs in this process.
     */
    Result run(Path target, Listener listener) {
        Path out = target.toAbsolutePath().normalize();
        if (out.equals(dbDir)) {
            throw new InvalidArgumentException("checkpoint: the target is the database directory " + dbDir);
        }
        if (!RUNNING.add(out)) {
            throw new InvalidArgumentException("checkpoint: another checkpoint into " + out + " is running");
        }
        try {
            return runClaimed(out, listener);
        } finally {
            RUNNING.remove(out);
        }
    }

    private Result runClaimed(Path out, Listener listener) {
        boolean created;
        try {
            if (fs.exists(out)) {
                List<Path> entries;
                try {
                    entries = fs.list(out);
                } catch (java.nio.file.NotDirectoryException e) {
                    throw new InvalidArgumentException("checkpoint: " + out + " exists and is not a directory");
                }
                if (!entries.isEmpty()) {
                    throw new InvalidArgumentException("checkpoint: " + out + " is not empty");
                }
                created = false;
            } else {
                fs.createDirectories(out);
                created = true;
            }
        } catch (IOException e) {
            throw new BloomKvIOException("checkpoint: cannot create " + out, e);
        }
        List<Path> written = new ArrayList<>();
        AtomicLong logNumber = new AtomicLong();
        AtomicLong lastSequence = new AtomicLong();
        AutoCloseable[] pin = new AutoCloseable[1];
        Version v = versions.retainCurrent(n -> {
            logNumber.set(n);
            // Read with the Version, under the lock that serializes edits: read after it, the sequence could include
            // a write acknowledged after an edit this Version lacks (an ingestion's tables, a deleteFilesInRange).
            lastSequence.set(versions.lastSequence());
            pin[0] = obsolete.pinLogs(n);
        });
        try {
            long sequence = lastSequence.get();
            syncWal.run();
            long manifestNumber = versions.newFileNumber();
            VersionEdit snapshot = new VersionEdit()
                    .numLevels(v.numLevels())
                    .ttl(versions.ttl())
                    .logNumber(logNumber.get())
                    .nextFileNumber(manifestNumber + 1)
                    .lastSequence(sequence);
            int linked = 0;
            List<Long> toCopy = new ArrayList<>(); // the numbers of the tables that could not be linked
            for (int level = 0; level < v.numLevels(); level++) {
                for (FileMetaData f : v.files(level)) {
                    Path dst = FileNames.tableFile(out, f.number());
                    // Recorded once linked: a file already there (FileAlreadyExistsException) is not ours to remove.
                    if (tryLink(fs, FileNames.tableFile(dbDir, f.number()), dst)) {
                        written.add(dst);
                        linked++;
                    } else {
                        toCopy.add(f.number()); // nothing there; recorded when its copy begins
                    }
                    snapshot.addFile(level, f);
                }
            }
            int records = copyWals(out, logNumber.get(), manifestNumber, sequence, written);
            Path manifest = FileNames.manifestFile(out, manifestNumber);
            written.add(manifest);
            try (LogWriter log = new LogWriter(fs.newWritableFile(manifest))) {
                log.addRecord(snapshot.encode());
                log.sync();
            }
            long bytes = currentContent(manifestNumber).length;
            for (Path p : written) {
                bytes += fs.size(p);
            }
            long copyBytes = 0;
            for (long number : toCopy) {
                copyBytes += fs.size(FileNames.tableFile(dbDir, number));
            }
            listener.planned(written.size() + toCopy.size() + 1, bytes + copyBytes, copyBytes);
            for (long number : toCopy) {
                Path dst = FileNames.tableFile(out, number);
                written.add(dst);
                copy(fs, FileNames.tableFile(dbDir, number), dst, listener::copied);
            }
            writeCurrent(fs, out, manifestNumber, written);
            return new Result(linked, toCopy.size(), records, sequence);
        } catch (IOException | RuntimeException | Error e) {
            // An Error too (a listener cancelling with one, an OutOfMemoryError during the copy): no half checkpoint
            // stays behind; it is rethrown as is.
            cleanUp(out, written, created, e);
            if (e instanceof IOException io) {
                throw new BloomKvIOException("checkpoint into " + out + " failed", io);
            }
            if (e instanceof Error err) {
                throw err;
            }
            throw (RuntimeException) e;
        } finally {
            v.release();
            try {
                pin[0].close();
            } catch (Exception e) {
                throw new IllegalStateException("a WAL pin cannot fail to close", e);
            }
        }
    }

    /**
     * Copies the records of the WALs numbered in [{@code fromLog}, {@code belowLog}) whose write batch lies at or
     * below {@code sequence} into WALs of the same numbers in {@code out}, synced; empty ones are not written.
     */
    private int copyWals(Path out, long fromLog, long belowLog, long sequence, List<Path> written) throws IOException {
        TreeMap<Long, Path> logs = new TreeMap<>();
        for (Path p : fs.list(dbDir)) {
            FileNames.Parsed parsed = FileNames.parse(p.getFileName().toString());
            if (parsed != null
                    && parsed.kind() == FileNames.Kind.LOG
                    && parsed.number() >= fromLog
                    && parsed.number() < belowLog) {
                logs.put(parsed.number(), p);
            }
        }
        int records = 0;
        for (var e : logs.entrySet()) {
            Path dst = FileNames.logFile(out, e.getKey());
            LogWriter w = null;
            try (ReadableFile f = fs.newReadableFile(e.getValue());
                    LogReader reader = new LogReader(f)) {
                byte[] record;
                while ((record = reader.readRecord()) != null) {
                    if (LogStart.is(record)) {
                        continue; // the copies are synced whole: no log-start record to check them by
                    }
                    long first;
                    try {
                        first = new ByteReader(record).getFixed64();
                    } catch (ByteReader.MalformedInputException ex) {
                        throw new CorruptionException(
                                "WAL record shorter than a batch header", e.getValue(), reader.lastGoodOffset(), ex);
                    }
                    if (first > sequence) {
                        // Batches are appended in sequence order: the rest of this WAL, and every later
                        // WAL, is after the point.
                        break;
                    }
                    if (w == null) {
                        written.add(dst);
                        w = new LogWriter(fs.newWritableFile(dst));
                    }
                    w.addRecord(record);
                    records++;
                }
                if (w != null) {
                    w.sync();
                }
            } finally {
                if (w != null) {
                    w.close();
                }
            }
        }
        return records;
    }

    /**
     * Hard-links {@code src} to {@code dst}, or copies it (synced) where the file system cannot link. Returns
     * true when linked.
     */
    static boolean linkOrCopy(FileSystem fs, Path src, Path dst) throws IOException {
        if (tryLink(fs, src, dst)) {
            return true;
        }
        copy(fs, src, dst);
        return false;
    }

    /**
     * Hard-links {@code src} to {@code dst}; false, with nothing left at {@code dst}, where the file system cannot
     * link (another device, no links). A {@code dst} that exists already is an error, not a failed link.
     */
    static boolean tryLink(FileSystem fs, Path src, Path dst) throws IOException {
        try {
            fs.link(src, dst);
            return true;
        } catch (java.nio.file.FileAlreadyExistsException e) {
            throw e;
        } catch (IOException e) {
            if (fs.exists(dst)) {
                fs.delete(dst);
            }
            return false;
        }
    }

    /** Copies {@code src} to {@code dst} (created or truncated) and syncs it. */
    static void copy(FileSystem fs, Path src, Path dst) throws IOException {
        copy(fs, src, dst, n -> {});
    }

    /** {@link #copy(FileSystem, Path, Path)}, telling {@code written} the bytes of each buffer appended. */
    private static void copy(FileSystem fs, Path src, Path dst, LongConsumer written) throws IOException {
        try (ReadableFile in = fs.newReadableFile(src);
                WritableFile w = fs.newWritableFile(dst)) {
            long size = in.size();
            byte[] buf = new byte[(int) Math.min(COPY_BUFFER, Math.max(1, size))];
            long pos = 0;
            while (pos < size) {
                int n = (int) Math.min(buf.length, size - pos);
                in.readFully(pos, buf, 0, n);
                w.append(buf, 0, n);
                pos += n;
                written.accept(n);
            }
            w.sync();
        }
    }

    /**
     * Points CURRENT of {@code dir} at MANIFEST {@code manifestNumber}: a synced temp file renamed over CURRENT,
     * then a directory sync (the same steps as VersionSet). The commit point of a checkpoint or a restore.
     */
    static void writeCurrent(FileSystem fs, Path dir, long manifestNumber, List<Path> written) throws IOException {
        Path tmp = FileNames.tempFile(dir, manifestNumber);
        written.add(tmp);
        byte[] content = currentContent(manifestNumber);
        try (WritableFile f = fs.newWritableFile(tmp)) {
            f.append(content, 0, content.length);
            f.sync();
        }
        fs.syncDirectory(dir);
        Path current = FileNames.currentFile(dir);
        written.add(current);
        fs.rename(tmp, current);
        fs.syncDirectory(dir);
    }

    /** The bytes of a CURRENT file pointing at MANIFEST {@code manifestNumber}. */
    private static byte[] currentContent(long manifestNumber) {
        return (FileNames.MANIFEST_PREFIX + String.format("%06d", manifestNumber) + "\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** Removes what a failed checkpoint wrote (best effort; problems are added to {@code failure}). */
    private void cleanUp(Path out, List<Path> written, boolean created, Throwable failure) {
        // CURRENT first: without it the directory is never taken for a database.
        for (int i = written.size() - 1; i >= 0; i--) {
            try {
                fs.delete(written.get(i));
            } catch (IOException e) {
                failure.addSuppressed(e);
            }
        }
        if (created) {
            try {
                if (fs.list(out).isEmpty()) {
                    fs.delete(out);
                }
            } catch (IOException e) {
                failure.addSuppressed(e);
            }
        }
    }
}

package io.bloomkv.engine.internal.version;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.compaction.CompactionPicker;
import io.bloomkv.engine.internal.compaction.LevelView;
import io.bloomkv.engine.internal.record.LogReader;
import io.bloomkv.engine.internal.record.LogWriter;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.util.ByteReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The history of the live table set: the current {@link Version}, the counters (next file number,
 * log number, last sequence), and the MANIFEST that records every change as a {@link VersionEdit}.
 *
 * <p>{@link #logAndApply} is serialized: it appends the edit to the MANIFEST, fsyncs it, and only
 * then installs the new Version. The first call after {@link #create()} or {@link #recover()}, and
 * the first after a MANIFEST write failed, starts a new MANIFEST that begins with a snapshot of the
 * whole state, and switches CURRENT to it atomically: write {@code NNNNNN.dbtmp}, fsync, rename over
 * CURRENT, fsync the directory. See engine/FORMAT.md, "MANIFEST and VersionEdit".
 */
public final class VersionSet implements AutoCloseable {
    private final FileSystem fs;
    private final Path dir;
    private final Options options;
    private final TableCache tables;
    private final Runnable onVersionDropped;

    private final Object liveLock = new Object();
    private final Set<Version> live = Collections.newSetFromMap(new IdentityHashMap<>());
    /**
     * {@code live.size()}, written under liveLock, read without it: statistics readers (a metrics reporter) never
     * wait on the lock a get can take when it drops the last reference to an old Version.
     */
    private volatile int liveCount;

    private volatile Version current;
    private List<List<FileMetaData>> currentLevels;
    private int numLevels;
    /** Whether values carry a write time (Options.ttl): fixed at create, recorded in every MANIFEST snapshot. */
    private boolean ttl;

    private byte[][] compactPointers;
    private final AtomicLong nextFileNumber = new AtomicLong(1);
    private volatile long logNumber;
    private volatile long lastSequence;
    private volatile long manifestNumber;
    private LogWriter manifestLog;
    private boolean closed;

    /**
     * @param onVersionDropped run (on the releasing thread) each time a Version's last reference is
     *     dropped, so the owner can delete files no live Version names
     */
    public VersionSet(FileSystem fs, Path dir, Options options, TableCache tables, Runnable onVersionDropped) {
        this.fs = fs;
        this.dir = dir;
        this.options = options;
        this.tables = tables;
        this.onVersionDropped = onVersionDropped;
    }

    /** Starts a new, empty database: writes MANIFEST and CURRENT. */
    public synchronized void create() throws IOException {
        numLevels = options.numLevels();
        ttl = options.ttl() != null;
        compactPointers = new byte[numLevels][];
        currentLevels = emptyLevels(numLevels);
        installNew(currentLevels);
        logAndApply(new VersionEdit());
    }

    /**
     * Rebuilds the state CURRENT's MANIFEST describes and opens every live table. A damaged
     * MANIFEST, CURRENT or missing table file is a {@link CorruptionException}; a torn last record
     * of the MANIFEST (an edit that was never acknowledged) is dropped.
     */
    public synchronized void recover() throws IOException {
        Path currentFile = FileNames.currentFile(dir);
        String name;
        try (ReadableFile f = fs.newReadableFile(currentFile)) {
            long size = f.size();
            if (size <= 1 || size > 4096) {
                throw new CorruptionException("CURRENT has a bad size " + size, currentFile, 0);
            }
            byte[] b = new byte[(int) size];
            f.readFully(0, b, 0, b.length);
            name = new String(b, StandardCharsets.UTF_8);
        }
        if (!name.endsWith("\n")) {
            throw new CorruptionException("CURRENT does not end with a newline", currentFile, 0);
        }
        name = name.substring(0, name.length() - 1);
        FileNames.Parsed parsed = FileNames.parse(name);
        if (parsed == null || parsed.kind() != FileNames.Kind.MANIFEST) {
            throw new CorruptionException("CURRENT names no MANIFEST: '" + name + "'", currentFile, 0);
        }
        Path manifest = FileNames.manifestFile(dir, parsed.number());
        Long log = null;
        Long next = null;
        Long last = null;
        Integer levels = null;
        boolean ttlDb = false;
        List<VersionEdit> edits = new ArrayList<>();
        try (ReadableFile f = fs.newReadableFile(manifest);
                LogReader reader = new LogReader(f)) {
            byte[] record;
            long index = 0;
            while ((record = reader.readRecord()) != null) {
                VersionEdit e;
                try {
                    e = VersionEdit.decode(record);
                } catch (ByteReader.MalformedInputException ex) {
                    throw new CorruptionException(
                            "MANIFEST record " + index + " does not parse: " + ex.getMessage(), manifest, -1, ex);
                }
                edits.add(e);
                index++;
                if (e.logNumber() != null) {
                    log = e.logNumber();
                }
                if (e.nextFileNumber() != null) {
                    next = e.nextFileNumber();
                }
                if (e.lastSequence() != null) {
                    last = e.lastSequence();
                }
                if (e.numLevels() != null) {
                    levels = e.numLevels();
                }
                ttlDb |= e.ttl();
            }
        } catch (NoSuchFileException e) {
            throw new CorruptionException("CURRENT names a MANIFEST that does not exist", manifest, -1, e);
        }
        if (log == null || next == null || last == null || levels == null) {
            throw new CorruptionException(
                    "MANIFEST lacks its counters (log " + log + ", next file " + next + ", last sequence " + last
                            + ", levels " + levels + ")",
                    manifest,
                    -1);
        }
        if (levels < 1) {
            // Found by ManifestFuzzTest: 0 levels made replay index an empty level list.
            throw new CorruptionException("MANIFEST declares " + levels + " levels", manifest, -1);
        }
        if (ttlDb != (options.ttl() != null)) {
            // Before any WAL is replayed: a TTL value read as a plain one (or the reverse) would be wrong.
            throw new io.bloomkv.engine.TtlMismatchException(dir, ttlDb);
        }
        ttl = ttlDb;
        numLevels = levels;
        compactPointers = new byte[numLevels][];
        List<List<FileMetaData>> state = emptyLevels(numLevels);
        for (VersionEdit e : edits) {
            try {
                state = apply(state, e);
            } catch (IllegalStateException ex) {
                throw new CorruptionException("MANIFEST edits are inconsistent: " + ex.getMessage(), manifest, -1, ex);
            }
        }
        for (List<FileMetaData> level : state) {
            for (FileMetaData f : level) {
                Path p = FileNames.tableFile(dir, f.number());
                if (!fs.exists(p)) {
                    throw new CorruptionException("live table file is missing", p, -1);
                }
                tables.open(f.number());
            }
        }
        logNumber = log;
        lastSequence = last;
        manifestNumber = parsed.number();
        nextFileNumber.set(Math.max(next, parsed.number() + 1));
        currentLevels = state;
        installNew(state);
    }

    private static List<List<FileMetaData>> emptyLevels(int n) {
        List<List<FileMetaData>> levels = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            levels.add(List.of());
        }
        return levels;
    }

    /** The levels after {@code edit}; level 0 newest first, deeper levels sorted and checked disjoint. */
    private List<List<FileMetaData>> apply(List<List<FileMetaData>> base, VersionEdit edit) {
        List<List<FileMetaData>> out = new ArrayList<>(base.size());
        for (List<FileMetaData> level : base) {
            out.add(new ArrayList<>(level));
        }
        for (VersionEdit.DeletedFile d : edit.deletedFiles()) {
            checkLevel(d.level(), out.size());
            if (!out.get(d.level()).removeIf(f -> f.number() == d.number())) {
                throw new IllegalStateException(
                        "edit deletes file " + d.number() + " that level " + d.level() + " does not hold");
            }
        }
        for (VersionEdit.LevelFile lf : edit.newFiles()) {
            checkLevel(lf.level(), out.size());
            out.get(lf.level()).add(lf.file());
        }
        for (VersionEdit.CompactPointer p : edit.compactPointers()) {
            checkLevel(p.level(), out.size());
            compactPointers[p.level()] = p.key();
        }
        out.get(0).sort((a, b) -> Long.compare(b.number(), a.number()));
        for (int level = 1; level < out.size(); level++) {
            List<FileMetaData> files = out.get(level);
            files.sort((a, b) -> InternalKey.compare(a.smallest(), b.smallest()));
            for (int i = 1; i < files.size(); i++) {
                if (Arrays.compareUnsigned(
                                files.get(i - 1).largestUserKey(), files.get(i).smallestUserKey())
                        >= 0) {
                    throw new IllegalStateException(
                            "tables " + files.get(i - 1) + " and " + files.get(i) + " overlap in level " + level);
                }
            }
        }
        List<List<FileMetaData>> frozen = new ArrayList<>(out.size());
        for (List<FileMetaData> level : out) {
            frozen.add(Collections.unmodifiableList(level));
        }
        return frozen;
    }

    private static void checkLevel(int level, int numLevels) {
        if (level < 0 || level >= numLevels) {
            throw new IllegalStateException("level " + level + " out of range [0, " + numLevels + ")");
        }
    }

    private void installNew(List<List<FileMetaData>> levels) {
        LevelView view = LevelView.of(levels);
        LevelTargets targets = CompactionPicker.targets(view, options);
        CompactionPicker.Score score = CompactionPicker.score(view, options, targets);
        // Filter residency first: the new Version holds exactly the copies pinned for it (from its creation), and gets
        // still reading through the live Versions may read the newly pinned copies too (they read the table's field),
        // so each of those holds them until its release (PartitionedFilterReader.Pinned). A copy unpinned here stays
        // held by the Versions that had it, and is freed with the last of them.
        List<TableReader> pinned = tables.planFilterResidency(levels);
        Version v = new Version(this, levels, tables, targets, score.level(), score.score(), logNumber);
        synchronized (liveLock) {
            for (Version u : live) {
                for (TableReader r : pinned) {
                    u.holdPinnedFilter(r);
                }
            }
            live.add(v);
            liveCount = live.size();
        }
        Version old = current;
        current = v;
        if (old != null) {
            old.release();
        }
        if (!tables.residencyComplete()) {
            // The copies this pass unpinned were still held by the old current Version, so their room may not have
            // been free for the copies it chose to pin instead; released now (unless gets still read through it), it
            // is: pin those now, and let every live Version (the new one included) hold them.
            List<TableReader> late = tables.planFilterResidency(levels);
            if (!late.isEmpty()) {
                synchronized (liveLock) {
                    for (Version u : live) {
                        for (TableReader r : late) {
                            u.holdPinnedFilter(r);
                        }
                    }
                }
            }
        }
    }

    /**
     * Records {@code edit} in the MANIFEST (fsynced) and installs the Version it produces. The tables
     * it adds must already be open in the {@link TableCache}. Fills in the edit's next file number
     * and last sequence. On an IOException nothing is installed and the next call starts a new MANIFEST.
     */
    public synchronized void logAndApply(VersionEdit edit) throws IOException {
        if (closed) {
            throw new io.bloomkv.engine.DbClosedException("database is closed");
        }
        if (edit.logNumber() != null && edit.logNumber() < logNumber) {
            throw new IllegalStateException("log number going back from " + logNumber + " to " + edit.logNumber());
        }
        byte[][] savedPointers = compactPointers.clone();
        List<List<FileMetaData>> next;
        try {
            next = apply(currentLevels, edit);
        } catch (IllegalStateException e) {
            compactPointers = savedPointers;
            throw e;
        }
        boolean newManifest = manifestLog == null;
        long newNumber = 0;
        LogWriter log = manifestLog;
        boolean currentMayNameNew = false;
        try {
            if (newManifest) {
                newNumber = newFileNumber();
                log = new LogWriter(fs.newWritableFile(FileNames.manifestFile(dir, newNumber)));
                VersionEdit snapshot = new VersionEdit()
                        .numLevels(numLevels)
                        .ttl(ttl)
                        .logNumber(logNumber)
                        .nextFileNumber(nextFileNumber.get())
                        .lastSequence(lastSequence);
                for (int level = 0; level < savedPointers.length; level++) {
                    if (savedPointers[level] != null) {
                        snapshot.compactPointer(level, savedPointers[level]);
                    }
                }
                for (int level = 0; level < currentLevels.size(); level++) {
                    for (FileMetaData f : currentLevels.get(level)) {
                        snapshot.addFile(level, f);
                    }
                }
                log.addRecord(snapshot.encode());
            }
            edit.nextFileNumber(nextFileNumber.get());
            edit.lastSequence(lastSequence);
            log.addRecord(edit.encode());
            log.sync();
            if (newManifest) {
                Path tmp = writeCurrentTemp(newNumber);
                // From the rename on, CURRENT may name the new MANIFEST (the rename may be durable though
                // the directory sync failed): it must not be deleted then.
                currentMayNameNew = true;
                fs.rename(tmp, FileNames.currentFile(dir));
                fs.syncDirectory(dir);
            }
        } catch (IOException | RuntimeException e) {
            compactPointers = savedPointers;
            closeQuietly(log);
            manifestLog = null;
            if (newManifest && newNumber != 0 && !currentMayNameNew) {
                try {
                    fs.delete(FileNames.manifestFile(dir, newNumber));
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        if (newManifest) {
            closeQuietly(manifestLog);
            manifestLog = log;
            manifestNumber = newNumber;
        }
        if (edit.logNumber() != null) {
            logNumber = edit.logNumber();
        }
        currentLevels = next;
        installNew(next);
    }

    /**
     * After a failed {@link #logAndApply}: starts the new MANIFEST that the next edit would start (a snapshot of the
     * whole current state, then an empty edit) and points CURRENT at it, so that the state on disk is again exactly
     * the installed one. The failed MANIFEST may end in a partial record, or in a whole edit whose sync failed, naming
     * tables this VersionSet never installed (or no longer naming tables it kept); until CURRENT names the new one no
     * such file may be deleted (ObsoleteFiles). Does nothing when the MANIFEST is healthy. Returns whether it wrote
     * one.
     */
    public synchronized boolean rollManifestAfterFailure() throws IOException {
        if (manifestLog != null) {
            return false;
        }
        logAndApply(new VersionEdit());
        return true;
    }

    /** Writes and fsyncs the temp file that will replace CURRENT, naming MANIFEST {@code manifest}. */
    private Path writeCurrentTemp(long manifest) throws IOException {
        Path tmp = FileNames.tempFile(dir, manifest);
        byte[] content =
                (FileNames.MANIFEST_PREFIX + String.format("%06d", manifest) + "\n").getBytes(StandardCharsets.UTF_8);
        try (WritableFile f = fs.newWritableFile(tmp)) {
            f.append(content, 0, content.length);
            f.sync();
        }
        return tmp;
    }

    private static void closeQuietly(LogWriter w) {
        if (w != null) {
            try {
                w.close();
            } catch (IOException | RuntimeException ignored) {
                // The MANIFEST is abandoned; a new one replaces it.
            }
        }
    }

    void versionDropped(Version v) {
        synchronized (liveLock) {
            live.remove(v);
            liveCount = live.size();
        }
        onVersionDropped.run();
    }

    /** The current Version, not retained: retain it (tryRetain in a loop) to read through it. */
    public Version current() {
        return current;
    }

    /** The current Version with a reference the caller must release. */
    public Version retainCurrent() {
        while (true) {
            Version v = current;
            if (v == null) {
                throw new io.bloomkv.engine.DbClosedException("database is closed");
            }
            if (v.tryRetain()) {
                return v;
            }
        }
    }

    /**
     * The current Version, retained for the caller, after {@code atLogNumber} was given the log number that
     * goes with it: no edit can come in between (edits are serialized on this object), so the WALs at or above
     * that number hold every write the Version's tables lack. Used by checkpoints to pin those WALs.
     */
    public synchronized Version retainCurrent(java.util.function.LongConsumer atLogNumber) {
        atLogNumber.accept(logNumber);
        return retainCurrent();
    }

    /** Numbers of the tables named by any live Version. */
    public Set<Long> liveFiles() {
        Set<Long> out = new HashSet<>();
        synchronized (liveLock) {
            for (Version v : live) {
                v.addLiveFiles(out);
            }
        }
        return out;
    }

    /** Live Versions now, read without a lock. */
    public int liveVersionCount() {
        return liveCount;
    }

    public long newFileNumber() {
        return nextFileNumber.getAndIncrement();
    }

    /** Makes sure later numbers are above {@code n}. */
    public void markFileNumberUsed(long n) {
        nextFileNumber.accumulateAndGet(n + 1, Math::max);
    }

    /** WAL files numbered below this hold nothing that is not in a table. */
    public long logNumber() {
        return logNumber;
    }

    public long manifestNumber() {
        return manifestNumber;
    }

    public long lastSequence() {
        return lastSequence;
    }

    public void setLastSequence(long s) {
        if (s < lastSequence) {
            throw new IllegalStateException("last sequence going back from " + lastSequence + " to " + s);
        }
        lastSequence = s;
    }

    public int numLevels() {
        return numLevels;
    }

    /** True for a TTL database (Options.ttl): its MANIFEST snapshots carry the TTL flag. */
    public boolean ttl() {
        return ttl;
    }

    /** Where the next compaction of {@code level} starts (an internal key), or null. */
    public synchronized byte[] compactPointer(int level) {
        return compactPointers[level];
    }

    public TableCache tableCache() {
        return tables;
    }

    /** Closes the MANIFEST and drops the reference of the current Version. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        Version v = current;
        current = null;
        try {
            if (manifestLog != null) {
                manifestLog.close();
                manifestLog = null;
            }
        } finally {
            if (v != null) {
                v.release();
            }
        }
    }
}

package io.bloomkv.engine;

/**
 * Options of {@link Db#ingest} (RocksDB's {@code IngestExternalFileOptions}). Immutable; each setter returns a
 * modified copy: {@code IngestOptions.defaults().moveFiles(true)}.
 */
public final class IngestOptions {
    private final boolean moveFiles;
    private final boolean allowBlockingFlush;

    private IngestOptions(boolean moveFiles, boolean allowBlockingFlush) {
        this.moveFiles = moveFiles;
        this.allowBlockingFlush = allowBlockingFlush;
    }

    /** Copy the files, and flush memtables that overlap them (RocksDB's defaults). */
    public static IngestOptions defaults() {
        return new IngestOptions(false, true);
    }

    /**
     * True: hard-link each file into the database (no copy) and delete the original name once the ingestion is
     * recorded (RocksDB's {@code move_files}); where the file system cannot link (another device), it is copied.
     * False (default): copy, leaving the originals. A file that overlaps existing keys is always rewritten with its
     * sequence number (see {@link Db#ingest}), in both modes.
     */
    public IngestOptions moveFiles(boolean move) {
        return new IngestOptions(move, allowBlockingFlush);
    }

    public boolean moveFiles() {
        return moveFiles;
    }

    /**
     * True (default): when a memtable holds keys in a file's range, flush the memtables first (writes wait meanwhile).
     * False: refuse such an ingestion with an {@link InvalidArgumentException}, leaving the database unchanged
     * (RocksDB's {@code allow_blocking_flush}).
     */
    public IngestOptions allowBlockingFlush(boolean allow) {
        return new IngestOptions(moveFiles, allow);
    }

    public boolean allowBlockingFlush() {
        return allowBlockingFlush;
    }

    @Override
    public String toString() {
        return "IngestOptions{moveFiles=" + moveFiles + ", allowBlockingFlush=" + allowBlockingFlush + "}";
    }
}

package io.bloomkv.engine.internal.table;

/** How a table's file is read: {@code pread}, a memory mapping, or O_DIRECT (see {@link TableReader#open}). */
public enum TableReadMode {
    /** Positional reads through the page cache ({@code FileSystem.newReadableFile}). */
    PREAD,
    /** Copies out of a read-only mapping ({@code FileSystem.newMappedReadableFile}); {@code pread} where it cannot map. */
    MMAP,
    /** O_DIRECT reads, bypassing the page cache ({@code FileSystem.newDirectReadableFile}). */
    DIRECT;

    /** The mode of {@code Options.useDirectReads} and {@code useMmapReads}: direct reads win, as they bypass the page cache. */
    public static TableReadMode of(boolean directReads, boolean mmapReads) {
        return directReads ? DIRECT : mmapReads ? MMAP : PREAD;
    }
}

package io.bloomkv.engine.inspect;

/** A byte range of a file: a block of {@code size} bytes at {@code offset}, its 5-byte trailer after it. */
public record Region(long offset, long size) {
    /** The first byte after the block and its trailer. */
    public long end() {
        return offset + size + TableDump.BLOCK_TRAILER_SIZE;
    }
}

package io.bloomkv.engine.internal.record;

/**
 * Constants of the write-ahead log format (engine/FORMAT.md, "Write-ahead log"): the file is a
 * sequence of 32 KiB blocks; each record is stored as one or more fragments, each with a 7-byte
 * header {@code masked_crc32c:u32le | length:u16le | type:u8}; a block tail shorter than a header
 * is zero-filled.
 */
final class LogFormat {
    static final int BLOCK_SIZE = 32 * 1024;
    static final int HEADER_SIZE = 7;

    /** Reserved: zero-filled (never written as a fragment type). */
    static final int ZERO_TYPE = 0;
    /** The whole record in one fragment. */
    static final int FULL = 1;

    static final int FIRST = 2;
    static final int MIDDLE = 3;
    static final int LAST = 4;

    private LogFormat() {}

    static boolean isFragmentType(int type) {
        return type >= FULL && type <= LAST;
    }
}

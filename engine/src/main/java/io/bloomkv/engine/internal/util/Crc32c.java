package io.bloomkv.engine.internal.util;

import java.util.zip.CRC32C;

/**
 * CRC32C checksums as stored on disk (engine/FORMAT.md, "Checksums"): stored values are masked as in
 * LevelDB, {@code ((crc >>> 15) | (crc << 17)) + 0xa282ead8}, so that the checksum of bytes that
 * themselves contain checksums is not degenerate.
 */
public final class Crc32c {
    static final int MASK_DELTA = 0xa282ead8;

    private Crc32c() {}

    public static int mask(int crc) {
        return ((crc >>> 15) | (crc << 17)) + MASK_DELTA;
    }

    public static int unmask(int masked) {
        int rot = masked - MASK_DELTA;
        return (rot >>> 17) | (rot << 15);
    }

    /** The unmasked CRC32C of {@code b[off..off+len)}. */
    public static int crc32c(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    /** The masked CRC32C of {@code b[off..off+len)}. */
    public static int maskedCrc32c(byte[] b, int off, int len) {
        return mask(crc32c(b, off, len));
    }
}

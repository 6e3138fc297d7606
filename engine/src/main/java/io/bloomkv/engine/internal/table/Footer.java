package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.util.Coding;
import io.bloomkv.engine.internal.util.Crc32c;
import java.nio.file.Path;

/**
 * The fixed-size footer at the end of every table file (engine/FORMAT.md, "Footer"): handles of the
 * filter, index and properties blocks, the format version, a checksum and the magic number. A
 * filter handle of size 0 means the table has no filter.
 */
public record Footer(BlockHandle filter, BlockHandle index, BlockHandle properties, int formatVersion) {
    static final int OFF_FILTER = 0;
    static final int OFF_INDEX = 16;
    static final int OFF_PROPERTIES = 32;
    static final int OFF_VERSION = 48;
    static final int OFF_CRC = 52;
    static final int OFF_MAGIC = 56;

    public boolean hasFilter() {
        return filter.size() > 0;
    }

    byte[] encode() {
        byte[] b = new byte[TableFormat.FOOTER_SIZE];
        putHandle(b, OFF_FILTER, filter);
        putHandle(b, OFF_INDEX, index);
        putHandle(b, OFF_PROPERTIES, properties);
        Coding.putFixed32(b, OFF_VERSION, formatVersion);
        Coding.putFixed32(b, OFF_CRC, Crc32c.maskedCrc32c(b, 0, OFF_CRC));
        Coding.putFixed64(b, OFF_MAGIC, TableFormat.MAGIC);
        return b;
    }

    /**
     * Decodes and checks the footer read from the last {@link TableFormat#FOOTER_SIZE} bytes of a file
     * of {@code fileSize} bytes.
     */
    static Footer decode(byte[] b, Path file, long fileSize) {
        long at = fileSize - TableFormat.FOOTER_SIZE;
        long magic = Coding.getFixed64(b, OFF_MAGIC);
        if (magic != TableFormat.MAGIC) {
            throw new CorruptionException(
                    "not a bloomkv table: bad magic number 0x" + Long.toHexString(magic), file, at + OFF_MAGIC);
        }
        if (Coding.getFixed32(b, OFF_CRC) != Crc32c.maskedCrc32c(b, 0, OFF_CRC)) {
            throw new CorruptionException("footer checksum mismatch", file, at);
        }
        int version = Coding.getFixed32(b, OFF_VERSION);
        if (version != TableFormat.FORMAT_VERSION) {
            throw new CorruptionException("unsupported table format version " + version, file, at + OFF_VERSION);
        }
        BlockHandle filter = getHandle(b, OFF_FILTER, file, at, at);
        BlockHandle index = getHandle(b, OFF_INDEX, file, at, at);
        BlockHandle props = getHandle(b, OFF_PROPERTIES, file, at, at);
        return new Footer(filter, index, props, version);
    }

    private static void putHandle(byte[] b, int off, BlockHandle h) {
        Coding.putFixed64(b, off, h.offset());
        Coding.putFixed64(b, off + 8, h.size());
    }

    private static BlockHandle getHandle(byte[] b, int off, Path file, long footerAt, long limit) {
        long o = Coding.getFixed64(b, off);
        long s = Coding.getFixed64(b, off + 8);
        if (o < 0 || s < 0 || s > limit || o > limit - s - TableFormat.BLOCK_TRAILER_SIZE) {
            throw new CorruptionException(
                    "footer block handle " + o + "+" + s + " outside the file", file, footerAt + off);
        }
        return new BlockHandle(o, s);
    }
}

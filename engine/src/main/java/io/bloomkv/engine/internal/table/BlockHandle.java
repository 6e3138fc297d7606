package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.internal.util.Coding;
import java.io.ByteArrayOutputStream;

/**
 * Where a block lies in a table file: {@code offset} of its first byte and {@code size} of its
 * contents, not counting the {@link TableFormat#BLOCK_TRAILER_SIZE}-byte trailer that follows. In an
 * index entry it is encoded as {@code varint64 offset | varint64 size} (engine/FORMAT.md).
 */
public record BlockHandle(long offset, long size) {
    public BlockHandle {
        if (offset < 0 || size < 0) {
            throw new IllegalArgumentException("bad block handle " + offset + "+" + size);
        }
    }

    /** Offset just past the block's trailer. */
    public long end() {
        return offset + size + TableFormat.BLOCK_TRAILER_SIZE;
    }

    byte[] encode() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(20);
        Coding.putVarint64(out, offset);
        Coding.putVarint64(out, size);
        return out.toByteArray();
    }

    /** Decodes an index value, or returns null when it is not exactly two valid varints. */
    static BlockHandle decode(byte[] b) {
        return decode(b, 0, b.length);
    }

    /** Decodes the index value {@code b[off, off + len)}, or returns null when it is not exactly two valid varints. */
    static BlockHandle decode(byte[] b, int from, int len) {
        Coding.Reader r = new Coding.Reader(b, from, from + len);
        long off = r.varint64();
        long size = r.varint64();
        if (!r.ok || r.pos != from + len || off < 0 || size < 0) {
            return null;
        }
        return new BlockHandle(off, size);
    }

    @Override
    public String toString() {
        return offset + "+" + size;
    }
}

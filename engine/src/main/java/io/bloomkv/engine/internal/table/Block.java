package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.util.Coding;
import java.nio.file.Path;
import java.util.Comparator;

/**
 * An immutable, verified block (engine/FORMAT.md, "Blocks"), searched with
 * {@link #iterator(Comparator)}. Thread-safe: iterators are independent. Malformed contents raise
 * {@link CorruptionException} naming the file and the block's offset.
 */
public final class Block {
    private final byte[] data;
    private final int length;
    private final int restartsOffset;
    private final int restartCount;
    private final Path file;
    private final long offset;

    /** Wraps {@code contents} (not copied) of the block at {@code offset} in {@code file}, checking its restart array. */
    public Block(byte[] contents, Path file, long offset) {
        this(contents, contents.length, file, offset);
    }

    /**
     * Wraps the first {@code length} bytes of {@code contents} (not copied; bytes past {@code length},
     * such as the block trailer, are ignored), checking its restart array.
     */
    Block(byte[] contents, int length, Path file, long offset) {
        if (length < 0 || length > contents.length) {
            throw new IllegalArgumentException("block length " + length + " outside an array of " + contents.length);
        }
        this.data = contents;
        this.length = length;
        this.file = file;
        this.offset = offset;
        if (length < 4) {
            throw corruption("block of " + length + " bytes is too short", -1);
        }
        int n = Coding.getFixed32(contents, length - 4);
        if (n < 0 || n > (length - 4) / 4) {
            throw corruption("restart count " + Integer.toUnsignedString(n) + " does not fit the block", length - 4);
        }
        this.restartCount = n;
        this.restartsOffset = length - 4 - 4 * n;
        if (n == 0 && restartsOffset > 0) {
            throw corruption("block with entries but no restart point", length - 4);
        }
        int prev = -1;
        for (int i = 0; i < n; i++) {
            int r = Coding.getFixed32(contents, restartsOffset + 4 * i);
            if (r < 0 || r >= Math.max(restartsOffset, 1) || r <= prev) {
                throw corruption("restart point " + i + " = " + r + " out of order or range", restartsOffset + 4 * i);
            }
            prev = r;
        }
    }

    /** Bytes of the block's contents (without its trailer). */
    public int size() {
        return length;
    }

    public int restartCount() {
        return restartCount;
    }

    /** Offset of this block in its file. */
    public long offset() {
        return offset;
    }

    public Path file() {
        return file;
    }

    /** An iterator over the block's entries, whose keys are ordered by {@code comparator}. */
    public BlockIterator iterator(Comparator<byte[]> comparator) {
        return new BlockIterator(this, comparator);
    }

    byte[] data() {
        return data;
    }

    int restartsOffset() {
        return restartsOffset;
    }

    int restartPoint(int i) {
        return Coding.getFixed32(data, restartsOffset + 4 * i);
    }

    CorruptionException corruption(String what, int posInBlock) {
        String where = posInBlock >= 0 ? " at byte " + posInBlock + " of the block" : "";
        return new CorruptionException("corrupt block: " + what + where, file, offset);
    }
}

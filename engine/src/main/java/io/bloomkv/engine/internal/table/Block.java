package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.util.Coding;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
    /**
     * The {@link BlockCache} key this block is cached under (with {@link #offset}): the view and the table file number,
     * 0 while it was never cached. Set once, by {@link #claimCacheKey}, before the block is published in a cache slot
     * (a release store the readers' acquire loads pair with), and never changed after: a block offered under another
     * key is cached as a copy ({@link #withOffset}). Kept here so that a cache hit goes from the slot straight to the
     * block, with no entry object between them.
     */
    private volatile long cacheOwner;

    private long cacheFile;

    private static final VarHandle CACHE_OWNER;

    static {
        try {
            CACHE_OWNER = MethodHandles.lookup().findVarHandle(Block.class, "cacheOwner", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

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

    /** This block's parsed contents at another {@code offset} (not cache-keyed): shares the array, checks nothing again. */
    private Block(Block b, long offset) {
        this.data = b.data;
        this.length = b.length;
        this.restartsOffset = b.restartsOffset;
        this.restartCount = b.restartCount;
        this.file = b.file;
        this.offset = offset;
    }

    /** A block of the same contents at file offset {@code offset}, not yet cached under any key. */
    Block withOffset(long offset) {
        return new Block(this, offset);
    }

    /**
     * Keys this block for {@link BlockCache} view {@code owner} (never 0) and table {@code fileNumber} (its offset is
     * {@link #offset()}): true when it now carries that key (it was unkeyed, or carried it already), false when it
     * carries another one (the caller then caches a {@link #withOffset copy}). Called under the cache shard's monitor,
     * before the block is published in a slot.
     */
    boolean claimCacheKey(long owner, long fileNumber) {
        if (CACHE_OWNER.compareAndSet(this, 0L, owner)) {
            cacheFile = fileNumber;
            return true;
        }
        return isCachedAs(owner, fileNumber, offset);
    }

    /** True when this block carries the cache key (owner, fileNumber, offset). */
    boolean isCachedAs(long owner, long fileNumber, long offset) {
        return this.offset == offset && cacheFile == fileNumber && cacheOwner == owner;
    }

    /** The cache view this block is keyed for (0: never cached). */
    long cacheOwner() {
        return cacheOwner;
    }

    /** The table file number this block is keyed for in the cache (meaningful when {@link #cacheOwner()} is not 0). */
    long cacheFile() {
        return cacheFile;
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

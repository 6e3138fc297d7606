package io.bloomkv.bloom;

import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;

/**
 * What all filter kinds share: the off-heap body, the counts, the lifecycle and the serialized form. A
 * subclass only says where a hash's probes go ({@link #addHash}, {@link #probe}).
 */
abstract class OffHeapFilter implements Filter {
    private static final int COPY_CHUNK = 64 * 1024;

    final OffHeapRegion body;
    final int k;
    final long bits;
    private final long expectedKeys;
    private long keyCount;
    private final AtomicBoolean closed = new AtomicBoolean();

    OffHeapFilter(OffHeapRegion body, int k, long bits, long expectedKeys, long keyCount) {
        this(body, k, bits, expectedKeys, keyCount, -1);
    }

    /** As above for a kind whose body length is not a function of (k, m) alone: {@code needed} bytes (-1: from k, m). */
    OffHeapFilter(OffHeapRegion body, int k, long bits, long expectedKeys, long keyCount, long neededBody) {
        long needed = neededBody >= 0 ? neededBody : FilterHeader.bodyLength(kind(), k, bits);
        if (body.length() != needed) {
            throw new IllegalArgumentException(kind() + " m=" + bits + " k=" + k + " needs " + needed
                    + " body bytes, region has " + body.length());
        }
        if (expectedKeys < 0 || keyCount < 0) {
            throw new IllegalArgumentException("negative key counts: expected " + expectedKeys + ", added " + keyCount);
        }
        this.body = body;
        this.k = k;
        this.bits = bits;
        this.expectedKeys = expectedKeys;
        this.keyCount = keyCount;
    }

    /** Set by {@link Filters#build}: the filter is complete and {@code add} throws. */
    private volatile boolean immutable;

    final void makeImmutable() {
        immutable = true;
    }

    /** The RIBBON header fields (seed, upper blocks); 0 for the Bloom kinds. */
    int headerSeed() {
        return 0;
    }

    long headerUpperBlocks() {
        return 0;
    }

    /** Sets the probes of {@code hash}; the filter is open and writable. */
    abstract void addHash(long hash);

    /**
     * {@link #addHash} of {@code hashes[0, count)} in order; the filter is open and writable. A kind whose probes of one
     * hash share a cache line overrides it to request a batch's lines before setting their bits (the body of a large
     * table's filter is larger than the caches, and one miss after another dominates the build).
     */
    void addHashes(long[] hashes, int count) {
        for (int i = 0; i < count; i++) {
            addHash(hashes[i]);
        }
    }

    /** {@link #add(long)} of {@code hashes[0, count)}: the writability is checked once. */
    final void addAll(long[] hashes, int count) {
        checkWritable();
        addHashes(hashes, count);
        keyCount += count;
    }

    /** True when every probe of {@code hash} is set; the filter is open. */
    abstract boolean probe(long hash);

    /**
     * {@link #probe}'s answer for a hash whose lines {@link #touchLines} has already requested. Kinds whose probe
     * leaves at the first clear bit override it to test every bit without a branch on the bits read: from the cache,
     * the remaining probes cost less than the mispredicted exit.
     */
    boolean probeTouched(long hash) {
        return probe(hash);
    }

    @Override
    public final void add(byte[] key) {
        add(Hashing.hash64(key));
    }

    @Override
    public final void add(long hash) {
        checkWritable();
        addHash(hash);
        keyCount++;
    }

    @Override
    public final boolean mightContain(byte[] key) {
        return mightContain(Hashing.hash64(key));
    }

    @Override
    public final boolean mightContain(long hash) {
        checkOpen();
        return probe(hash);
    }

    /**
     * Loads a word of each cache line {@code hash}'s probe will read first and returns it (the caller folds the words
     * into a value it keeps, so the loads are not optimized away). The default touches nothing.
     */
    long touchLines(long hash) {
        return 0;
    }

    @Override
    public final long touch(long hash) {
        checkOpen();
        return touchLines(hash);
    }

    @Override
    public final boolean mightContainTouched(long hash) {
        checkOpen();
        return probeTouched(hash);
    }

    /** A touch pass (independent loads, all in flight together), then the probes, which now hit the cache. */
    @Override
    public final int mightContainAll(long[] hashes, int count, boolean[] results) {
        checkOpen();
        if (count < 0) {
            throw new IllegalArgumentException("count must not be negative: " + count);
        }
        if (count > hashes.length || count > results.length) {
            throw new IndexOutOfBoundsException("count " + count + " exceeds the arrays");
        }
        long sink = 0;
        for (int i = 0; i < count; i++) {
            sink += touchLines(hashes[i]);
        }
        int positives = 0;
        for (int i = 0; i < count; i++) {
            boolean r = probeTouched(hashes[i]);
            results[i] = r;
            if (r) {
                positives++;
            }
        }
        touchSink = sink;
        return positives;
    }

    /** Keeps the touch pass's loads observable. */
    @SuppressWarnings("unused")
    private long touchSink;

    @Override
    public final int hashCount() {
        checkOpen();
        return k;
    }

    @Override
    public long bitSize() {
        checkOpen();
        return bits;
    }

    @Override
    public final long expectedKeys() {
        checkOpen();
        return expectedKeys;
    }

    @Override
    public final long keyCount() {
        checkOpen();
        return keyCount;
    }

    final void decrementKeyCount() {
        keyCount--;
    }

    /**
     * The last {@link #expectedFpp()} answer and the key count it was computed for (the BLOCKED formula sums over the
     * Poisson block load: too costly to repeat per call).
     */
    private record FppMemo(long keys, double fpp) {}

    private volatile FppMemo fppMemo;

    @Override
    public double expectedFpp() {
        checkOpen();
        long keys = keyCount;
        FppMemo memo = fppMemo;
        if (memo == null || memo.keys != keys) {
            memo = new FppMemo(keys, FilterMath.expectedFpp(kind(), bits, k, keys));
            fppMemo = memo;
        }
        return memo.fpp;
    }

    @Override
    public double fractionOfBitsSet() {
        checkOpen();
        long set = 0;
        for (long off = 0; off < body.length(); off += 8) {
            set += Long.bitCount(body.readLong(off));
        }
        return (double) set / bits;
    }

    @Override
    public final long sizeInBytes() {
        checkOpen();
        return body.storeBytes();
    }

    @Override
    public final long serializedSize() {
        checkOpen();
        return FilterHeader.HEADER_SIZE + body.length();
    }

    /** The 64-byte serialized header (bloom/FORMAT.md) with its CRC32C over header and body, as {@link #writeTo} emits it. */
    final byte[] serializedHeader() {
        byte[] chunk = new byte[(int) Math.min(COPY_CHUNK, body.length())];
        byte[] header = FilterHeader.encode(
                kind(), k, bits, body.length(), expectedKeys, keyCount, headerSeed(), headerUpperBlocks(), 0);
        CRC32C crc = FilterHeader.crcOverHeader(header);
        for (long off = 0; off < body.length(); off += chunk.length) {
            int n = (int) Math.min(chunk.length, body.length() - off);
            body.read(off, chunk, 0, n);
            crc.update(chunk, 0, n);
        }
        return FilterHeader.encode(
                kind(), k, bits, body.length(), expectedKeys, keyCount, headerSeed(), headerUpperBlocks(), (int)
                        crc.getValue());
    }

    @Override
    public final long approximateKeyCount() {
        checkOpen();
        return KeyCountEstimator.estimate(this);
    }

    @Override
    public final void writeCompressed(OutputStream out) throws IOException {
        checkOpen();
        CompressedFilterCodec.write(this, out);
    }

    @Override
    public final void writeTo(OutputStream out) throws IOException {
        checkOpen();
        byte[] chunk = new byte[(int) Math.min(COPY_CHUNK, body.length())];
        out.write(serializedHeader());
        for (long off = 0; off < body.length(); off += chunk.length) {
            int n = (int) Math.min(chunk.length, body.length() - off);
            body.read(off, chunk, 0, n);
            out.write(chunk, 0, n);
        }
    }

    @Override
    public final byte[] toByteArray() {
        long size = serializedSize();
        if (size > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException(
                    "serialized filter of " + size + " bytes does not fit in an array; use writeTo");
        }
        checkOpen();
        // The body is copied once, straight into the result, and checksummed there (writeTo's form, byte for byte).
        int h = FilterHeader.HEADER_SIZE;
        byte[] out = new byte[(int) size];
        body.read(0, out, h, (int) body.length());
        byte[] header = FilterHeader.encode(
                kind(), k, bits, body.length(), expectedKeys, keyCount, headerSeed(), headerUpperBlocks(), 0);
        CRC32C crc = FilterHeader.crcOverHeader(header);
        crc.update(out, h, out.length - h);
        header = FilterHeader.encode(
                kind(), k, bits, body.length(), expectedKeys, keyCount, headerSeed(), headerUpperBlocks(), (int)
                        crc.getValue());
        System.arraycopy(header, 0, out, 0, h);
        return out;
    }

    /** Whether {@link #close()} has run. */
    public final boolean isClosed() {
        return closed.get();
    }

    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) {
            body.release();
        }
    }

    final void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(kind() + " filter is closed");
        }
    }

    final void checkWritable() {
        checkOpen();
        if (body.readOnly()) {
            throw new IllegalStateException(kind() + " filter is read-only (memory-mapped)");
        }
        if (immutable) {
            throw new IllegalStateException(
                    kind() + " filter is immutable: it was built from its whole key set by Filters.build");
        }
    }

    @Override
    public String toString() {
        if (closed.get()) {
            return kind() + " filter (closed)";
        }
        return kind() + " filter m=" + bits + " k=" + k + " keys=" + keyCount + "/" + expectedKeys;
    }
}

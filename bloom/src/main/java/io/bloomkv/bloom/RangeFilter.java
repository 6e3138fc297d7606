package io.bloomkv.bloom;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;

/**
 * A static range filter over variable-length byte-string keys: {@link #mightContainRange(byte[], byte[])} answers
 * {@code false} only when no key of the set lies in the closed range [lo, hi] (no false negatives); for an empty range
 * it answers {@code true} with probability at most ℓ / 2^(B-2), for a range that spans ℓ values of the order-preserving
 * image below and B = {@link #bitsPerKey()}, whatever the keys and the queries are.
 *
 * <p>This is Grafite (Costa, Ferragina, Vinciguerra, "Grafite: Taming Adversarial Queries with Optimal Range Filters",
 * SIGMOD 2024; reference code github.com/marcocosta97/grafite). Over an integer universe, n keys are mapped into a
 * reduced universe of r = n·2^(B-2) values by the locality-preserving hash h(x) = (q(x div r) + x) mod r with q a
 * pairwise-independent hash (the reference code: Carter–Wegman modulo the Mersenne prime 2^61-1; here a degree-3
 * polynomial modulo the same prime, four-wise independent, with coefficients of its own per segment, see {@link #q2}:
 * the bound's proof is the same, and one filter's measured rate concentrates at the bound's mean), and the hashed
 * set is stored as an Elias–Fano sequence: n(2 + log2(r/n)) = nB bits. A query [a, b] of length ℓ &lt; r maps to at most
 * two blocks of x div r, each shifted by its own q, so it is one or two successor searches; a key in another block
 * lands in the query's image with probability ℓ/r (pairwise independence), a key in the query's own block only if it
 * is in [a, b]: FPR ≤ ℓ·n/r = ℓ/2^(B-2). This is the paper's bound (its Theorem 3.3) with the space bound of its
 * Elias–Fano variant; we implement that variant and not its "bucket" heuristic, which has no bound. The bound is on
 * the expectation over the hash, and it is tight: where few keys share a block with the query (hashed segments of
 * spread-out keys) the expected rate equals it, so a single measurement lands above it about half the time, by chance.
 *
 * <p>Variable-length keys (what an LSM table holds) are made integers by an order-preserving map, per SEGMENT of up
 * to {@code segmentKeys} consecutive keys: the segment's keys share their first c bits (the common prefix of its first
 * and last key, in bits), and each key maps to the next w = min(62, e - c) bits, zero-padded past the key's end, where
 * e is the position of the last 1 bit of any key of the segment (trailing zeros, such as padding or a zero suffix,
 * would only stretch a range's length in window units); a segment is cut early when its next key would need more
 * than 62 bits. Long common prefixes (URLs of one site, a user id before a timestamp) are thus stripped per segment, and
 * the window lands on the bits that vary. The map is monotone (zero-padding and truncation preserve lexicographic
 * order, never reverse it), so a key in [lo, hi] always maps into the image of [lo, hi]: no false negative. What it
 * costs: a range's length ℓ is counted in window units (for fixed-length keys: units of the key's last byte, so for
 * big-endian integers, timestamps and the URL-like keys of the tests exactly the integer distance), and where a
 * segment's keys vary over more than 62 bits past their common prefix (long random tails), keys that differ only
 * beyond the window collapse to one value and a range whose ends agree with a key on the window maps onto it: such a
 * range is answered "might contain" (a false positive the formula does not bound; none of the key sets measured
 * against the bound has one, every key there keeps a window value of its own). Segments are found by binary search
 * over short separators (the shortest prefix of a segment's first key above the previous segment's last key); a range
 * covering a whole segment is answered "might contain" at once. Where the segment's keys are dense in their window
 * (at most r distinct window values), they are stored exactly (no hash), and such a segment has no false positives.
 *
 * <p>Half-open ranges [lo, hi) (an iterator's exclusive upper bound) are answered by
 * {@link #mightContainRange(byte[], int, byte[], int, boolean)}: where hi's significant bits lie inside its segment's
 * window, the probe stops one window value below hi's, so a bound equal to a stored key is not "might contain" because
 * of that key. Zero-padding gives hi and hi with trailing 0x00 bytes removed the same window value; a bound ending in
 * 0x00 is therefore answered so only where every key of its segment is at least as long as hi (the shortest key
 * length each segment records, format version 2).
 *
 * <p>Memory: the Elias–Fano part is B bits per key; the segment directory adds 48 bytes plus separator and prefix bytes
 * per segment (under 1 bit per key at 512 keys per segment for keys of a few tens of bytes); {@link #sizeInBytes()}
 * counts everything. Off-heap like the point filters, released exactly once by {@link #close()}; queries are
 * thread-safe. Serialized layout: bloom/FORMAT.md, "Range filter".
 */
public final class RangeFilter implements AutoCloseable {
    /** "BKVR" in file order (bytes 42 4B 56 52). */
    static final int MAGIC = 0x52564B42;

    /**
     * Written: 2. Version 2 stores each segment's shortest key length in the record's field {@link #SEG_MIN_LENGTH}
     * (read by {@link #mightContainRange(byte[], int, byte[], int, boolean)} for exclusive upper bounds ending in 0x00
     * bytes); version 1 (read, no longer written) has 0 there, which is also a sound value ("every key is at least 0
     * bytes long"), so a version-1 filter answers exactly as it was built to, and exclusive bounds as below.
     */
    static final int VERSION = 2;

    static final int VERSION_NO_MIN_LENGTH = 1;
    /**
     * The hash q written by the builder. Version 1 (read, never written): one linear q(t) = ((a·t + b) mod p) mod r for
     * every segment; version 2: a degree-3 polynomial with coefficients of its own per segment (see {@link #q2}).
     */
    static final int HASH_VERSION = 2;

    static final int HASH_LINEAR = 1;
    static final int HASH_CUBIC = 2;
    static final int HEADER_SIZE = 64;
    static final int SEGMENT_RECORD = 48;
    /** Default keys per segment. */
    public static final int DEFAULT_SEGMENT_KEYS = 512;

    static final int MAX_SEGMENT_KEYS = 1 << 20;
    /** Widest window of a segment, in bits (keeps offsets and universes below 2^62). */
    static final int MAX_WINDOW = 62;
    /** Every SELECT_SAMPLE-th zero of the Elias–Fano upper bits has its position sampled at load. */
    private static final int SELECT_SAMPLE = 512;
    /** The Mersenne prime 2^61 - 1 of the Carter–Wegman hash q. */
    static final long P61 = (1L << 61) - 1;

    static final int OFF_MAGIC = 0;
    static final int OFF_VERSION = 4;
    static final int OFF_HASH_VERSION = 6;
    static final int OFF_LOW_BITS = 7;
    static final int OFF_SEGMENT_KEYS = 8;
    static final int OFF_SEGMENTS = 12;
    static final int OFF_ELEMENTS = 16;
    static final int OFF_UNIVERSE = 24;
    static final int OFF_HEAP_LENGTH = 32;
    static final int OFF_KEY_COUNT = 40;
    static final int OFF_MILLIBITS = 48;
    static final int OFF_SEED = 52;
    static final int OFF_CRC = 60;

    // segment record fields
    static final int SEG_HEAP_OFFSET = 0;
    static final int SEG_SEP_LENGTH = 4;
    static final int SEG_PREFIX_BITS = 8;
    static final int SEG_WINDOW = 12;
    static final int SEG_FLAGS = 13;
    /** Version 2: u16, min(65535, the length in bytes of the segment's shortest key); version 1: 0. */
    static final int SEG_MIN_LENGTH = 14;

    static final int SEG_W0 = 16;
    static final int SEG_UNIVERSE = 24;
    static final int SEG_R = 32;
    static final int SEG_BASE = 40;
    static final int FLAG_EXACT = 1;

    private final OffHeapRegion body;
    /** The format version it was read from ({@link #VERSION} or {@link #VERSION_NO_MIN_LENGTH}), kept by {@link #toByteArray}. */
    private final int version;

    private final int segments;
    private final long elements;
    private final long universe;
    private final int lowBits;
    private final long heapStart;
    private final long lowsStart;
    private final long highsStart;
    private final long highsBits;
    private final long keyCount;
    private final int milliBits;
    private final int segmentKeys;
    private final long seed;
    private final int hashVersion;
    private final long hashA;
    private final long hashB;
    private final long[] zeroSamples;
    /**
     * The segment directory's search array, built at load: {@code sepCommon} is the longest common prefix of the
     * separators of segments 1.. (segment 0's is empty), and {@code sepWindow[j]} holds separator j's next 8 bytes
     * (zero-padded, big-endian, compared unsigned). Order-preserving: two separators whose windows differ compare as
     * their windows do, so {@link #segmentOf} compares one long per step and reads a separator's bytes only on a tie.
     */
    private final byte[] sepCommon;

    private final long[] sepWindow;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RangeFilter(
            OffHeapRegion body,
            int version,
            int segments,
            long elements,
            long universe,
            int lowBits,
            long heapLength,
            long keyCount,
            int milliBits,
            int segmentKeys,
            long seed,
            int hashVersion) {
        this.body = body;
        this.version = version;
        this.segments = segments;
        this.elements = elements;
        this.universe = universe;
        this.lowBits = lowBits;
        this.heapStart = (long) segments * SEGMENT_RECORD;
        this.lowsStart = heapStart + heapLength;
        this.highsStart = lowsStart + 8 * lowWords(elements, lowBits);
        this.highsBits = highBits(elements, universe, lowBits);
        this.keyCount = keyCount;
        this.milliBits = milliBits;
        this.segmentKeys = segmentKeys;
        this.seed = seed;
        this.hashVersion = hashVersion;
        this.hashA = Math.floorMod(Probes.step(seed), P61 - 1) + 1;
        this.hashB = Math.floorMod(Probes.step(seed ^ 0x9E3779B97F4A7C15L), P61);
        this.zeroSamples = sampleZeros();
        this.sepCommon = commonSeparatorPrefix();
        this.sepWindow = separatorWindows(sepCommon.length);
    }

    /** The longest common prefix of the separators of segments 1.. (empty with fewer than two segments). */
    private byte[] commonSeparatorPrefix() {
        if (segments < 2) {
            return new byte[0];
        }
        int len = readInt(rec(1, SEG_SEP_LENGTH));
        long first = heapStart + Integer.toUnsignedLong(readInt(rec(1, SEG_HEAP_OFFSET)));
        for (int j = 2; j < segments && len > 0; j++) {
            long at = heapStart + Integer.toUnsignedLong(readInt(rec(j, SEG_HEAP_OFFSET)));
            int n = Math.min(len, readInt(rec(j, SEG_SEP_LENGTH)));
            int i = 0;
            while (i < n && readByte(first + i) == readByte(at + i)) {
                i++;
            }
            len = i;
        }
        byte[] out = new byte[len];
        for (int i = 0; i < len; i++) {
            out[i] = (byte) readByte(first + i);
        }
        return out;
    }

    private long[] separatorWindows(int common) {
        long[] out = new long[segments];
        for (int j = 1; j < segments; j++) {
            long at = heapStart + Integer.toUnsignedLong(readInt(rec(j, SEG_HEAP_OFFSET)));
            int len = readInt(rec(j, SEG_SEP_LENGTH));
            out[j] = bigEndian(at + common, len - common);
        }
        return out;
    }

    /** Up to 8 bytes of the body at {@code offset} ({@code available} of them belong to the string) as a big-endian, zero-padded long. */
    private long bigEndian(long offset, int available) {
        if (available <= 0) {
            return 0;
        }
        long v = Long.reverseBytes(readUnaligned(offset, Math.min(8, available)));
        return available >= 8 ? v : v & ~(-1L >>> (8 * available));
    }

    /** Bytes [from, from + 8) of key[0, len), zero-padded, big-endian. */
    private static long keyWindow(byte[] key, int len, int from) {
        if (from + 8 <= len) {
            return (long) BIG_ENDIAN_LONG.get(key, from);
        }
        if (from >= len) {
            return 0;
        }
        if (len >= 8) {
            // The key's last 8 bytes, shifted up past the ones before from: one load instead of a byte loop.
            return (long) BIG_ENDIAN_LONG.get(key, len - 8) << (8 * (from + 8 - len));
        }
        long v = 0;
        for (int i = 0; i < 8; i++) {
            int at = from + i;
            v = (v << 8) | (at < len ? key[at] & 0xFF : 0);
        }
        return v;
    }

    private static final java.lang.invoke.VarHandle BIG_ENDIAN_LONG =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    // ---------------------------------------------------------------- sizes

    static long lowWords(long n, int l) {
        return (n * l + 63) / 64;
    }

    /** Length in bits of the upper-bits vector: n ones and ((R-1) >>> l) + 1 zeros (0 for an empty set). */
    static long highBits(long n, long universe, int l) {
        return n == 0 ? 0 : n + ((universe - 1) >>> l) + 1;
    }

    static int lowBitsFor(long n, long universe) {
        if (n == 0 || universe <= n) {
            return 0;
        }
        return 63 - Long.numberOfLeadingZeros(universe / n);
    }

    /** The bound on the false-positive rate of an empty range spanning {@code rangeLength} image values: ℓ / 2^(B-2), at most 1. */
    public static double fppBound(long rangeLength, double bitsPerKey) {
        if (rangeLength < 1) {
            throw new IllegalArgumentException("range length must be >= 1: " + rangeLength);
        }
        return Math.min(1.0, rangeLength / Math.pow(2, bitsPerKey - 2));
    }

    // ---------------------------------------------------------------- build

    /**
     * Collects keys in strictly increasing unsigned-lexicographic order and builds the filter. Holds at most one
     * segment of keys plus 8 bytes per key until {@link #build()}.
     */
    public static final class Builder {
        private final double bitsPerKey;
        private final int segmentKeys;
        private byte[][] pending;
        private int pendingCount;
        /** The largest {@link RangeFilter#bitLength} of the pending keys. */
        private int pendingEnd;

        private byte[] previous;
        private byte[] previousSegmentLast;
        private long keys;
        private long seedAcc = 0x2545F4914F6CDD1DL;
        private final java.io.ByteArrayOutputStream directory = new java.io.ByteArrayOutputStream();
        private final java.io.ByteArrayOutputStream heap = new java.io.ByteArrayOutputStream();
        private long[] positions = new long[64];
        private int positionCount;
        private long universe;
        private int segments;
        private final java.util.List<long[]> segmentValues = new java.util.ArrayList<>();
        private final java.util.List<long[]> segmentParams = new java.util.ArrayList<>();

        Builder(double bitsPerKey, int segmentKeys) {
            if (!(bitsPerKey >= 2 && bitsPerKey <= 60)) {
                throw new IllegalArgumentException("range filter bits per key must be in [2, 60]: " + bitsPerKey);
            }
            if (segmentKeys < 1 || segmentKeys > MAX_SEGMENT_KEYS) {
                throw new IllegalArgumentException(
                        "segment keys outside [1, " + MAX_SEGMENT_KEYS + "]: " + segmentKeys);
            }
            this.bitsPerKey = bitsPerKey;
            this.segmentKeys = segmentKeys;
            this.pending = new byte[segmentKeys][];
        }

        /** Adds the next key; it must sort strictly after the previous one ({@link IllegalArgumentException} otherwise). */
        public Builder add(byte[] key) {
            return add(key, 0, key.length);
        }

        /** As {@link #add(byte[])} for {@code key[off, off + len)} (the engine passes an internal key's user part). */
        public Builder add(byte[] key, int off, int len) {
            if (pending == null) {
                throw new IllegalStateException("range filter already built");
            }
            byte[] k = Arrays.copyOfRange(key, off, off + len);
            if (previous != null && Arrays.compareUnsigned(previous, k) >= 0) {
                throw new IllegalArgumentException("range filter keys must be added in strictly increasing order");
            }
            int endWith = Math.max(pendingEnd, bitLength(k));
            if (pendingCount >= Math.max(1, segmentKeys / 8)) {
                // Cut early where this key would push the segment's window past 62 bits: the window then keeps
                // covering the bits that vary (a user id changing before a timestamp, a new site before a path),
                // instead of cutting off the keys' ends.
                boolean fitsNow = (long) pendingEnd - commonPrefixBits(pending[0], previous) <= MAX_WINDOW;
                boolean fitsWith = (long) endWith - commonPrefixBits(pending[0], k) <= MAX_WINDOW;
                if (fitsNow && !fitsWith) {
                    closeSegment();
                    endWith = bitLength(k);
                }
            }
            previous = k;
            pending[pendingCount++] = k;
            pendingEnd = endWith;
            keys++;
            if (pendingCount == segmentKeys) {
                closeSegment();
            }
            return this;
        }

        private void closeSegment() {
            if (pendingCount == 0) {
                return;
            }
            byte[] first = pending[0];
            byte[] last = pending[pendingCount - 1];
            int c = commonPrefixBits(first, last);
            // The window ends at the last 1 bit of any of the segment's keys: trailing zeros (zero padding, a zero
            // suffix) would only stretch every range's length in window units without telling keys apart.
            long end = 0;
            for (int i = 0; i < pendingCount; i++) {
                end = Math.max(end, bitLength(pending[i]));
            }
            int w = (int) Math.max(1, Math.min(MAX_WINDOW, end - c));
            int minLength = Integer.MAX_VALUE;
            for (int i = 0; i < pendingCount; i++) {
                minLength = Math.min(minLength, pending[i].length);
            }
            long w0 = window(first, c, w);
            long u = window(last, c, w) - w0 + 1;
            long[] values = new long[pendingCount];
            int distinct = 0;
            for (int i = 0; i < pendingCount; i++) {
                long v = window(pending[i], c, w) - w0;
                if (distinct == 0 || values[distinct - 1] != v) {
                    values[distinct++] = v;
                }
            }
            double scaled = distinct * Math.pow(2, bitsPerKey - 2);
            long r = (long) Math.max(1, Math.min((double) (1L << MAX_WINDOW), Math.rint(scaled)));
            boolean exact = u <= r;
            if (exact) {
                r = u;
            }
            byte[] sep = previousSegmentLast == null ? new byte[0] : shortestSeparator(previousSegmentLast, first);
            byte[] prefix = Arrays.copyOf(first, (c + 7) / 8);
            ByteBuffer rec = ByteBuffer.allocate(SEGMENT_RECORD).order(ByteOrder.LITTLE_ENDIAN);
            rec.putInt(SEG_HEAP_OFFSET, heap.size());
            rec.putInt(SEG_SEP_LENGTH, sep.length);
            rec.putInt(SEG_PREFIX_BITS, c);
            rec.put(SEG_WINDOW, (byte) w);
            rec.put(SEG_FLAGS, (byte) (exact ? FLAG_EXACT : 0));
            rec.putShort(SEG_MIN_LENGTH, (short) Math.min(0xFFFF, minLength));
            rec.putLong(SEG_W0, w0);
            rec.putLong(SEG_UNIVERSE, u);
            rec.putLong(SEG_R, r);
            rec.putLong(SEG_BASE, universe);
            directory.write(rec.array(), 0, SEGMENT_RECORD);
            heap.write(sep, 0, sep.length);
            heap.write(prefix, 0, prefix.length);
            segmentValues.add(Arrays.copyOf(values, distinct));
            segmentParams.add(new long[] {universe, r, exact ? 1 : 0});
            universe += r;
            if (universe > (1L << 62)) {
                throw new IllegalStateException("range filter universe exceeds 2^62");
            }
            segments++;
            seedAcc = Probes.step(seedAcc ^ Hashing.hash64(first) ^ Long.rotateLeft(Hashing.hash64(last), 17));
            previousSegmentLast = last;
            Arrays.fill(pending, 0, pendingCount, null);
            pendingCount = 0;
            pendingEnd = 0;
        }

        /**
         * Builds the filter into fresh off-heap memory. The builder cannot be used afterwards: {@link #add} and
         * {@code build} then throw {@link IllegalStateException}.
         */
        public RangeFilter build() {
            if (pending == null) {
                throw new IllegalStateException("range filter already built");
            }
            closeSegment();
            pending = null;
            long seed = seedAcc;
            for (int j = 0; j < segmentValues.size(); j++) {
                long[] values = segmentValues.get(j);
                long base = segmentParams.get(j)[0];
                long r = segmentParams.get(j)[1];
                boolean exact = segmentParams.get(j)[2] == 1;
                long c0 = coefficient(seed, j, 0);
                long c1 = coefficient(seed, j, 1);
                long c2 = coefficient(seed, j, 2);
                long c3 = coefficient(seed, j, 3);
                long[] hashed = new long[values.length];
                for (int i = 0; i < values.length; i++) {
                    long v = values[i];
                    hashed[i] = exact ? v : Math.floorMod(q2(c0, c1, c2, c3, r, v / r) + v % r, r);
                }
                if (!exact) {
                    Arrays.sort(hashed);
                }
                for (int i = 0; i < hashed.length; i++) {
                    if (i > 0 && hashed[i] == hashed[i - 1]) {
                        continue;
                    }
                    if (positionCount == positions.length) {
                        positions = Arrays.copyOf(positions, positionCount * 2);
                    }
                    positions[positionCount++] = base + hashed[i];
                }
            }
            segmentValues.clear();
            byte[] heapBytes = heap.toByteArray();
            long heapLength = (heapBytes.length + 7L) & ~7L;
            long n = positionCount;
            int l = lowBitsFor(n, universe);
            long lowWords = lowWords(n, l);
            long highWords = (highBits(n, universe, l) + 63) / 64;
            long bodyLength = (long) segments * SEGMENT_RECORD + heapLength + 8 * (lowWords + highWords);
            byte[] out = new byte[(int) (HEADER_SIZE + bodyLength)];
            ByteBuffer bb = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
            bb.putInt(OFF_MAGIC, MAGIC);
            bb.putShort(OFF_VERSION, (short) VERSION);
            bb.put(OFF_HASH_VERSION, (byte) HASH_VERSION);
            bb.put(OFF_LOW_BITS, (byte) l);
            bb.putInt(OFF_SEGMENT_KEYS, segmentKeys);
            bb.putInt(OFF_SEGMENTS, segments);
            bb.putLong(OFF_ELEMENTS, n);
            bb.putLong(OFF_UNIVERSE, universe);
            bb.putLong(OFF_HEAP_LENGTH, heapLength);
            bb.putLong(OFF_KEY_COUNT, keys);
            bb.putInt(OFF_MILLIBITS, (int) Math.round(bitsPerKey * 1000));
            bb.putLong(OFF_SEED, seed);
            byte[] dir = directory.toByteArray();
            System.arraycopy(dir, 0, out, HEADER_SIZE, dir.length);
            System.arraycopy(heapBytes, 0, out, HEADER_SIZE + dir.length, heapBytes.length);
            int lowsAt = (int) (HEADER_SIZE + dir.length + heapLength);
            int highsAt = (int) (lowsAt + 8 * lowWords);
            long lowMask = l == 0 ? 0 : (1L << l) - 1;
            for (long i = 0; i < n; i++) {
                long v = positions[(int) i];
                if (l > 0) {
                    putBits(bb, lowsAt, i * l, v & lowMask, l);
                }
                long pos = (v >>> l) + i;
                int at = highsAt + (int) (pos >>> 6) * 8;
                bb.putLong(at, bb.getLong(at) | (1L << (pos & 63)));
            }
            CRC32C crc = new CRC32C();
            crc.update(out, 0, OFF_CRC);
            crc.update(out, HEADER_SIZE, out.length - HEADER_SIZE);
            bb.putInt(OFF_CRC, (int) crc.getValue());
            return read(out, 0, out.length);
        }
    }

    /** A builder at {@code bitsPerKey} (the Elias–Fano part: B; FPR ≤ ℓ/2^(B-2)) with {@link #DEFAULT_SEGMENT_KEYS}. */
    public static Builder builder(double bitsPerKey) {
        return new Builder(bitsPerKey, DEFAULT_SEGMENT_KEYS);
    }

    /** As {@link #builder(double)} with {@code segmentKeys} keys per segment. */
    public static Builder builder(double bitsPerKey, int segmentKeys) {
        return new Builder(bitsPerKey, segmentKeys);
    }

    private static void putBits(ByteBuffer bb, int base, long bitPos, long value, int width) {
        int word = (int) (bitPos >>> 6);
        int shift = (int) (bitPos & 63);
        int at = base + word * 8;
        bb.putLong(at, bb.getLong(at) | (value << shift));
        if (shift + width > 64) {
            int at2 = at + 8;
            bb.putLong(at2, bb.getLong(at2) | (value >>> (64 - shift)));
        }
    }

    /**
     * Hash version 2's coefficient c_i (i = 0..3, in [0, 2^61 - 1)) of segment j: fmix64 of the seed and (j, i), so every
     * segment has a polynomial of its own.
     */
    static long coefficient(long seed, int j, int i) {
        long x = seed + (4L * j + i + 1) * 0x9E3779B97F4A7C15L;
        return Math.floorMod(Probes.step(Probes.step(x) ^ 0xD6E8FEB86659FD93L), P61);
    }

    /**
     * Hash version 2: q(t) = ((c3·x^3 + c2·x^2 + c1·x + c0) mod (2^61 - 1)) mod r with x = t mod (2^61 - 1), Horner's
     * rule. A uniformly drawn polynomial of degree 3 over the prime field is 4-wise independent. Grafite's bound needs
     * only pairwise independence (the shifts of two blocks are independent and uniform); four-wise independence also
     * makes the false positives of two block pairs with no block in common independent, so one filter's measured rate
     * concentrates around the bound's mean instead of depending on block distance alone (which the linear q of hash
     * version 1 does: q(t + d) - q(t) depends on d only, the same shift for every block pair at distance d in every
     * segment, so structured keys such as URL-like strings put one filter's rate above the bound for a whole key set).
     */
    static long q2(long c0, long c1, long c2, long c3, long r, long t) {
        long x = t % P61;
        long h = addMod61(mulMod61(c3, x), c2);
        h = addMod61(mulMod61(h, x), c1);
        h = addMod61(mulMod61(h, x), c0);
        return h % r;
    }

    private static long addMod61(long a, long b) {
        long x = a + b;
        return x >= P61 ? x - P61 : x;
    }

    /** q(t) = ((a·t + b) mod (2^61 - 1)) mod r (hash version 1): pairwise independent over t mod (2^61 - 1). */
    static long q(long a, long b, long r, long t) {
        long x = mulMod61(a, t % P61) + b;
        if (x >= P61) {
            x -= P61;
        }
        return x % r;
    }

    static long mulMod61(long a, long b) {
        long lo = a * b;
        long hi = Math.multiplyHigh(a, b);
        long x = (lo & P61) + ((lo >>> 61) | (hi << 3));
        x = (x & P61) + (x >>> 61);
        return x >= P61 ? x - P61 : x;
    }

    static int commonPrefixBits(byte[] a, byte[] b) {
        int n = Math.min(a.length, b.length);
        int i = Arrays.mismatch(a, b);
        if (i < 0) {
            return 8 * a.length;
        }
        if (i >= n) {
            return 8 * n;
        }
        return 8 * i + Integer.numberOfLeadingZeros((a[i] ^ b[i]) & 0xFF) - 24;
    }

    /** Bits up to and including the key's last 1 bit (0 for a key of zero bytes only). */
    static int bitLength(byte[] key) {
        return bitLength(key, key.length);
    }

    /** As {@link #bitLength(byte[])} for key[0, len). */
    static int bitLength(byte[] key, int len) {
        for (int i = len - 1; i >= 0; i--) {
            if (key[i] != 0) {
                return 8 * i + 8 - Integer.numberOfTrailingZeros(key[i] & 0xFF);
            }
        }
        return 0;
    }

    /** The shortest prefix of {@code first} that sorts after {@code prevLast} (prevLast &lt; first). */
    static byte[] shortestSeparator(byte[] prevLast, byte[] first) {
        int d = Arrays.mismatch(prevLast, first);
        return Arrays.copyOf(first, Math.min(first.length, d + 1));
    }

    /** Bits [c, c + w) of {@code key}, zero-padded past its end, as an unsigned integer (w ≤ 62). */
    static long window(byte[] key, int c, int w) {
        return window(key, key.length, c, w);
    }

    /** As {@link #window(byte[], int, int)} for key[0, len). */
    static long window(byte[] key, int len, int c, int w) {
        int byteAt = c >>> 3;
        int s = c & 7;
        long hi = keyWindow(key, len, byteAt);
        if (s != 0) {
            int at = byteAt + 8;
            int extra = at < len ? key[at] & 0xFF : 0;
            hi = (hi << s) | (extra >>> (8 - s));
        }
        return hi >>> (64 - w);
    }

    // ---------------------------------------------------------------- read

    /**
     * Reads a serialized range filter of exactly {@code len} bytes into fresh off-heap memory.
     *
     * @throws FilterFormatException if any field is inconsistent (bloom/FORMAT.md lists the checks) or the CRC fails
     */
    public static RangeFilter read(byte[] bytes, int off, int len) {
        if (off < 0 || len < 0 || off > bytes.length - len) {
            throw new IndexOutOfBoundsException(
                    "[" + off + ", " + ((long) off + len) + ") outside array of " + bytes.length);
        }
        if (len < HEADER_SIZE) {
            throw new FilterFormatException(
                    "range filter truncated: " + len + " bytes, the header alone needs " + HEADER_SIZE);
        }
        ByteBuffer bb = ByteBuffer.wrap(bytes, off, len).slice().order(ByteOrder.LITTLE_ENDIAN);
        int magic = bb.getInt(OFF_MAGIC);
        if (magic != MAGIC) {
            throw new FilterFormatException(
                    String.format("bad range filter magic 0x%08x, expected 0x%08x (\"BKVR\")", magic, MAGIC));
        }
        int version = Short.toUnsignedInt(bb.getShort(OFF_VERSION));
        if (version != VERSION && version != VERSION_NO_MIN_LENGTH) {
            throw new FilterFormatException("unsupported range filter version " + version);
        }
        int hashVersion = Byte.toUnsignedInt(bb.get(OFF_HASH_VERSION));
        if (hashVersion != HASH_LINEAR && hashVersion != HASH_CUBIC) {
            throw new FilterFormatException("unsupported range filter hash version " + hashVersion);
        }
        int l = Byte.toUnsignedInt(bb.get(OFF_LOW_BITS));
        int segmentKeys = bb.getInt(OFF_SEGMENT_KEYS);
        int segments = bb.getInt(OFF_SEGMENTS);
        long n = bb.getLong(OFF_ELEMENTS);
        long universe = bb.getLong(OFF_UNIVERSE);
        long heapLength = bb.getLong(OFF_HEAP_LENGTH);
        long keyCount = bb.getLong(OFF_KEY_COUNT);
        int milliBits = bb.getInt(OFF_MILLIBITS);
        long seed = bb.getLong(OFF_SEED);
        require(segmentKeys >= 1 && segmentKeys <= MAX_SEGMENT_KEYS, "segment keys " + segmentKeys);
        require(
                segments >= 0 && universe >= 0 && universe <= (1L << 62),
                "segments " + segments + ", universe " + universe);
        require(
                n >= 0 && n <= universe && n <= keyCount && keyCount >= 0,
                "elements " + n + " of universe " + universe + ", keys " + keyCount);
        require(
                keyCount <= (long) segments * segmentKeys
                        && (segments == 0) == (keyCount == 0)
                        && (n == 0) == (keyCount == 0),
                "key count " + keyCount + " for " + segments + " segments of " + segmentKeys);
        require(l == lowBitsFor(n, universe), "low bits " + l + " (expected " + lowBitsFor(n, universe) + ")");
        require(milliBits >= 2000 && milliBits <= 60000, "bits per key (milli) " + milliBits);
        require(heapLength >= 0 && heapLength % 8 == 0 && heapLength <= len, "heap length " + heapLength);
        long expected = HEADER_SIZE
                + (long) segments * SEGMENT_RECORD
                + heapLength
                + 8 * (lowWords(n, l) + (highBits(n, universe, l) + 63) / 64);
        require(expected == len, "length " + len + ", the header implies " + expected);
        CRC32C crc = new CRC32C();
        crc.update(bytes, off, OFF_CRC);
        crc.update(bytes, off + HEADER_SIZE, len - HEADER_SIZE);
        int stored = bb.getInt(OFF_CRC);
        if (stored != (int) crc.getValue()) {
            throw new FilterFormatException(String.format(
                    "range filter CRC32C mismatch: stored 0x%08x, computed 0x%08x", stored, (int) crc.getValue()));
        }
        // Directory: every field in range, bases contiguous (segment j's reduced universe is [base, base + r)).
        long base = 0;
        for (int j = 0; j < segments; j++) {
            int at = HEADER_SIZE + j * SEGMENT_RECORD;
            long heapOff = Integer.toUnsignedLong(bb.getInt(at + SEG_HEAP_OFFSET));
            long sepLen = Integer.toUnsignedLong(bb.getInt(at + SEG_SEP_LENGTH));
            long c = Integer.toUnsignedLong(bb.getInt(at + SEG_PREFIX_BITS));
            int w = Byte.toUnsignedInt(bb.get(at + SEG_WINDOW));
            int flags = Byte.toUnsignedInt(bb.get(at + SEG_FLAGS));
            long w0 = bb.getLong(at + SEG_W0);
            long u = bb.getLong(at + SEG_UNIVERSE);
            long r = bb.getLong(at + SEG_R);
            require((flags & ~FLAG_EXACT) == 0, "segment " + j + " reserved flag bits");
            require(
                    version != VERSION_NO_MIN_LENGTH || bb.getShort(at + SEG_MIN_LENGTH) == 0,
                    "segment " + j + " reserved bits (version 1)");
            require(c <= (1L << 20) && heapOff + sepLen + (c + 7) / 8 <= heapLength, "segment " + j + " heap bytes");
            require(j > 0 || sepLen == 0, "segment 0 has a separator");
            require(w >= 1 && w <= MAX_WINDOW, "segment " + j + " window " + w);
            require(w0 >= 0 && u >= 1 && w0 < (1L << w) && u <= (1L << w) - w0, "segment " + j + " window range");
            require(r >= 1 && ((flags & FLAG_EXACT) == 0 || r == u), "segment " + j + " reduced universe " + r);
            require(bb.getLong(at + SEG_BASE) == base && r <= universe - base, "segment " + j + " base");
            base += r;
        }
        require(base == universe, "segments cover " + base + " of universe " + universe);
        OffHeapRegion body = OffHeapRegion.allocate(Math.max(8, len - HEADER_SIZE));
        try {
            if (len > HEADER_SIZE) {
                body.write(0, bytes, off + HEADER_SIZE, len - HEADER_SIZE);
            }
            return new RangeFilter(
                    body,
                    version,
                    segments,
                    n,
                    universe,
                    l,
                    heapLength,
                    keyCount,
                    milliBits,
                    segmentKeys,
                    seed,
                    hashVersion);
        } catch (RuntimeException | Error e) {
            body.release();
            throw e;
        }
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new FilterFormatException("bad range filter: " + what);
        }
    }

    /**
     * Positions of every SELECT_SAMPLE-th zero of the upper bits; checks there are exactly n ones. The sample array is
     * sized for the zeros n ones leave, so a vector with fewer ones is refused as soon as its zeros outnumber them
     * (before a sample would fall outside the array), not only by the count at the end.
     */
    private long[] sampleZeros() {
        if (elements == 0) {
            return new long[0];
        }
        long zeros = highsBits - elements;
        long[] samples = new long[(int) ((zeros + SELECT_SAMPLE - 1) / SELECT_SAMPLE)];
        long seen = 0;
        long ones = 0;
        long words = (highsBits + 63) / 64;
        for (long wi = 0; wi < words; wi++) {
            long word = body.readLong(highsStart + 8 * wi);
            long valid = wi == words - 1 && (highsBits & 63) != 0 ? (1L << (highsBits & 63)) - 1 : -1L;
            if ((word & ~valid) != 0) {
                throw new FilterFormatException("bad range filter: bits set past the upper-bits vector");
            }
            ones += Long.bitCount(word);
            long z = ~word & valid;
            while (z != 0) {
                if (seen == zeros) {
                    throw new FilterFormatException("bad range filter: more than " + zeros
                            + " zeros in the upper bits, so fewer than the " + elements + " elements the header says");
                }
                if (seen % SELECT_SAMPLE == 0) {
                    samples[(int) (seen / SELECT_SAMPLE)] = wi * 64 + Long.numberOfTrailingZeros(z);
                }
                seen++;
                z &= z - 1;
            }
        }
        if (ones != elements) {
            throw new FilterFormatException(
                    "bad range filter: " + ones + " elements in the upper bits, header says " + elements);
        }
        return samples;
    }

    // ---------------------------------------------------------------- query

    /**
     * {@code false} when certainly no key of the set lies in [lo, hi] (both inclusive, unsigned lexicographic); an empty
     * interval (lo &gt; hi) is {@code false}. Either bound may be null: unbounded on that side.
     */
    public boolean mightContainRange(byte[] lo, byte[] hi) {
        return mightContainRange(lo, lo == null ? 0 : lo.length, hi, hi == null ? 0 : hi.length);
    }

    /** As {@link #mightContainRange(byte[], int, byte[], int, boolean)} for whole arrays. */
    public boolean mightContainRange(byte[] lo, byte[] hi, boolean hiInclusive) {
        return mightContainRange(lo, lo == null ? 0 : lo.length, hi, hi == null ? 0 : hi.length, hiInclusive);
    }

    /**
     * As {@link #mightContainRange(byte[], byte[])} for the bounds {@code lo[0, loLength)} and {@code hi[0, hiLength)}
     * (a null array: unbounded on that side, its length ignored): the engine passes an internal key's user part without
     * copying it. Allocates nothing.
     */
    public boolean mightContainRange(byte[] lo, int loLength, byte[] hi, int hiLength) {
        return mightContainRange(lo, loLength, hi, hiLength, true);
    }

    /**
     * As {@link #mightContainRange(byte[], int, byte[], int)} for [lo, hi] when {@code hiInclusive}, and for the
     * half-open [lo, hi) when not (an iterator's exclusive upper bound, RocksDB's {@code iterate_upper_bound}): then a
     * key equal to hi does not count, and an interval with lo &gt;= hi, or with an empty hi, is {@code false}. lo is
     * always inclusive. Never {@code false} for a range that holds a key.
     *
     * <p>How an exclusive hi is answered. Let P = c + w be where segment j's window ends. When hi has no 1 bit at or
     * past bit P, a key x &lt; hi whose window equals hi's must be hi with some of its trailing 0x00 bytes removed (x and
     * hi agree on their first P bits, zero-padded; past P hi holds zeros only, so x cannot sort below hi by a byte
     * that differs, only by ending early, and hi's bytes past x's end are then all 0x00). So the segment's keys in
     * [lo, hi) have offsets at most T(hi) - 1, and the probe asks up to there, when moreover no such shortened hi can
     * be a key of the segment: hi's last byte is not 0x00 (there is none), or every key of the segment is at least as
     * long as hi (the segment's shortest key length, stored since format version 2; 0 in version 1 filters, which
     * then answer such bounds as inclusive ones). Otherwise (hi truncated by the window: long keys with random tails)
     * the probe asks up to T(hi) as for an inclusive bound, which is sound since T is monotone. Allocates nothing.
     */
    public boolean mightContainRange(byte[] lo, int loLength, byte[] hi, int hiLength, boolean hiInclusive) {
        checkOpen();
        if (lo != null) {
            Objects.checkFromIndexSize(0, loLength, lo.length);
        }
        if (hi != null) {
            Objects.checkFromIndexSize(0, hiLength, hi.length);
        }
        if (segments == 0) {
            return false;
        }
        if (hi != null && !hiInclusive && hiLength == 0) {
            return false; // no key sorts below the empty string
        }
        if (lo != null && hi != null) {
            int cmp = Arrays.compareUnsigned(lo, 0, loLength, hi, 0, hiLength);
            if (cmp > 0 || (cmp == 0 && !hiInclusive)) {
                return false;
            }
        }
        // -1: hi inclusive (or open); else hi's bit length, for the exclusive answer of segmentMayHold
        int hiBits = hi == null || hiInclusive ? -1 : bitLength(hi, hiLength);
        int jl = lo == null ? 0 : segmentOf(lo, loLength);
        // hi's segment is at or after lo's: a short range ends in the same segment or the next, so two compares
        // settle it, and a range reaching two segments on holds a whole segment.
        int jh;
        if (hi == null) {
            jh = segments - 1;
        } else if (jl + 1 >= segments || compareSeparatorWithKey(jl + 1, hi, hiLength) > 0) {
            jh = jl;
        } else if (jl + 2 >= segments || compareSeparatorWithKey(jl + 2, hi, hiLength) > 0) {
            jh = jl + 1;
        } else {
            jh = jl + 2;
        }
        if (jh - jl >= 2) {
            return true; // a whole segment lies inside the range, and every segment holds keys
        }
        if (segmentMayHold(jl, lo, loLength, jl == jh ? hi : null, hiLength, hiBits)) {
            return true;
        }
        return jh != jl && segmentMayHold(jh, null, 0, hi, hiLength, hiBits);
    }

    /**
     * The last segment whose separator is &lt;= key[0, len) (segment 0's is empty). The key is compared once with the
     * separators' common prefix, then by binary search over their 8-byte windows ({@link #sepWindow}); only a tie of
     * windows reads the separator's bytes.
     */
    private int segmentOf(byte[] key, int len) {
        if (segments < 2) {
            return 0;
        }
        int common = sepCommon.length;
        int cmp = Arrays.compareUnsigned(key, 0, Math.min(len, common), sepCommon, 0, Math.min(len, common));
        if (cmp < 0 || (cmp == 0 && len < common)) {
            return 0; // below every separator of segments 1..
        }
        if (cmp > 0) {
            return segments - 1; // above every separator
        }
        long kw = keyWindow(key, len, common);
        // The last j in [0, segments) with separator j <= key, segment 0's counting as smallest: halve a window
        // [base, base + n) that holds it; the select below compiles without a branch on the comparison.
        long[] windows = sepWindow;
        int base = 0;
        int n = segments;
        while (n > 1) {
            int half = n >>> 1;
            int mid = base + half;
            long w = windows[mid];
            boolean atOrBelow = w == kw ? compareSeparator(mid, key, len) <= 0 : Long.compareUnsigned(w, kw) < 0;
            base = atOrBelow ? mid : base;
            n -= half;
        }
        return base;
    }

    /** Separator of segment j (j &gt;= 1) against key[0, len), through the search array: negative when it sorts first. */
    private int compareSeparatorWithKey(int j, byte[] key, int len) {
        int common = sepCommon.length;
        int cmp = Arrays.compareUnsigned(key, 0, Math.min(len, common), sepCommon, 0, Math.min(len, common));
        if (cmp != 0) {
            return -cmp;
        }
        if (len < common) {
            return 1; // key is a proper prefix of every separator
        }
        long kw = keyWindow(key, len, common);
        long w = sepWindow[j];
        return w == kw ? compareSeparator(j, key, len) : Long.compareUnsigned(w, kw);
    }

    private long rec(int j, int field) {
        return (long) j * SEGMENT_RECORD + field;
    }

    private int readInt(long offset) {
        return (int) readUnaligned(offset, 4);
    }

    private int readByte(long offset) {
        return (int) readUnaligned(offset, 1);
    }

    /** {@code width} (1..8) little-endian bytes at {@code offset} of the body. */
    private long readUnaligned(long offset, int width) {
        long word = offset & ~7L;
        int shift = (int) (offset & 7) * 8;
        long v = body.readLong(word) >>> shift;
        if (shift + width * 8 > 64) {
            v |= body.readLong(word + 8) << (64 - shift);
        }
        return width == 8 ? v : v & ((1L << (width * 8)) - 1);
    }

    /** {@link #segmentOf(byte[], int)} of a whole key (tests). */
    int segmentOf(byte[] key) {
        return segmentOf(key, key.length);
    }

    /** The reference the tests hold {@link #segmentOf(byte[], int)} to: a linear scan comparing byte by byte. */
    int segmentOfByScan(byte[] key) {
        int found = 0;
        for (int j = 1; j < segments; j++) {
            long heapOff = heapStart + Integer.toUnsignedLong(readInt(rec(j, SEG_HEAP_OFFSET)));
            int sepLen = readInt(rec(j, SEG_SEP_LENGTH));
            int n = Math.min(sepLen, key.length);
            int i = 0;
            while (i < n && readByte(heapOff + i) == (key[i] & 0xFF)) {
                i++;
            }
            int cmp = i < n ? readByte(heapOff + i) - (key[i] & 0xFF) : sepLen - key.length;
            if (cmp > 0) {
                break;
            }
            found = j;
        }
        return found;
    }

    /** Separator of segment j against key[0, len): negative when the separator sorts first. */
    private int compareSeparator(int j, byte[] key, int len) {
        long heapOff = heapStart + Integer.toUnsignedLong(readInt(rec(j, SEG_HEAP_OFFSET)));
        int sepLen = readInt(rec(j, SEG_SEP_LENGTH));
        int n = Math.min(sepLen, len);
        for (int i = 0; i < n; i += 8) {
            int m = Math.min(8, n - i);
            long a = bigEndian(heapOff + i, m);
            long b = keyWindow(key, i + m, i);
            if (a != b) {
                return Long.compareUnsigned(a, b);
            }
        }
        return Integer.compare(sepLen, len);
    }

    /**
     * Whether segment j may hold a key in [lo, hi] (a null bound: the segment's own end), or in [lo, hi) when
     * {@code hiBits} &gt;= 0 (hi exclusive, hiBits its {@link #bitLength}, hiLen &gt;= 1). The key's first c + w bits,
     * T(x), are compared with the segment's: T is monotone, so keys in [lo, hi] have offsets in [T(lo), T(hi)] clipped
     * to the segment's [0, U); keys in [lo, hi) in [T(lo), T(hi) - 1] where
     * {@link #mightContainRange(byte[], int, byte[], int, boolean)} says why. The low end is T(lo) + 1 where lo has a 1
     * bit past the window and no key of the segment has (its window was not cut at 62 bits): a bound just past a key,
     * such as the key then a 1 byte, does not count that key.
     */
    private boolean segmentMayHold(int j, byte[] lo, int loLen, byte[] hi, int hiLen, int hiBits) {
        int c = readInt(rec(j, SEG_PREFIX_BITS));
        int w = readByte(rec(j, SEG_WINDOW));
        long u = body.readLong(rec(j, SEG_UNIVERSE));
        long a = 0;
        long b = u - 1;
        if (lo != null) {
            int cmp = comparePrefix(j, c, lo, loLen);
            if (cmp > 0) {
                return false; // lo is above every key of the segment
            }
            if (cmp == 0) {
                long v = window(lo, loLen, c, w) - body.readLong(rec(j, SEG_W0));
                if (w < MAX_WINDOW && bitLength(lo, loLen) > c + w) {
                    // The window was not cut (w < 62), so no key of the segment has a 1 bit past c + w; lo has one:
                    // a key sharing lo's window value is lo's first c + w bits then zeros, which sorts below lo.
                    v++;
                }
                if (v >= u) {
                    return false;
                }
                a = Math.max(0, v);
            }
        }
        if (hi != null) {
            int cmp = comparePrefix(j, c, hi, hiLen);
            if (cmp < 0) {
                return false; // hi is below every key of the segment
            }
            if (cmp == 0) {
                long v = window(hi, hiLen, c, w) - body.readLong(rec(j, SEG_W0));
                if (hiBits >= 0
                        && hiBits <= c + w
                        && (hi[hiLen - 1] != 0 || readUnaligned(rec(j, SEG_MIN_LENGTH), 2) >= hiLen)) {
                    v--; // no key of the segment below hi shares hi's window value
                }
                if (v < 0) {
                    return false;
                }
                b = Math.min(u - 1, v);
            }
        }
        if (a > b) {
            return false;
        }
        long base = body.readLong(rec(j, SEG_BASE));
        long r = body.readLong(rec(j, SEG_R));
        if ((readByte(rec(j, SEG_FLAGS)) & FLAG_EXACT) != 0) {
            return anyIn(base + a, base + b);
        }
        if (b - a + 1 >= r) {
            return true; // the range covers the whole reduced universe
        }
        long t1 = a / r;
        long t2 = b / r;
        long s1;
        long s2;
        if (hashVersion == HASH_LINEAR) {
            s1 = q(hashA, hashB, r, t1);
            s2 = t1 == t2 ? s1 : q(hashA, hashB, r, t2);
        } else {
            long c0 = coefficient(seed, j, 0);
            long c1 = coefficient(seed, j, 1);
            long c2 = coefficient(seed, j, 2);
            long c3 = coefficient(seed, j, 3);
            s1 = q2(c0, c1, c2, c3, r, t1);
            s2 = t1 == t2 ? s1 : q2(c0, c1, c2, c3, r, t2);
        }
        if (t1 == t2) {
            return anyInShifted(base, r, s1, a % r, b % r);
        }
        return anyInShifted(base, r, s1, a % r, r - 1) || anyInShifted(base, r, s2, 0, b % r);
    }

    /** Any stored position in the image of offsets [x, y] (0 ≤ x ≤ y &lt; r) of a block shifted by {@code shift}, mod r. */
    private boolean anyInShifted(long base, long r, long shift, long x, long y) {
        long hx = (shift + x) % r;
        long hy = (shift + y) % r;
        if (hx <= hy) {
            return anyIn(base + hx, base + hy);
        }
        return anyIn(base + hx, base + r - 1) || anyIn(base, base + hy);
    }

    /** Compares the first c bits of key (zero-padded) with segment j's prefix: negative when the key's are smaller. */
    private int comparePrefix(int j, int c, byte[] key, int len) {
        long heapOff =
                heapStart + Integer.toUnsignedLong(readInt(rec(j, SEG_HEAP_OFFSET))) + readInt(rec(j, SEG_SEP_LENGTH));
        int bytes = (c + 7) >>> 3; // the prefix's stored bytes; the last one's bits past c are masked off
        for (int i = 0; i < bytes; i += 8) {
            int m = Math.min(8, bytes - i);
            long p = bigEndian(heapOff + i, m);
            long k = keyWindow(key, len, i);
            long mask = i + 8 <= c >>> 3 ? -1L : -1L << (64 - Math.min(64, c - 8 * i));
            p &= mask;
            k &= mask;
            if (p != k) {
                return Long.compareUnsigned(k, p);
            }
        }
        return 0;
    }

    /** Elias–Fano: is any stored value in [x, y] (0 ≤ x ≤ y &lt; universe)? One successor search. */
    private boolean anyIn(long x, long y) {
        if (elements == 0) {
            return false;
        }
        long bucket = x >>> lowBits;
        long pos = bucket == 0 ? 0 : select0(bucket - 1) + 1;
        long i = pos - bucket; // elements before this bucket
        long lowMask = lowBits == 0 ? 0 : (1L << lowBits) - 1;
        long xLow = x & lowMask;
        while (pos < highsBits) {
            long word = body.readLong(highsStart + 8 * (pos >>> 6));
            if ((word >>> (pos & 63) & 1) != 0) {
                long high = pos - i;
                long v = (high << lowBits) | readLow(i);
                if (high > bucket || (v & lowMask) >= xLow) {
                    return v <= y;
                }
                i++;
            } else {
                long nextBucket = pos - i + 1;
                if ((nextBucket << lowBits) > y) {
                    return false;
                }
            }
            pos++;
        }
        return false;
    }

    private long readLow(long i) {
        if (lowBits == 0) {
            return 0;
        }
        long bit = i * lowBits;
        long wordOff = lowsStart + 8 * (bit >>> 6);
        int shift = (int) (bit & 63);
        long v = body.readLong(wordOff) >>> shift;
        if (shift + lowBits > 64) {
            v |= body.readLong(wordOff + 8) << (64 - shift);
        }
        return v & ((1L << lowBits) - 1);
    }

    /** Position of the z-th zero (0-based) of the upper bits. */
    private long select0(long z) {
        int s = (int) (z / SELECT_SAMPLE);
        long pos = zeroSamples[s];
        long left = z - (long) s * SELECT_SAMPLE; // zeros still to pass after the sampled one
        if (left == 0) {
            return pos;
        }
        pos++;
        while (true) {
            long wordIndex = pos >>> 6;
            long word = ~body.readLong(highsStart + 8 * wordIndex) >>> (pos & 63);
            int available = Long.bitCount(word);
            if (available >= left) {
                return pos + selectInWord(word, (int) left - 1);
            }
            left -= available;
            pos = (wordIndex + 1) << 6;
        }
    }

    /** Position of the k-th (0-based) set bit of {@code word}, which has more than k: skips 16-bit chunks by count. */
    static int selectInWord(long word, int k) {
        int shift = 0;
        int c;
        while ((c = Long.bitCount(word & 0xFFFF)) <= k) {
            k -= c;
            word >>>= 16;
            shift += 16;
        }
        for (; k > 0; k--) {
            word &= word - 1;
        }
        return shift + Long.numberOfTrailingZeros(word);
    }

    // ---------------------------------------------------------------- accessors

    /** Distinct keys the filter was built from. */
    public long keyCount() {
        checkOpen();
        return keyCount;
    }

    /** B, the Elias–Fano part's bits per key it was built at. */
    public double bitsPerKey() {
        checkOpen();
        return milliBits / 1000.0;
    }

    /** Keys per segment it was built with. */
    public int segmentKeys() {
        checkOpen();
        return segmentKeys;
    }

    /** Off-heap bytes held (body) plus the select samples and the directory's search array on the heap. */
    public long sizeInBytes() {
        checkOpen();
        return body.storeBytes() + 8L * zeroSamples.length + 8L * sepWindow.length + sepCommon.length;
    }

    /** Length of {@link #toByteArray()}. */
    public long serializedSize() {
        checkOpen();
        return HEADER_SIZE + highsStart + 8 * ((highsBits + 63) / 64);
    }

    /** The serialized form (bloom/FORMAT.md, "Range filter"). */
    public byte[] toByteArray() {
        checkOpen();
        long bodyLength = highsStart + 8 * ((highsBits + 63) / 64);
        byte[] out = new byte[(int) (HEADER_SIZE + bodyLength)];
        ByteBuffer bb = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
        bb.putInt(OFF_MAGIC, MAGIC);
        bb.putShort(OFF_VERSION, (short) version);
        bb.put(OFF_HASH_VERSION, (byte) hashVersion);
        bb.put(OFF_LOW_BITS, (byte) lowBits);
        bb.putInt(OFF_SEGMENT_KEYS, segmentKeys);
        bb.putInt(OFF_SEGMENTS, segments);
        bb.putLong(OFF_ELEMENTS, elements);
        bb.putLong(OFF_UNIVERSE, universe);
        bb.putLong(OFF_HEAP_LENGTH, lowsStart - heapStart);
        bb.putLong(OFF_KEY_COUNT, keyCount);
        bb.putInt(OFF_MILLIBITS, milliBits);
        bb.putLong(OFF_SEED, seed);
        if (bodyLength > 0) {
            body.read(0, out, HEADER_SIZE, (int) bodyLength);
        }
        CRC32C crc = new CRC32C();
        crc.update(out, 0, OFF_CRC);
        crc.update(out, HEADER_SIZE, out.length - HEADER_SIZE);
        bb.putInt(OFF_CRC, (int) crc.getValue());
        return out;
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("range filter is closed");
        }
    }

    /** Releases the off-heap memory exactly once; idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            body.release();
        }
    }

    @Override
    public String toString() {
        return closed.get()
                ? "range filter (closed)"
                : "range filter keys=" + keyCount + " B=" + milliBits / 1000.0 + " segments=" + segments + " universe="
                        + universe;
    }
}

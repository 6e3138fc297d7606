package io.bloomkv.engine.internal.table;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Filters;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.util.Coding;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The format of a partitioned point filter (engine/FORMAT.md, "Partitioned filter"): the table's filter cut into
 * partitions of a few KiB, each a bloom filter of its own stored as a checksummed block, and a top-level index mapping
 * the largest key hash of each partition to the partition. A get probes one partition, so a reader under a filter
 * memory budget keeps only the top-level index resident and loads partitions on demand through the budget's cache
 * ({@link PartitionedFilterReader}); RocksDB's counterpart is {@code partition_filters} with
 * {@code kTwoLevelIndexSearch} (table/block_based/partitioned_filter_block.cc).
 *
 * <p>Partitions cover contiguous ranges of the 64-bit key HASH ({@code Hashing.hash64} of the user key or prefix), not
 * of the keys: RocksDB cuts at data-block boundaries because its filter partitions follow its index partitions, and
 * finds a partition by the key. bloomkv's index stays whole and resident, and every probe site (point gets, batched
 * multiGet, prefix seeks) holds only the hash, so the hash picks the partition: a prefix hash lands in exactly one
 * partition (RocksDB must add a prefix to the partition of each key holding it), partitions hold about equal key counts
 * whatever the key distribution (the hashes are uniform), and equal hash ranges make the top-level lookup one
 * multiplication. The cost: keys adjacent in key order are in unrelated partitions, so a get workload
 * confined to a narrow key range keeps more partitions hot than key-range partitions would.
 *
 * <p>Inside a partition all hashes share their leading bits, which the filters use to pick a block or a bit range, so
 * each partition's filter holds {@link #remix} of the hashes (a bijection, murmur3's fmix64), spreading them over the
 * whole filter again.
 */
public final class PartitionedFilter {
    /** First four bytes of the top-level index block: ASCII "BPF1" read as a u32le. */
    public static final int MAGIC = 0x31465042;
    /** Header: magic u32le, partition count u32le, offset of the first partition u64le. */
    public static final int HEADER_SIZE = 16;
    /** One top-level index entry: the partition's largest hash (u64le, unsigned order) and its stored size (u32le). */
    public static final int ENTRY_SIZE = 12;
    /** Default target bytes of one partition (RocksDB's {@code metadata_block_size} default). */
    public static final int DEFAULT_PARTITION_BYTES = 4096;

    public static final int MIN_PARTITION_BYTES = 64;
    public static final int MAX_PARTITION_BYTES = 1 << 20;
    /** Largest stored size the decoder accepts for one partition (a partition is a few KiB; this bounds a bad size). */
    static final int MAX_STORED_PARTITION = 64 << 20;
    /** Fewest keys one partition is cut at (a filter of a handful of keys is mostly header). */
    static final int MIN_PARTITION_KEYS = 16;
    /**
     * Heap bytes the decoded top-level index takes per partition ({@link Index}: a long hash, a long offset and an int
     * size), what a reader charges its budget for it.
     */
    static final int INDEX_MEMORY_PER_PARTITION = 20;
    /** Heap bytes of the decoded index besides its entries (three array headers and the object), charged as well. */
    static final int INDEX_MEMORY_OVERHEAD = 64;

    private PartitionedFilter() {}

    /** murmur3's fmix64: a bijection of the 64-bit hashes, applied before a partition's filter sees a hash. */
    public static long remix(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /** Keys one partition holds when cut for {@code partitionBytes} at {@code bitsPerKey}. */
    public static int keysPerPartition(int partitionBytes, double bitsPerKey) {
        double keys = partitionBytes * 8.0 / Math.max(bitsPerKey, 1);
        return (int) Math.max(MIN_PARTITION_KEYS, Math.min(Integer.MAX_VALUE, Math.floor(keys)));
    }

    /** The partitions of one table's filter, serialized, with the largest hash of each, in ascending unsigned order. */
    record Built(List<byte[]> partitions, long[] lastHashes) {}

    /**
     * Cuts {@code hashes[0, n)} (any order; not modified) into P = max(1, round(n / keysPerPartition)) partitions of
     * equal ranges of the unsigned hash: partition i holds the hashes h with floor(h * P / 2^64) = i, and its bound in
     * the top-level index is the largest such h ({@link #uniformBound}), so a reader finds a hash's partition with one
     * multiplication ({@link Index#partitionOf}). Uniform hashes fill the partitions about equally (binomially: a few
     * percent apart), and each partition's filter is sized for its own keys; equal hashes fall in one partition. Builds
     * each one's filter over the {@link #remix}es of its hashes.
     */
    static Built build(FilterKind kind, long[] hashes, int n, double bitsPerKey, int keysPerPartition) {
        long[] sorted = new long[n];
        for (int i = 0; i < n; i++) {
            sorted[i] = hashes[i] ^ Long.MIN_VALUE; // signed order of the flipped values = unsigned order
        }
        Arrays.sort(sorted);
        for (int i = 0; i < n; i++) {
            sorted[i] ^= Long.MIN_VALUE;
        }
        int parts = (int) Math.max(1, Math.min(1 << 24, Math.round((double) n / keysPerPartition)));
        long sizedFor = ((long) n + parts - 1) / parts;
        List<byte[]> out = new ArrayList<>(parts);
        long[] last = new long[parts];
        int from = 0;
        for (int p = 0; p < parts; p++) {
            int to = from;
            while (to < n && uniformPartition(sorted[to], parts) == p) {
                to++;
            }
            long[] mixed = new long[to - from];
            for (int i = from; i < to; i++) {
                mixed[i - from] = remix(sorted[i]);
            }
            try (Filter f = buildPartition(kind, mixed, sizedFor, bitsPerKey)) {
                out.add(f.toByteArray());
            }
            last[p] = uniformBound(p, parts);
            from = to;
        }
        return new Built(out, last);
    }

    /**
     * One partition's filter over {@code mixed}. The Bloom kinds are sized for {@code sizedFor} keys, the table's mean
     * per partition, not for the partition's own count: every partition of a table then has the same geometry (kind,
     * probes, bits) and the same stored size, so a reader probes a pinned or mapped filter as one run of equal
     * partitions at a fixed stride (InPlaceFilters.Run: no per-partition offset or descriptor to load). The counts
     * differ from the mean by a few percent (binomially), which moves each partition's rate a little either way; the
     * table's total bits are those of per-partition sizing. Ribbon, a static filter, is solved for its own keys.
     */
    static Filter buildPartition(FilterKind kind, long[] mixed, long sizedFor, double bitsPerKey) {
        if (kind.isStatic()) {
            return Filters.build(kind, mixed, bitsPerKey);
        }
        Filter f = Filters.create(kind, sizedFor, bitsPerKey);
        try {
            for (long h : mixed) {
                f.add(h);
            }
            return f;
        } catch (RuntimeException | Error e) {
            f.close();
            throw e;
        }
    }

    /** floor(unsigned {@code hash} * {@code parts} / 2^64): the partition of equal hash ranges holding {@code hash}. */
    static int uniformPartition(long hash, int parts) {
        return (int) (Math.multiplyHigh(hash, parts) + ((hash >> 63) & parts));
    }

    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    /**
     * The largest hash of partition {@code i} of {@code parts} equal hash ranges: ceil((i + 1) * 2^64 / parts) - 1,
     * as an unsigned 64-bit value (the last partition's is 2^64 - 1).
     */
    static long uniformBound(int i, int parts) {
        BigInteger n = BigInteger.valueOf(parts);
        return TWO_64.multiply(BigInteger.valueOf(i + 1L))
                .add(n.subtract(BigInteger.ONE))
                .divide(n)
                .subtract(BigInteger.ONE)
                .longValue();
    }

    /** The top-level index block contents for partitions stored from {@code firstOffset} with these stored sizes. */
    static byte[] encodeIndex(long firstOffset, long[] lastHashes, long[] storedSizes) {
        byte[] b = new byte[HEADER_SIZE + ENTRY_SIZE * lastHashes.length];
        Coding.putFixed32(b, 0, MAGIC);
        Coding.putFixed32(b, 4, lastHashes.length);
        Coding.putFixed64(b, 8, firstOffset);
        for (int i = 0; i < lastHashes.length; i++) {
            int at = HEADER_SIZE + ENTRY_SIZE * i;
            Coding.putFixed64(b, at, lastHashes[i]);
            Coding.putFixed32(b, at + 8, (int) storedSizes[i]);
        }
        return b;
    }

    /**
     * A decoded top-level index: partition i holds the hashes in (lastHash[i-1], lastHash[i]] (unsigned; from 0 for
     * the first) and is stored at {@code offsets[i]}, {@code sizes[i]} bytes plus the block trailer.
     */
    public record Index(long[] lastHashes, long[] offsets, int[] sizes, boolean uniform) {
        /** An index whose bounds are checked for the equal-range form ({@link #uniform}). */
        public Index(long[] lastHashes, long[] offsets, int[] sizes) {
            this(lastHashes, offsets, sizes, hasUniformBounds(lastHashes));
        }

        /**
         * Whether partition i's bound is {@link #uniformBound}(i, count) for every i: written by {@link #build} since
         * partitions cover equal hash ranges, so {@link #partitionOf} is one multiplication. Tables written before cut
         * their partitions by key count; their bounds are searched.
         */
        private static boolean hasUniformBounds(long[] lastHashes) {
            for (int i = 0; i < lastHashes.length; i++) {
                if (lastHashes[i] != uniformBound(i, lastHashes.length)) {
                    return false;
                }
            }
            return true;
        }

        public int count() {
            return lastHashes.length;
        }

        /** Heap bytes this index takes, charged to a filter memory budget while it is resident. */
        public long memoryBytes() {
            return (long) INDEX_MEMORY_PER_PARTITION * count() + INDEX_MEMORY_OVERHEAD;
        }

        /** Whether every partition has the same stored size (as {@link #build} writes them for the Bloom kinds). */
        public boolean sameSizes() {
            for (int size : sizes) {
                if (size != sizes[0]) {
                    return false;
                }
            }
            return true;
        }

        /** Total stored bytes of the partitions (without trailers): a fully loaded filter's charge. */
        public long partitionBytes() {
            long s = 0;
            for (int size : sizes) {
                s += size;
            }
            return s;
        }

        /**
         * The partition that holds {@code hash} if any key of the table has it, or -1 when the hash is above every
         * partition's range (then no key of the table has it).
         */
        public int partitionOf(long hash) {
            if (uniform) {
                return uniformPartition(hash, lastHashes.length);
            }
            // Tables written before partitions covered equal hash ranges cut them by key count: partition i still
            // ends near (i + 1) / count of the hash range (uniform hashes), so the guess hash * count / 2^64 is the
            // answer or next to it, which two or three compares confirm, where a binary search of a few hundred
            // partitions takes eight unpredictable branches. Hashes that are not uniform fall back to the search.
            int n = lastHashes.length;
            int g = (int) (Math.multiplyHigh(hash, n) + ((hash >> 63) & n)); // floor(unsigned hash * n / 2^64) < n
            if ((g == 0 || Long.compareUnsigned(lastHashes[g - 1], hash) < 0)) {
                if (Long.compareUnsigned(lastHashes[g], hash) >= 0) {
                    return g;
                }
                if (g + 1 < n && Long.compareUnsigned(lastHashes[g + 1], hash) >= 0) {
                    return g + 1;
                }
            } else if (g == 1 || Long.compareUnsigned(lastHashes[g - 2], hash) < 0) {
                return g - 1; // lastHashes[g - 1] >= hash, and hash > lastHashes[g - 2] if there is one
            }
            int lo = 0;
            int hi = lastHashes.length;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (Long.compareUnsigned(lastHashes[mid], hash) < 0) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo < lastHashes.length ? lo : -1;
        }

        public BlockHandle handle(int partition) {
            return new BlockHandle(offsets[partition], sizes[partition]);
        }
    }

    /**
     * Decodes and checks a top-level index block's contents {@code b[0, len)} (fuzzed by PartitionedFilterFuzzTest): the
     * magic, {@code expectedCount} entries (from the table properties), stored sizes in (0, {@link #MAX_STORED_PARTITION}],
     * largest hashes strictly increasing (unsigned), and the partitions, laid end to end with their trailers from the
     * first offset, ending exactly at {@code indexOffset} (where the index block starts).
     *
     * @throws CorruptionException naming {@code path} and {@code indexOffset} for any violation
     */
    public static Index decodeIndex(byte[] b, int len, long expectedCount, long indexOffset, Path path) {
        if (len < HEADER_SIZE || len > b.length) {
            throw new CorruptionException(
                    "partitioned filter index of " + len + " bytes is shorter than its header", path, indexOffset);
        }
        if (Coding.getFixed32(b, 0) != MAGIC) {
            throw new CorruptionException("partitioned filter index has a bad magic number", path, indexOffset);
        }
        long count = Integer.toUnsignedLong(Coding.getFixed32(b, 4));
        if (count == 0 || count != expectedCount) {
            throw new CorruptionException(
                    "partitioned filter index holds " + count + " partitions, properties say " + expectedCount,
                    path,
                    indexOffset);
        }
        if ((long) len != HEADER_SIZE + ENTRY_SIZE * count) {
            throw new CorruptionException(
                    "partitioned filter index of " + len + " bytes for " + count + " partitions", path, indexOffset);
        }
        int n = (int) count;
        long at = Coding.getFixed64(b, 8);
        if (at < 0 || at > indexOffset) {
            throw new CorruptionException(
                    "partitioned filter starts at " + at + ", outside the table", path, indexOffset);
        }
        long[] last = new long[n];
        long[] offsets = new long[n];
        int[] sizes = new int[n];
        for (int i = 0; i < n; i++) {
            int e = HEADER_SIZE + ENTRY_SIZE * i;
            last[i] = Coding.getFixed64(b, e);
            long size = Integer.toUnsignedLong(Coding.getFixed32(b, e + 8));
            if (size == 0 || size > MAX_STORED_PARTITION) {
                throw new CorruptionException(
                        "filter partition " + i + " has a stored size of " + size, path, indexOffset);
            }
            if (i > 0 && Long.compareUnsigned(last[i - 1], last[i]) >= 0) {
                throw new CorruptionException("filter partitions out of hash order at " + i, path, indexOffset);
            }
            offsets[i] = at;
            sizes[i] = (int) size;
            at += size + TableFormat.BLOCK_TRAILER_SIZE;
            if (at > indexOffset) {
                throw new CorruptionException(
                        "filter partition " + i + " runs past the top-level index", path, indexOffset);
            }
        }
        if (at != indexOffset) {
            throw new CorruptionException(
                    "filter partitions end at " + at + ", the top-level index starts at " + indexOffset,
                    path,
                    indexOffset);
        }
        return new Index(last, offsets, sizes);
    }
}

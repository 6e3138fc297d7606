package io.bloomkv.bench.engine;

/**
 * The expected false-positive rate of RocksDB's FastLocalBloom filter (format_version >= 5, what
 * {@code new BloomFilter(bitsPerKey)} builds), by the same formulas RocksDB itself uses to warn about
 * filter accuracy (util/bloom_impl.h: BloomMath, FastLocalBloomImpl): a cache-local Bloom filter of
 * 512-bit lines, averaged over one standard deviation of line occupancy either side of the mean,
 * combined with the 64-bit fingerprint collision rate.
 */
public final class RocksBloomMath {
    /** Bytes of metadata RocksDB appends to a full filter block (marker, sub-impl, probes, log2 block bytes). */
    public static final int FILTER_METADATA_BYTES = 5;

    private static final int CACHE_LINE_BITS = 512;
    private static final int HASH_BITS = 64;

    private RocksBloomMath() {}

    /** Probe count RocksDB picks for a bits-per-key setting (FastLocalBloomImpl::ChooseNumProbes). */
    public static int chooseNumProbes(double bitsPerKey) {
        int millibits = (int) Math.round(bitsPerKey * 1000);
        if (millibits <= 2080) {
            return 1;
        } else if (millibits <= 3580) {
            return 2;
        } else if (millibits <= 5100) {
            return 3;
        } else if (millibits <= 6640) {
            return 4;
        } else if (millibits <= 8300) {
            return 5;
        } else if (millibits <= 10070) {
            return 6;
        } else if (millibits <= 11720) {
            return 7;
        } else if (millibits <= 14001) {
            return 8;
        } else if (millibits <= 16050) {
            return 9;
        } else if (millibits <= 18300) {
            return 10;
        } else if (millibits <= 22001) {
            return 11;
        } else if (millibits <= 25501) {
            return 12;
        } else if (millibits > 50000) {
            return 24;
        } else {
            return (millibits - 1) / 2000 - 1;
        }
    }

    public static double standardFpRate(double bitsPerKey, int numProbes) {
        return Math.pow(1.0 - Math.exp(-numProbes / bitsPerKey), numProbes);
    }

    public static double cacheLocalFpRate(double bitsPerKey, int numProbes, int cacheLineBits) {
        if (bitsPerKey <= 0.0) {
            return 1.0;
        }
        double keysPerLine = cacheLineBits / bitsPerKey;
        double stddev = Math.sqrt(keysPerLine);
        double crowded = standardFpRate(cacheLineBits / (keysPerLine + stddev), numProbes);
        double uncrowded = standardFpRate(cacheLineBits / (keysPerLine - stddev), numProbes);
        return (crowded + uncrowded) / 2;
    }

    public static double fingerprintFpRate(long numKeys, int fingerprintBits) {
        double base = numKeys * Math.pow(0.5, fingerprintBits);
        return base > 0.0001 ? 1.0 - Math.exp(-base) : base - base * base * 0.5;
    }

    /** Expected FPR of one FastLocalBloom filter holding {@code keys} keys in {@code filterBytes} bytes of bit array. */
    public static double estimatedFpRate(long keys, long filterBytes, int numProbes) {
        if (keys <= 0) {
            return 0.0;
        }
        double a = cacheLocalFpRate(8.0 * filterBytes / keys, numProbes, CACHE_LINE_BITS);
        double b = fingerprintFpRate(keys, HASH_BITS);
        return a + b - a * b;
    }
}

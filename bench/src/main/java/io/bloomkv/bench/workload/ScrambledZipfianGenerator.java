package io.bloomkv.bench.workload;

import java.util.SplittableRandom;

/**
 * Zipfian-popular keys spread over the whole key range: YCSB's {@code ScrambledZipfianGenerator}. A
 * Zipfian rank over YCSB's fixed item space of 10^10 (constant 0.99, whose zeta YCSB precomputes) is
 * hashed with 64-bit FNV-1a and reduced modulo {@code num}, so the hot keys are not neighbours (they
 * land in different blocks and tables, as hot records of a real table do).
 */
public final class ScrambledZipfianGenerator implements KeyGenerator {
    /** YCSB's item space for the scrambled generator, and its zeta at constant 0.99 (ScrambledZipfianGenerator.ZETAN). */
    static final long ITEM_COUNT = 10_000_000_000L;

    static final double ZETAN = 26.46902820178302;

    private static final long FNV_OFFSET_BASIS_64 = 0xCBF29CE484222325L;
    private static final long FNV_PRIME_64 = 1099511628211L;

    private final ZipfianGenerator ranks;
    private final long num;

    public ScrambledZipfianGenerator(long num, SplittableRandom random) {
        if (num < 1) {
            throw new IllegalArgumentException("num must be positive, got " + num);
        }
        this.num = num;
        this.ranks = new ZipfianGenerator(ITEM_COUNT, ZipfianGenerator.ZIPFIAN_CONSTANT, ZETAN, random);
    }

    @Override
    public long nextIndex() {
        return fnvHash64(ranks.nextRank()) % num;
    }

    /** YCSB's {@code Utils.fnvhash64}: FNV-1a over the 8 bytes of {@code v}, low byte first, made non-negative. */
    static long fnvHash64(long v) {
        long h = FNV_OFFSET_BASIS_64;
        for (int i = 0; i < 8; i++) {
            h ^= v & 0xff;
            v >>= 8;
            h *= FNV_PRIME_64;
        }
        return Math.abs(h) & Long.MAX_VALUE; // Math.abs(Long.MIN_VALUE) is negative
    }
}

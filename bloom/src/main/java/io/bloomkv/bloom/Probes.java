package io.bloomkv.bloom;

/** How probe positions are derived from the one 64-bit key hash (hash version 1). */
final class Probes {
    private Probes() {}

    /**
     * The step of double hashing, g_i = h + i * step (mod 2^64): MurmurHash3's fmix64 of the hash, a bijection,
     * so h and step together still carry exactly the key's 64 hash bits and are not linearly related.
     */
    static long step(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /**
     * Maps x, read as an unsigned 64-bit fraction of 2^64, onto [0, n) by multiply-shift (Lemire's fastrange):
     * floor(x * n / 2^64). Uses the high bits of x, which double hashing keeps well mixed. Requires n > 0.
     */
    static long reduce(long x, long n) {
        return Math.multiplyHigh(x, n) + ((x >> 63) & n);
    }

    /** floor(x32 * n / 2^32) for the low 32 bits of x and 0 < n < 2^31. */
    static long reduce32(long x, long n) {
        return ((x & 0xFFFF_FFFFL) * n) >>> 32;
    }
}

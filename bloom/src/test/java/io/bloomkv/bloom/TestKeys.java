package io.bloomkv.bloom;

/** Key encodings and seeds shared by the tests. */
final class TestKeys {
    private TestKeys() {}

    /** The 8 little-endian bytes of {@code v}: the "integer key" of the FPR tests. */
    static byte[] longKey(long v) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (v >>> (8 * i));
        }
        return b;
    }

    /**
     * A filter of {@code kind} holding {@code longKey(keys[i])} for every i: {@link Filters#create} plus adds for the
     * dynamic kinds, {@link Filters#build} for the static ones (RIBBON).
     */
    static Filter filled(FilterKind kind, long[] keys, double bitsPerKey) {
        if (kind.isStatic()) {
            long[] hashes = new long[keys.length];
            for (int i = 0; i < keys.length; i++) {
                hashes[i] = Hashing.hash64(longKey(keys[i]));
            }
            return Filters.build(kind, hashes, bitsPerKey);
        }
        Filter f = Filters.create(kind, keys.length, bitsPerKey);
        for (long k : keys) {
            f.add(longKey(k));
        }
        return f;
    }

    /** {@link #filled} with keys 0 .. n-1. */
    static Filter filled(FilterKind kind, int n, double bitsPerKey) {
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            keys[i] = i;
        }
        return filled(kind, keys, bitsPerKey);
    }

    /**
     * The seed named by system property {@code name}, or a fresh one; printed so that a failing run can be
     * replayed with {@code -Dname=seed}.
     */
    static long seed(String name) {
        String fixed = System.getProperty(name);
        long seed = fixed != null
                ? Long.parseLong(fixed)
                : System.nanoTime() ^ Thread.currentThread().getId() * 0x9E3779B97F4A7C15L;
        System.out.println("seed: -D" + name + "=" + seed);
        return seed;
    }
}

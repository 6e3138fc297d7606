package io.bloomkv.bloom;

/** Key encodings and seeds shared by the tests. */
final class TestKeys {
    private TestKeys() {
    }

    /** The 8 little-endian bytes of {@code v}: the "integer key" of the FPR tests. */
    static byte[] longKey(long v) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (v >>> (8 * i));
        }
        return b;
    }

    /**
     * The seed named by system property {@code name}, or a fresh one; printed so that a failing run can be
     * replayed with {@code -Dname=seed}.
     */
    static long seed(String name) {
        String fixed = System.getProperty(name);
        long seed = fixed != null ? Long.parseLong(fixed) : System.nanoTime() ^ Thread.currentThread().getId() * 0x9E3779B97F4A7C15L;
        System.out.println("seed: -D" + name + "=" + seed);
        return seed;
    }
}

package io.bloomkv.bloom;

import net.openhft.hashing.LongHashFunction;

/**
 * The one hash every filter probe is derived from: 64-bit XXH3 with seed 0 (hash version 1 in the
 * serialized header). The result does not depend on the platform's byte order.
 */
public final class Hashing {
    /** Identifies this hash function and the probe derivation in serialized filters. */
    public static final int HASH_VERSION = 1;

    static {
        JvmEnvironment.ensureInitialized(); // before zero-allocation-hashing's Unsafe access is initialised
    }

    private static final LongHashFunction XXH3 = LongHashFunction.xx3();

    private Hashing() {}

    /** XXH3-64 (seed 0) of all bytes of {@code key}. */
    public static long hash64(byte[] key) {
        return XXH3.hashBytes(key);
    }

    /** XXH3-64 (seed 0) of {@code key[off, off+len)}. */
    public static long hash64(byte[] key, int off, int len) {
        return XXH3.hashBytes(key, off, len);
    }
}

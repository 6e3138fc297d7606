package io.bloomkv.bench.workload;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Seeded value bytes: slices of a 1 MiB random pool. Every call returns a fresh array (an engine
 * may keep the array it is given).
 */
public final class ValueSource {
    private static final int POOL = 1 << 20;
    private final byte[] pool;
    private final int valueSize;

    public ValueSource(int valueSize, long seed) {
        if (valueSize < 1 || valueSize > POOL / 2) {
            throw new IllegalArgumentException("valueSize must be in [1, " + POOL / 2 + "], got " + valueSize);
        }
        this.valueSize = valueSize;
        this.pool = new byte[POOL];
        new SplittableRandom(seed).nextBytes(pool);
    }

    public int valueSize() {
        return valueSize;
    }

    /** The value written for {@code id} by write number {@code version} (deterministic). */
    public byte[] value(long id, long version) {
        int off = offset(id, version);
        return Arrays.copyOfRange(pool, off, off + valueSize);
    }

    /** True when {@code v} equals {@link #value(long, long)}, without allocating. */
    public boolean matches(byte[] v, long id, long version) {
        int off = offset(id, version);
        return v.length == valueSize && Arrays.equals(v, 0, valueSize, pool, off, off + valueSize);
    }

    private int offset(long id, long version) {
        long h = KeySpace.mix64(id * 31 + version);
        return (int) Long.remainderUnsigned(h, POOL - valueSize);
    }
}

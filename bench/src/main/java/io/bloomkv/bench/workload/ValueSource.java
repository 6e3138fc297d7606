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
        long h = KeySpace.mix64(id * 31 + version);
        int off = (int) Long.remainderUnsigned(h, POOL - valueSize);
        return Arrays.copyOfRange(pool, off, off + valueSize);
    }
}

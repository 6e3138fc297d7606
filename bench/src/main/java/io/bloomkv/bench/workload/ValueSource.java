package io.bloomkv.bench.workload;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Seeded value bytes: slices of a 1 MiB pool. Every call returns a fresh array (an engine may keep
 * the array it is given). The pool is random bytes, or, with a compressibility below 1, built as
 * db_bench's RandomGenerator builds it: 100-byte pieces, each {@code round(100 * ratio)} random
 * bytes repeated to fill the piece, and a value starts at a piece boundary (db_bench hands out
 * consecutive pieces), so a value compresses to about {@code ratio} of its size.
 */
public final class ValueSource {
    private static final int POOL = 1 << 20;
    private final byte[] pool;
    private final int valueSize;
    /** Values start at a piece boundary (compressible pools), as db_bench's generator hands out consecutive pieces. */
    private final boolean pieceAligned;

    /** Bytes of one repeated piece of the pool (db_bench's CompressibleString length). */
    static final int PIECE = 100;

    public ValueSource(int valueSize, long seed) {
        this(valueSize, seed, 1.0);
    }

    /** Values compressing to about {@code compressibility} (in (0, 1]; 1 = incompressible random bytes). */
    public ValueSource(int valueSize, long seed, double compressibility) {
        if (valueSize < 1 || valueSize > POOL / 2) {
            throw new IllegalArgumentException("valueSize must be in [1, " + POOL / 2 + "], got " + valueSize);
        }
        if (!(compressibility > 0 && compressibility <= 1)) {
            throw new IllegalArgumentException("compressibility must be in (0, 1], got " + compressibility);
        }
        this.valueSize = valueSize;
        this.pool = new byte[POOL];
        this.pieceAligned = compressibility < 1;
        SplittableRandom rnd = new SplittableRandom(seed);
        if (compressibility >= 1) {
            rnd.nextBytes(pool);
            return;
        }
        int raw = Math.max(1, (int) Math.round(PIECE * compressibility));
        byte[] piece = new byte[raw];
        for (int off = 0; off < POOL; off += PIECE) {
            rnd.nextBytes(piece);
            for (int i = 0; i < PIECE && off + i < POOL; i++) {
                pool[off + i] = piece[i % raw];
            }
        }
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

    /** True when {@code v[from .. from + valueSize)} equals {@link #value(long, long)}, without allocating. */
    public boolean matches(byte[] v, int from, long id, long version) {
        int off = offset(id, version);
        return from >= 0
                && v.length - from >= valueSize
                && Arrays.equals(v, from, from + valueSize, pool, off, off + valueSize);
    }

    /** Copies {@link #value(long, long)} into {@code dst} at {@code at}. */
    void copyValue(long id, long version, byte[] dst, int at) {
        System.arraycopy(pool, offset(id, version), dst, at, valueSize);
    }

    private int offset(long id, long version) {
        long h = KeySpace.mix64(id * 31 + version);
        if (pieceAligned) {
            return PIECE * (int) Long.remainderUnsigned(h, (POOL - valueSize) / PIECE);
        }
        return (int) Long.remainderUnsigned(h, POOL - valueSize);
    }
}

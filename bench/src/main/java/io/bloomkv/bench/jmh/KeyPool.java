package io.bloomkv.bench.jmh;

import io.bloomkv.bench.workload.KeySpace;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The keys a point-read benchmark cycles through: {@link #SIZE} loaded and {@link #SIZE} absent keys
 * (absent keys lie between loaded ones, so only a filter can reject them), drawn once per trial with
 * a fixed seed, and a per-thread {@link Cursor} over them.
 */
public final class KeyPool {
    static final int SIZE = 1 << 16;
    private static final long SEED = 7;

    final byte[][] present = new byte[SIZE][];
    final byte[][] absent = new byte[SIZE][];

    /** Draws from the first {@code loaded} keys of {@code ks} and from its missing keys. */
    KeyPool(KeySpace ks, long loaded) {
        SplittableRandom rnd = new SplittableRandom(SEED);
        for (int i = 0; i < SIZE; i++) {
            present[i] = ks.key(ks.loadedId(rnd.nextLong(loaded)));
            absent[i] = ks.key(ks.missingId(rnd.nextLong(ks.missingCount())));
        }
    }

    /** A thread's position in the pool. */
    @State(Scope.Thread)
    public static class Cursor {
        private int i;

        int next() {
            i = (i + 1) & (SIZE - 1);
            return i;
        }
    }
}

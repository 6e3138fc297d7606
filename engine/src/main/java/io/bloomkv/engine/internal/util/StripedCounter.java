package io.bloomkv.engine.internal.util;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A sum updated from many threads: {@link java.util.concurrent.atomic.LongAdder}'s use, with its stripes allocated up
 * front. A thread adds to the stripe its id selects (an atomic add on a cache line of that stripe's own), so threads on
 * different stripes do not contend; threads that share a stripe stay correct (the add is atomic), only slower.
 *
 * <p>Why not LongAdder: LongAdder starts with one shared cell and inflates to stripes at its first contended update.
 * That switch flips a branch in {@code LongAdder.add} that every compiled method inlining it had never seen taken, so
 * the first contention between two readers (typically a fraction of a second into a fresh process) deoptimizes and
 * recompiles every compiled read method that counts: the whole get path. Here the update is the same straight-line
 * code from the first call to the last.
 *
 * <p>{@link #sum} is not an atomic snapshot: updates made while it runs may or may not be in it (as LongAdder's).
 */
public final class StripedCounter {
    /** Longs per stripe: 128 bytes, two cache lines (the adjacent-line prefetch pairs them). */
    private static final int SPACING = 16;

    /** Stripes: the next power of two >= 2 x the processors, at most 64. */
    private static final int STRIPES = Math.min(
            64, Integer.highestOneBit(Math.max(1, 2 * Runtime.getRuntime().availableProcessors() - 1)) << 1);

    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] cells = new long[STRIPES * SPACING];

    /** Adds {@code x}. */
    public void add(long x) {
        CELL.getAndAdd(cells, stripe(), x);
    }

    /** Adds 1. */
    public void increment() {
        CELL.getAndAdd(cells, stripe(), 1L);
    }

    /** The current sum of every stripe. */
    public long sum() {
        long s = 0;
        for (int i = 0; i < cells.length; i += SPACING) {
            s += (long) CELL.getVolatile(cells, i);
        }
        return s;
    }

    /** Sets every stripe to zero; updates made while it runs may survive it (as LongAdder's). */
    public void reset() {
        for (int i = 0; i < cells.length; i += SPACING) {
            CELL.setVolatile(cells, i, 0L);
        }
    }

    @Override
    public String toString() {
        return Long.toString(sum());
    }

    /** The current thread's stripe's index in {@link #cells}: thread ids are consecutive, so live threads spread. */
    private static int stripe() {
        return ((int) Thread.currentThread().getId() & (STRIPES - 1)) * SPACING;
    }
}

package io.bloomkv.bench.workload;

/**
 * Draws the load index ({@code 0 <= index < num}) of the next existing key an operation touches.
 * One generator per thread: implementations are not thread-safe, and a generator built from the
 * same seed returns the same sequence.
 */
@FunctionalInterface
public interface KeyGenerator {
    /** The next load index, in {@code [0, num)}. */
    long nextIndex();
}

package io.bloomkv.bloom;

/**
 * Two filters cannot be combined by {@link Filters#union} or {@link Filters#intersection}: they differ in kind, size
 * (m), probe count (k), hash version or seed, so the same key does not set the same bits in both; or their kind has
 * no sound bitwise combination (RIBBON: a filter is the solution of a linear system, and the OR or AND of two
 * solutions answers neither key set).
 */
public class IncompatibleFiltersException extends IllegalArgumentException {
    public IncompatibleFiltersException(String message) {
        super(message);
    }
}

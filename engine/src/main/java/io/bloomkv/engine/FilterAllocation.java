package io.bloomkv.engine;

/** How the filter memory budget ({@link Options#bitsPerKey}) is spread over the levels. */
public enum FilterAllocation {
    /** Every table gets {@link Options#bitsPerKey} bits per key. */
    UNIFORM,
    /**
     * Each level gets its own bits per key so that the sum of the levels' false-positive rates is
     * minimal for the same total filter memory as {@link #UNIFORM} (Dayan, Athanassoulis, Idreos:
     * "Monkey: Optimal Navigable Key-Value Store", SIGMOD 2017): a level's false-positive rate is
     * made proportional to its number of entries, so the small upper levels get more bits per key
     * and the largest level fewer. See {@code io.bloomkv.engine.internal.filter.MonkeyAllocation}.
     */
    MONKEY
}

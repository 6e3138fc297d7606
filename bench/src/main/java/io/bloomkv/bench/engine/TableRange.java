package io.bloomkv.bench.engine;

/**
 * One live table's user-key range and the false-positive rate its filter is expected to have
 * ({@code NaN} when it has no filter). A point read of a key inside the range asks this table's
 * filter; with {@code rangeChecked} false the engine asks the filter without checking the range
 * first (RocksDB does so for level-0 files when level 0 is the only non-empty level and holds at most
 * 3 files).
 */
public record TableRange(byte[] smallestUserKey, byte[] largestUserKey, double expectedFpr, boolean rangeChecked)
        implements java.io.Serializable {

    /** True when a point read of {@code key} asks this table's filter. */
    public boolean covers(byte[] key) {
        return !rangeChecked
                || (java.util.Arrays.compareUnsigned(smallestUserKey, key) <= 0
                        && java.util.Arrays.compareUnsigned(key, largestUserKey) <= 0);
    }
}

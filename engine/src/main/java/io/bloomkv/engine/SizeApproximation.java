package io.bloomkv.engine;

/**
 * What {@link Db#approximateSizes} counts (rocksdbjni's {@code SizeApproximationFlag}, RocksDB's
 * {@code DB::SizeApproximationFlags}). No flag at all counts the table files only, as RocksDB's C++
 * {@code GetApproximateSizes} does by default.
 */
public enum SizeApproximation {
    /** The memtables' bytes in the range, estimated from their skip lists (no entry is read). */
    INCLUDE_MEMTABLES,
    /** The table files' bytes in the range, from their indexes (in memory: no data block is read). */
    INCLUDE_FILES
}

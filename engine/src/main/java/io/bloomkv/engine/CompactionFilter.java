package io.bloomkv.engine;

import java.util.Objects;

/**
 * Decides, during compactions, what becomes of each value the compaction writes (RocksDB's {@code CompactionFilter}):
 * keep it, remove it, or change it. Set with {@link Options#compactionFilter}. Typical uses: dropping data by a rule
 * (expired sessions, a deleted tenant's keys found by a prefix), rewriting values lazily.
 *
 * <p>Contract: called from the compaction thread for the newest value of a key (a put, or the value a merge chain
 * collapses into) when it is newer than every live snapshot, so a value some snapshot can still read, an older
 * version, a merge operand or a tombstone is never shown to it (RocksDB calls its filter only for keys no snapshot
 * protects, too, unless told to ignore snapshots). {@link Decision#REMOVE} makes the key read as absent (a tombstone
 * is written when an older version may remain, otherwise nothing); {@link Decision#changeValue} replaces the value.
 * A value is filtered when a compaction rewrites it: until then reads return it as written. Must be deterministic, fast, free
 * of side effects on the database, and thread-safe. A filter that throws fails the compaction (a background error,
 * reported on the next write), never a silent loss.
 */
@FunctionalInterface
public interface CompactionFilter {
    /** What the compaction does with one value. */
    final class Decision {
        /** Keep the value as it is. */
        public static final Decision KEEP = new Decision(null, false);
        /** Remove the key (as a delete would). */
        public static final Decision REMOVE = new Decision(null, true);

        private final byte[] newValue;
        private final boolean remove;

        private Decision(byte[] newValue, boolean remove) {
            this.newValue = newValue;
            this.remove = remove;
        }

        /** Replace the value by {@code newValue} (RocksDB's {@code kChangeValue}). */
        public static Decision changeValue(byte[] newValue) {
            return new Decision(Objects.requireNonNull(newValue, "newValue").clone(), false);
        }

        public boolean isRemove() {
            return remove;
        }

        /** The replacement value, or null for KEEP and REMOVE. */
        public byte[] newValue() {
            return newValue == null ? null : newValue.clone();
        }

        byte[] newValueNoCopy() {
            return newValue;
        }
    }

    /**
     * @param level       the level the compaction writes to
     * @param bottommost  whether no level below {@code level} may hold the key (RocksDB's {@code is_bottommost_level},
     *                    per key): a removed key then needs no tombstone
     * @param key         the user key (do not modify)
     * @param value       the value (do not modify)
     * @return never null
     */
    Decision filter(int level, boolean bottommost, byte[] key, byte[] value);
}

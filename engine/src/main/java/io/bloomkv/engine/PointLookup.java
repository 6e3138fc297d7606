package io.bloomkv.engine;

import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.table.ReadCounters;

/**
 * The point read that looks past the newest entry of a key (RocksDB's {@code DBImpl::GetImpl} with a
 * {@code GetContext}): used by {@link Db#get} and {@link Db#multiGet} when the newest entry is a merge operand.
 * Asks the memtables, then the tables in {@link io.bloomkv.engine.internal.version.Version#get}'s order, each table's
 * filter before any block, collecting operands until a value, a tombstone or the oldest table, then merges them.
 */
final class PointLookup {
    private PointLookup() {}

    /** The value of {@code key} at {@code sequence} in {@code sv}, or null; {@code hash} is its {@code Hashing.hash64}. */
    static byte[] get(
            SuperVersion sv, byte[] key, long hash, long sequence, MergeOperator operator, ReadCounters counters) {
        KeyLookup lookup = new KeyLookup(key, sequence, operator);
        if (!sv.mem.collect(hash, lookup)) {
            for (MemTable imm : sv.imms) {
                if (imm.collect(hash, lookup)) {
                    break;
                }
            }
            if (!lookup.isDone()) {
                sv.version.collect(hash, lookup);
            }
        }
        byte[] value = lookup.finish();
        if (lookup.sawOperands()) {
            counters.mergeLookups.increment();
        }
        return value;
    }
}

package io.bloomkv.engine;

import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.table.ReadCounters;

/**
 * The point read that looks past the newest entry of a key (RocksDB's {@code DBImpl::GetImpl} with a
 * {@code GetContext}): used by {@link Db#get} and {@link Db#multiGet} when the newest entry is a merge operand.
 * Asks the memtables, then the tables in {@link io.bloomkv.engine.internal.version.Version#get}'s order, each table's
 * filter before any block, collecting operands until a value, a tombstone or the oldest table, then merges them.
 * {@link #withoutFileReads} is the same walk with blocks from the block cache only ({@link Db#keyMayExist}).
 */
final class PointLookup {
    private PointLookup() {}

    /** The value of {@code key} at {@code sequence} in {@code sv}, or null; {@code hash} is its {@code Hashing.hash64}. */
    static byte[] get(
            SuperVersion sv, byte[] key, long hash, long sequence, MergeOperator operator, ReadCounters counters) {
        KeyLookup lookup = new KeyLookup(key, sequence, operator);
        walk(sv, hash, lookup, false);
        byte[] value = lookup.finish();
        if (lookup.sawOperands()) {
            counters.mergeLookups.increment();
        }
        return value;
    }

    /**
     * {@link #get}'s walk without a file read (RocksDB's {@code kBlockCacheTier}): the memtables as for a get, then
     * each table's filter as a get asks it and, where the filter lets the key through, its blocks from the block cache
     * only ({@link io.bloomkv.engine.internal.version.Version#collectCached}). Returns the lookup: either
     * {@link KeyLookup#isIncomplete()} (a table would need a block read: the key may or may not exist), or complete:
     * then {@link KeyLookup#finish()} gives the value {@link #get} returns (merging the operands collected, if any).
     * Counts nothing.
     */
    static KeyLookup withoutFileReads(SuperVersion sv, byte[] key, long hash, long sequence, MergeOperator operator) {
        KeyLookup lookup = new KeyLookup(key, sequence, operator);
        walk(sv, hash, lookup, true);
        return lookup;
    }

    /** Feeds {@code lookup} from the memtables, newest first, then the tables (cache-only when {@code cacheOnly}). */
    private static void walk(SuperVersion sv, long hash, KeyLookup lookup, boolean cacheOnly) {
        if (!sv.mem.collect(hash, lookup)) {
            for (MemTable imm : sv.imms) {
                if (imm.collect(hash, lookup)) {
                    break;
                }
            }
            if (!lookup.isDone()) {
                if (cacheOnly) {
                    sv.version.collectCached(hash, lookup);
                } else {
                    sv.version.collect(hash, lookup);
                }
            }
        }
    }
}

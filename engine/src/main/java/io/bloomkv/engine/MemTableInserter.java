package io.bloomkv.engine;

import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.memtable.MemTable;

/**
 * Adds each operation of a write batch to a memtable under its sequence number (the write path and WAL replay). Keeps
 * no array it is handed (the memtable copies keys, values and tombstone bounds), so the batch may lend its keys
 * ({@link WriteBatch#forEachLendingKeys}).
 */
final class MemTableInserter {
    private MemTableInserter() {}

    static WriteBatch.Handler into(MemTable target) {
        return new WriteBatch.Handler() {
            @Override
            public void put(long sequence, byte[] key, byte[] value) {
                target.add(sequence, ValueType.PUT, key, value);
            }

            @Override
            public void put(long sequence, byte[] key, byte[] buf, int valueOffset, int valueLength) {
                target.add(sequence, ValueType.PUT, key, buf, valueOffset, valueLength); // copied into the arena
            }

            @Override
            public void delete(long sequence, byte[] key) {
                target.add(sequence, ValueType.DELETE, key, null);
            }

            @Override
            public void merge(long sequence, byte[] key, byte[] operand) {
                target.add(sequence, ValueType.MERGE, key, operand);
            }

            @Override
            public void deleteRange(long sequence, byte[] begin, byte[] end) {
                target.addRangeTombstone(sequence, begin, end);
            }
        };
    }
}

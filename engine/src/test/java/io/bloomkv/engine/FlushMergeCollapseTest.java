package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flushes collapse merge operand chains as compactions do (one {@link io.bloomkv.engine.internal.compaction.MergeCollapser}):
 * a value (or tombstone) with operands over it in the memtable becomes one value; operands alone are combined by
 * partial merges; entries a live snapshot reads on their own stay as they are.
 */
class FlushMergeCollapseTest {
    @TempDir
    Path dir;

    private static long entries(Db db) {
        return db.tables().stream().mapToLong(TableInfo::entries).sum();
    }

    private static long u64(byte[] v) {
        return MergeOperators.decodeUint64(v);
    }

    private static byte[] n(long v) {
        return MergeOperators.encodeUint64(v);
    }

    /** uint64Add without partial merges: operands only combine onto a value. */
    private static final MergeOperator ADD_FULL_ONLY = new MergeOperator() {
        @Override
        public String name() {
            return "addFullOnly";
        }

        @Override
        public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
            return MergeOperators.uint64Add().fullMerge(key, existingValue, operands);
        }
    };

    @Test
    void aValueWithOperandsOverItIsFlushedAsOneValue() {
        try (Db db = Db.open(dir, Options.defaults().mergeOperator(MergeOperators.uint64Add()))) {
            for (int i = 0; i < 50; i++) {
                db.put(TestKeys.key(i), n(100));
                for (int j = 1; j <= 4; j++) {
                    db.merge(TestKeys.key(i), n(j));
                }
            }
            db.delete(bytes("gone"));
            db.merge(bytes("gone"), n(7));
            db.flush();
            assertThat(entries(db)).isEqualTo(51); // one value per key
            assertThat(db.tables()).allMatch(t -> t.level() == 0);
            assertThat(u64(db.get(TestKeys.key(3)))).isEqualTo(110);
            assertThat(u64(db.get(bytes("gone")))).isEqualTo(7); // merged onto the tombstone: onto no value
        }
    }

    @Test
    void operandsAloneArePartiallyMergedAndStillApplyToTheValueInADeeperTable() {
        try (Db db = Db.open(dir, Options.defaults().mergeOperator(MergeOperators.uint64Add()))) {
            db.put(bytes("k"), n(1000));
            db.flush();
            for (int j = 1; j <= 5; j++) {
                db.merge(bytes("k"), n(j));
            }
            db.flush();
            assertThat(entries(db)).isEqualTo(2); // the value, and one combined operand
            assertThat(u64(db.get(bytes("k")))).isEqualTo(1015);
        }
        try (Db db = Db.open(dir.resolve("full-only"), Options.defaults().mergeOperator(ADD_FULL_ONLY))) {
            for (int j = 1; j <= 5; j++) {
                db.merge(bytes("k"), n(j));
            }
            db.flush();
            assertThat(entries(db)).isEqualTo(5); // no partial merge, no value in reach: kept as they are
            assertThat(u64(db.get(bytes("k")))).isEqualTo(15);
        }
    }

    @Test
    void entriesALiveSnapshotReadsStayAsTheyAre() {
        try (Db db = Db.open(dir, Options.defaults().mergeOperator(ADD_FULL_ONLY))) {
            db.put(bytes("k"), n(10));
            db.merge(bytes("k"), n(1));
            Snapshot snap = db.getSnapshot();
            try {
                db.merge(bytes("k"), n(2));
                db.merge(bytes("k"), n(3));
                db.flush();
                // The two newer operands as they are, and the value with the operand every reader sees: one value.
                assertThat(entries(db)).isEqualTo(3);
                assertThat(u64(db.get(bytes("k"), ReadOptions.defaults().snapshot(snap))))
                        .isEqualTo(11);
                assertThat(u64(db.get(bytes("k")))).isEqualTo(16);
                try (DbIterator it = db.iterator(ReadOptions.defaults().snapshot(snap))) {
                    it.seekToFirst();
                    assertThat(u64(it.value())).isEqualTo(11);
                }
            } finally {
                snap.close();
            }
        }
    }

    @Test
    void aRangeDeletionInTheMemtableEndsTheChainAsADeleteWould() {
        try (Db db = Db.open(dir, Options.defaults().mergeOperator(MergeOperators.stringAppend(',')))) {
            db.put(bytes("b"), bytes("old"));
            db.flush(); // the old value in a table: the tombstone must hide it
            db.merge(bytes("b"), bytes("x"));
            db.deleteRange(bytes("a"), bytes("c"));
            db.merge(bytes("b"), bytes("y"));
            db.merge(bytes("b"), bytes("z"));
            db.flush();
            assertThat(str(db.get(bytes("b")))).isEqualTo("y,z");
            db.compactRange(null, null);
            assertThat(str(db.get(bytes("b")))).isEqualTo("y,z");
        }
    }

    @Test
    void recoveryFlushesCollapseToo() {
        Options o = Options.defaults().mergeOperator(MergeOperators.uint64Add());
        try (Db db = Db.open(dir, o)) {
            db.put(bytes("k"), n(1));
            for (int j = 0; j < 10; j++) {
                db.merge(bytes("k"), n(1));
            }
        } // close: the memtable is in the WAL; the next open replays and flushes it
        try (Db db = Db.open(dir, o)) {
            assertThat(u64(db.get(bytes("k")))).isEqualTo(11);
            db.flush();
            assertThat(entries(db)).isEqualTo(1);
        }
    }
}

package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.compaction.MergeCollapser;
import io.bloomkv.engine.internal.iterator.MergingIterator;
import io.bloomkv.engine.internal.memtable.MemTable;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Merge operators: the built-ins' encodings, collapsing in compactions, partial merges, and the typed errors. */
class MergeOperatorTest {
    @TempDir
    Path dir;

    @Test
    void builtInsMatchRocksDbEncodings() {
        MergeOperator add = MergeOperators.uint64Add();
        byte[] r = add.fullMerge(
                bytes("k"),
                MergeOperators.encodeUint64(40),
                List.of(MergeOperators.encodeUint64(1), MergeOperators.encodeUint64(-1L), bytes("bad")));
        assertThat(MergeOperators.decodeUint64(r))
                .isEqualTo(40); // 40 + 1 + (2^64 - 1) wraps; a non-8-byte operand is 0
        assertThat(MergeOperators.encodeUint64(0x0102)).containsExactly(2, 1, 0, 0, 0, 0, 0, 0);
        MergeOperator app = MergeOperators.stringAppend(',');
        assertThat(str(app.fullMerge(bytes("k"), null, List.of(bytes(""), bytes("b")))))
                .isEqualTo(",b");
        assertThat(str(app.fullMerge(bytes("k"), bytes("a"), List.of(bytes("b"), bytes("c")))))
                .isEqualTo("a,b,c");
        assertThat(str(app.partialMerge(bytes("k"), bytes("b"), bytes("c")))).isEqualTo("b,c");
    }

    @Test
    void countersSurviveFlushCompactionAndReopen() {
        Options o = Options.defaults().mergeOperator(MergeOperators.uint64Add());
        try (Db db = Db.open(dir, o)) {
            for (int round = 0; round < 5; round++) {
                for (int i = 0; i < 100; i++) {
                    db.merge(TestKeys.key(i), MergeOperators.encodeUint64(i));
                }
                db.flush();
            }
            db.put(TestKeys.key(7), MergeOperators.encodeUint64(1000));
            db.merge(TestKeys.key(7), MergeOperators.encodeUint64(1));
            assertThat(MergeOperators.decodeUint64(db.get(TestKeys.key(3)))).isEqualTo(15);
            db.compactRange(null, null);
            Stats s = db.stats();
            assertThat(s.tableCount()).isGreaterThan(0);
        }
        try (Db db = Db.open(dir, o)) {
            assertThat(MergeOperators.decodeUint64(db.get(TestKeys.key(3)))).isEqualTo(15);
            assertThat(MergeOperators.decodeUint64(db.get(TestKeys.key(7)))).isEqualTo(1001);
            assertThat(MergeOperators.decodeUint64(db.get(TestKeys.key(99)))).isEqualTo(5 * 99);
            // After a full compaction each counter is one value: the operand chains were collapsed.
            long operandsLeft = 0;
            for (TableInfo t : db.tables()) {
                operandsLeft += t.entries();
            }
            assertThat(operandsLeft).as("one entry per key after compactRange").isEqualTo(100);
        }
    }

    @Test
    void compactionCombinesOperandsWithPartialMergeWhenTheValueMayBeBelow() {
        AtomicInteger partials = new AtomicInteger();
        MergeOperator counting = new MergeOperator() {
            @Override
            public String name() {
                return "counting";
            }

            @Override
            public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
                return MergeOperators.uint64Add().fullMerge(key, existingValue, operands);
            }

            @Override
            public byte[] partialMerge(byte[] key, byte[] left, byte[] right) {
                partials.incrementAndGet();
                return MergeOperators.uint64Add().partialMerge(key, left, right);
            }
        };
        MemTable m = new MemTable(1);
        m.add(5, ValueType.MERGE, bytes("c"), MergeOperators.encodeUint64(1));
        m.add(6, ValueType.MERGE, bytes("c"), MergeOperators.encodeUint64(2));
        m.add(7, ValueType.MERGE, bytes("c"), MergeOperators.encodeUint64(4));
        m.add(8, ValueType.PUT, bytes("d"), bytes("x"));
        try (MergingIterator it = new MergingIterator(List.of(m.iterator()))) {
            it.seekToFirst();
            List<MergeCollapser.Out> out = MergeCollapser.collapse(it, bytes("c"), counting, true, null);
            assertThat(out).hasSize(1);
            assertThat(InternalKey.type(out.get(0).internalKey())).isEqualTo(ValueType.MERGE);
            assertThat(InternalKey.sequence(out.get(0).internalKey())).isEqualTo(7);
            assertThat(MergeOperators.decodeUint64(out.get(0).value())).isEqualTo(7);
            assertThat(partials.get()).isEqualTo(2);
            assertThat(str(InternalKey.userKey(it.key())))
                    .as("left on the next key")
                    .isEqualTo("d");
            // No value below: the chain becomes one PUT.
            it.seekToFirst();
            out = MergeCollapser.collapse(it, bytes("c"), counting, false, null);
            assertThat(InternalKey.type(out.get(0).internalKey())).isEqualTo(ValueType.PUT);
            assertThat(MergeOperators.decodeUint64(out.get(0).value())).isEqualTo(7);
            // An operator that declines partial merges keeps every operand.
            it.seekToFirst();
            out = MergeCollapser.collapse(
                    it,
                    bytes("c"),
                    new MergeOperator() {
                        @Override
                        public String name() {
                            return "declining";
                        }

                        @Override
                        public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
                            return operands.get(0);
                        }
                    },
                    true,
                    null);
            assertThat(out).hasSize(3);
        }
    }

    @Test
    void mergeWithoutOperatorIsRefused() {
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThatThrownBy(() -> db.merge(bytes("k"), bytes("v"))).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.write(new WriteBatch().merge(bytes("k"), bytes("v"))))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThat(db.get(bytes("k"))).isNull();
        }
    }

    @Test
    void openingADatabaseWithOperandsWithoutOperatorFails() {
        try (Db db = Db.open(dir, Options.defaults().mergeOperator(MergeOperators.stringAppend(',')))) {
            db.merge(bytes("k"), bytes("a")); // left in the WAL: replayed into a table on open
        }
        assertThatThrownBy(() -> Db.open(dir, Options.defaults()))
                .isInstanceOf(MergeOperatorException.class)
                .hasMessageContaining("merge operands");
        assertThatThrownBy(() -> Db.open(dir, Options.defaults().readOnly(true)))
                .isInstanceOf(MergeOperatorException.class);
        try (Db db = Db.open(dir, Options.defaults().mergeOperator(MergeOperators.stringAppend(',')))) {
            assertThat(str(db.get(bytes("k")))).isEqualTo("a");
        }
    }

    @Test
    void aFailingOperatorIsATypedErrorOnEveryRead() {
        AtomicBoolean fail = new AtomicBoolean(true);
        MergeOperator flaky = new MergeOperator() {
            @Override
            public String name() {
                return "flaky";
            }

            @Override
            public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
                if (fail.get()) {
                    throw new IllegalStateException("boom");
                }
                return operands.get(operands.size() - 1);
            }
        };
        try (Db db = Db.open(dir, Options.defaults().mergeOperator(flaky))) {
            db.put(bytes("a"), bytes("1"));
            db.merge(bytes("b"), bytes("2"));
            assertThatThrownBy(() -> db.get(bytes("b")))
                    .isInstanceOf(MergeOperatorException.class)
                    .hasRootCauseMessage("boom");
            assertThatThrownBy(() -> db.multiGet(List.of(bytes("a"), bytes("b"))))
                    .isInstanceOf(MergeOperatorException.class);
            try (DbIterator it = db.iterator()) {
                it.seekToFirst();
                assertThat(str(it.key())).isEqualTo("a");
                assertThatThrownBy(it::next).isInstanceOf(MergeOperatorException.class);
                assertThatThrownBy(it::seekToLast).isInstanceOf(MergeOperatorException.class);
            }
            assertThat(str(db.get(bytes("a")))).isEqualTo("1");
            fail.set(false);
            assertThat(str(db.get(bytes("b")))).isEqualTo("2");
        }
    }
}

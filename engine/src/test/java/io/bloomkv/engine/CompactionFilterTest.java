package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction filters against a TreeMap model: after a full compaction every value reads as the filter decided
 * (removed, changed or kept), values a live snapshot can read are never shown to it, merges' results are filtered.
 * Replay with -Dbloomkv.seed=N.
 */
class CompactionFilterTest {
    @TempDir
    Path dir;

    /** Removes values starting with 'x', upper-cases the first byte of values starting with 'c'. */
    static final class Rule implements CompactionFilter {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicBoolean sawBottommost = new AtomicBoolean();
        volatile int maxLevel;

        @Override
        public Decision filter(int level, boolean bottommost, byte[] key, byte[] value) {
            calls.incrementAndGet();
            maxLevel = Math.max(maxLevel, level);
            if (bottommost) {
                sawBottommost.set(true);
            }
            return decide(value) == null
                    ? Decision.REMOVE
                    : decide(value) == value ? Decision.KEEP : Decision.changeValue(decide(value));
        }

        /** The model's rule: null = removed, the same array = kept. */
        static byte[] decide(byte[] value) {
            if (value.length > 0 && value[0] == 'x') {
                return null;
            }
            if (value.length > 0 && value[0] == 'c') {
                byte[] v = value.clone();
                v[0] = 'C';
                return v;
            }
            return value;
        }
    }

    @Test
    void fullCompactionAppliesTheFilterToEveryValue() {
        long seed = TestKeys.seed("CompactionFilterTest");
        Random rnd = new Random(seed);
        Rule rule = new Rule();
        Options o = Options.defaults()
                .writeBufferSize(8 << 10)
                .blockSize(256)
                .targetFileSize(8 << 10)
                .compactionFilter(rule)
                .mergeOperator(MergeOperators.stringAppend(','));
        TreeMap<String, String> model = new TreeMap<>();
        try (Db db = Db.open(dir, o)) {
            for (int i = 0; i < 4000; i++) {
                String k = "k" + rnd.nextInt(300);
                int r = rnd.nextInt(10);
                if (r < 6) {
                    String v = "xck".charAt(rnd.nextInt(3)) + Integer.toString(rnd.nextInt(1000));
                    db.put(bytes(k), bytes(v));
                    model.put(k, v);
                } else if (r < 8 && !model.getOrDefault(k, "").startsWith("x")) {
                    // (An operand over an 'x' value would depend on whether a compaction removed the value first.)
                    String v = Integer.toString(rnd.nextInt(10));
                    db.merge(bytes(k), bytes(v));
                    model.merge(k, v, (a, b) -> a + "," + b);
                } else {
                    db.delete(bytes(k));
                    model.remove(k);
                }
            }
            db.compactRange(null, null);
            TreeMap<String, String> expected = new TreeMap<>();
            model.forEach((k, v) -> {
                byte[] d = Rule.decide(bytes(v));
                if (d != null) {
                    expected.put(k, str(d));
                }
            });
            TreeMap<String, String> actual = new TreeMap<>();
            try (DbIterator it = db.iterator()) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    actual.put(str(it.key()), str(it.value()));
                }
            }
            assertThat(actual).as("seed " + seed).isEqualTo(expected);
            for (String k : model.keySet()) {
                assertThat(str(db.get(bytes(k))))
                        .as("seed " + seed + " get " + k)
                        .isEqualTo(expected.get(k));
            }
        }
        assertThat(rule.calls.get()).isPositive();
        assertThat(rule.sawBottommost.get()).isTrue();
    }

    @Test
    void neverSeesAValueASnapshotCanRead() {
        Rule rule = new Rule();
        try (Db db = Db.open(dir, Options.defaults().compactionFilter(rule))) {
            db.put(bytes("a"), bytes("x-old"));
            try (Snapshot s = db.getSnapshot()) {
                db.put(bytes("b"), bytes("x-new")); // newer than the snapshot: filtered
                db.compactRange(null, null);
                assertThat(str(db.get(bytes("a"), ReadOptions.defaults().snapshot(s))))
                        .isEqualTo("x-old");
                assertThat(str(db.get(bytes("a"))))
                        .as("protected by the snapshot")
                        .isEqualTo("x-old");
                assertThat(db.get(bytes("b"))).as("removed").isNull();
            }
            db.compactRange(null, null);
            assertThat(db.get(bytes("a")))
                    .as("removed once no snapshot reads it")
                    .isNull();
        }
    }

    @Test
    void aRemovedValueLeavesATombstoneOverAnOlderVersion() {
        Rule rule = new Rule();
        try (Db db = Db.open(dir, Options.defaults().compactionFilter(rule).autoCompaction(false))) {
            db.put(bytes("a"), bytes("keep"));
            db.put(bytes("z"), bytes("keep"));
            db.compactRange(null, null); // "keep" in the last level
            db.put(bytes("a"), bytes("x"));
            db.flush();
            // Level 0 only, into a level above the old value: the filter's removal must hide it.
            db.compactRange(bytes("a"), bytes("a"));
            assertThat(db.get(bytes("a"))).isNull();
            assertThat(str(db.get(bytes("z")))).isEqualTo("keep");
        }
        assertThat(rule.calls.get()).as("the filter saw the new value").isPositive();
    }

    /**
     * An ingested file that overlaps nothing keeps its entries at sequence 0; with no snapshot open they are newer than
     * every snapshot and the filter sees them at the next compaction, as it sees written values.
     */
    @Test
    void seesValuesIngestedAtSequenceZero() {
        Rule rule = new Rule();
        Path file = dir.resolve("ingest.sst");
        Options o = Options.defaults().compactionFilter(rule).autoCompaction(false);
        try (TableFileWriter w = TableFileWriter.create(file, o)) {
            w.put(bytes("a"), bytes("x-gone"));
            w.put(bytes("b"), bytes("c-changed"));
            w.put(bytes("c"), bytes("kept"));
            w.finish();
        }
        try (Db db = Db.open(dir.resolve("db"), o)) {
            db.ingest(java.util.List.of(file), IngestOptions.defaults());
            assertThat(str(db.get(bytes("a")))).isEqualTo("x-gone");
            db.compactRange(null, null);
            assertThat(db.get(bytes("a"))).as("removed by the filter").isNull();
            assertThat(str(db.get(bytes("b")))).isEqualTo("C-changed");
            assertThat(str(db.get(bytes("c")))).isEqualTo("kept");
        }
        assertThat(rule.calls.get()).isEqualTo(3);
    }
}

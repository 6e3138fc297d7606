package io.bloomkv.bench.range;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code rangeseek}'s entry-by-entry check on the real engines (bloomkv with and without range filters, RocksDB with
 * its prefix Bloom): a loaded database answers every seekempty and seekshort range right; a database changed after the
 * load (a key the load never wrote put inside a range, a loaded key's value changed) stops a pass at the range that
 * sees the change, naming the engine.
 */
class RangeCheckRunTest {
    private static final long NUM = 200 * RangeSeekBench.PER_BLOCK;

    @TempDir
    Path dir;

    private RangeSeekBench.Engine open(String which) throws Exception {
        return switch (which) {
            case "bloomkv+range16" -> new RangeSeekBench.BloomKv(dir.resolve(which), 16, 10, 1 << 20);
            case "bloomkv" -> new RangeSeekBench.BloomKv(dir.resolve(which), 0, 10, 1 << 20);
            default -> new RangeSeekBench.Rocks(dir.resolve(which), 10, 1 << 20);
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"bloomkv+range16", "bloomkv", "rocksdb+prefix"})
    void aLoadedDatabaseAnswersEveryRangeRight(String which) throws Exception {
        try (RangeSeekBench.Engine e = open(which)) {
            assertThat(e.name()).isEqualTo(which);
            RangeSeekBench.load(e, NUM);
            for (boolean empty : new boolean[] {true, false}) {
                RangeSeekBench.Ranges r = RangeSeekBench.ranges(empty, NUM, 3_000, 11);
                assertThat(RangeSeekBench.pass(e, r, NUM).ops()).isPositive();
            }
            // whole blocks: every key of the block handed out, 64 of them
            long[] lo = {0, 17 * 256, (NUM / RangeSeekBench.PER_BLOCK - 1) * 256};
            long[] hi = {128, 17 * 256 + 128, (NUM / RangeSeekBench.PER_BLOCK - 1) * 256 + 255};
            RangeSeekBench.pass(e, RangeSeekBench.Ranges.of(lo, hi), NUM);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"bloomkv+range16", "bloomkv", "rocksdb+prefix"})
    void aChangedDatabaseStopsThePassAtTheRangeThatSeesIt(String which) throws Exception {
        long extra = 40 * 256 + 11; // an odd id: never loaded
        long changed = 90 * 256 + 30; // a loaded id
        try (RangeSeekBench.Engine e = open(which)) {
            RangeSeekBench.load(e, NUM);
            e.put(RangeSeekBench.key(extra), RangeSeekBench.value(extra));
            byte[] v = RangeSeekBench.value(changed);
            v[RangeSeekBench.VALUE_SIZE - 1] = 1;
            e.put(RangeSeekBench.key(changed), v);
            e.settle();

            // ranges that miss both changes pass
            RangeSeekBench.pass(
                    e, RangeSeekBench.Ranges.of(new long[] {0, extra + 1}, new long[] {64, extra + 40}), NUM);

            List<long[]> cases = List.of(
                    new long[] {extra - 5, extra + 5}, // seekshort-like: ids 40*256+6..+14
                    new long[] {40 * 256 + 11, 40 * 256 + 12}, // seekempty-like: the one odd id
                    new long[] {changed - 4, changed + 4});
            for (int c = 0; c < cases.size(); c++) {
                long[] lo = {5 * 256, 6 * 256 + 130, cases.get(c)[0]};
                long[] hi = {5 * 256 + 64, 6 * 256 + 160, cases.get(c)[1]};
                String why = c == 2 ? "has a value whose byte 99 is 0x01, the load wrote 0x00" : "key id " + extra;
                assertThatThrownBy(() -> RangeSeekBench.pass(e, RangeSeekBench.Ranges.of(lo, hi), NUM))
                        .as("case %d", c)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageStartingWith(which + ": range 2 (ids [" + lo[2] + ", " + hi[2] + ")): ")
                        .hasMessageContaining(why);
            }
        }
    }
}

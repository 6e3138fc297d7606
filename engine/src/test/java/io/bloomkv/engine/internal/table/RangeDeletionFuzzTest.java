package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Fuzz target for the range-deletion block (engine/FORMAT.md, "Range deletion block"): its decoding, then the
 * fragmenting and the queries a read makes of what it accepted. Input: byte 0 is the tombstone count the properties
 * would give, the rest the block's contents. Invariant: the only exception is the documented
 * {@link CorruptionException}; an accepted block holds exactly that many tombstones, each non-empty; the fragmented
 * list answers every query consistently with the tombstones (the newest covering one at or below a snapshot), and the
 * answer for a key outside every tombstone is 0. Corpus: src/test/resources/io/bloomkv/engine/internal/table/
 * RangeDeletionFuzzTestInputs (blocks the real TableWriter wrote).
 */
class RangeDeletionFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void rangeDeletionBlock(byte[] data) {
        if (data.length == 0) {
            return;
        }
        int expected = data[0] & 0xff;
        byte[] contents = Arrays.copyOfRange(data, 1, data.length);
        RangeTombstoneList list;
        List<RangeTombstone> raw;
        try {
            Block b = new Block(contents, Path.of("fuzz.sst"), 0);
            list = TableReader.decodeRangeTombstones(b, expected, Path.of("fuzz.sst"), 0);
        } catch (CorruptionException e) {
            return; // the documented failure
        }
        assertThat(list.tombstoneCount()).isEqualTo(expected);
        raw = list.fragments();
        // Every fragment boundary and its neighbours: the list's answer equals a scan of the fragments.
        for (RangeTombstone f : raw) {
            for (byte[] k : List.of(f.begin(), f.end(), RangeTombstone.successor(f.begin()))) {
                for (long snapshot : new long[] {0, f.sequence() - 1, f.sequence(), Long.MAX_VALUE >>> 8}) {
                    long want = 0;
                    for (RangeTombstone g : raw) {
                        if (g.covers(k) && g.sequence() <= snapshot) {
                            want = Math.max(want, g.sequence());
                        }
                    }
                    assertThat(list.maxCovering(k, snapshot)).isEqualTo(want);
                }
            }
        }
    }

    /** The writer's block decodes to what was written; overlapping tombstones fragment as RocksDB's would. */
    @Test
    void writerBlockRoundTrips() {
        List<RangeTombstone> ts = List.of(
                new RangeTombstone(b("b"), b("f"), 5),
                new RangeTombstone(b("d"), b("h"), 9),
                new RangeTombstone(b("a"), b("c"), 2));
        BlockBuilder block = new BlockBuilder(TableFormat.META_RESTART_INTERVAL);
        ts.stream()
                .sorted((x, y) -> Arrays.compareUnsigned(x.begin(), y.begin()))
                .forEach(t -> block.add(TableWriter.rangeDeletionKey(t.begin(), t.sequence()), t.end()));
        byte[] contents = block.finish();
        RangeTombstoneList list =
                TableReader.decodeRangeTombstones(new Block(contents, Path.of("t.sst"), 0), 3, Path.of("t.sst"), 0);
        assertThat(list.maxCovering(b("a"), 100)).isEqualTo(2);
        assertThat(list.maxCovering(b("b"), 100)).isEqualTo(5);
        assertThat(list.maxCovering(b("e"), 100)).isEqualTo(9);
        assertThat(list.maxCovering(b("e"), 8)).isEqualTo(5);
        assertThat(list.maxCovering(b("g"), 8)).isEqualTo(0);
        assertThat(list.maxCovering(b("h"), 100)).isEqualTo(0);
        assertThat(list.coversRange(b("b"), b("g"), 4, 100)).isTrue();
        assertThat(list.coversRange(b("b"), b("g"), 5, 100)).isFalse(); // [b, d) only has sequence 5
        assertThat(list.fragments()).hasSize(7); // [a,b)2 [b,c)5,2 [c,d)5 [d,f)9,5 [f,h)9
        byte[] seed = new byte[contents.length + 1];
        seed[0] = 3;
        System.arraycopy(contents, 0, seed, 1, contents.length);
        rangeDeletionBlock(seed);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> TableReader.decodeRangeTombstones(
                        new Block(contents, Path.of("t.sst"), 0), 2, Path.of("t.sst"), 0)))
                .isInstanceOf(CorruptionException.class);
    }

    private static byte[] b(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}

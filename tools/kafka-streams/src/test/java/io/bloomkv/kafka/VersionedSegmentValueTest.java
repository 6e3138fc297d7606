package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The raw-row paths of {@link VersionedSegmentValue} ({@code find(raw, ts)}, {@code withNewest}) against the decoded
 * row's {@code find} and {@code insertAsLatest} on random rows (tombstones, empty values, degenerate rows): same
 * bytes, same answers. Replay with {@code -Dbloomkv.seed=<seed>} (the seed is printed).
 */
class VersionedSegmentValueTest {
    @Test
    void rawPathsAnswerAsTheDecodedRow() {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("VersionedSegmentValueTest seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        int fast = 0;
        for (int round = 0; round < 2000; round++) {
            String what = "seed " + seed + " round " + round;
            long t = rnd.nextInt(1000);
            byte[] raw = rnd.nextInt(10) == 0
                    ? VersionedSegmentValue.withRecord(null, t, t).encode() // degenerate
                    : VersionedSegmentValue.withRecord(value(rnd), t, t + 1 + rnd.nextInt(5))
                            .encode();
            int versions = rnd.nextInt(12);
            for (int i = 0; i < versions; i++) {
                long next = VersionedSegmentValue.nextTimestamp(raw);
                long validFrom = rnd.nextInt(4) == 0 ? next + rnd.nextInt(3) : next;
                long validTo = validFrom + 1 + rnd.nextInt(5);
                byte[] v = value(rnd);
                VersionedSegmentValue decoded = VersionedSegmentValue.decode(raw);
                decoded.insertAsLatest(validFrom, validTo, v);
                byte[] expected = decoded.encode();
                byte[] actual = VersionedSegmentValue.withNewest(raw, validFrom, validTo, v);
                if (actual != null) {
                    fast++;
                    assertThat(actual).as(what + " withNewest").isEqualTo(expected);
                } else {
                    long min = VersionedSegmentValue.minTimestamp(raw);
                    assertThat(validFrom != next || next == min)
                            .as(what + " withNewest declines only a gap or a degenerate row")
                            .isTrue();
                }
                raw = expected;
            }
            long min = VersionedSegmentValue.minTimestamp(raw);
            long next = VersionedSegmentValue.nextTimestamp(raw);
            VersionedSegmentValue decoded = VersionedSegmentValue.decode(raw);
            for (long ts = min; ts < next; ts++) {
                VersionedSegmentValue.Found a = VersionedSegmentValue.find(raw, ts);
                VersionedSegmentValue.Found e = decoded.find(ts);
                assertThat(show(a)).as(what + " find " + ts).isEqualTo(show(e));
            }
            byte[] row = raw;
            assertThatThrownBy(() -> VersionedSegmentValue.find(row, min - 1))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> VersionedSegmentValue.find(row, next))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(fast).as("rows built by the block-copy path").isPositive();
    }

    @Test
    void aRowOfAnotherFormatIsRefused() {
        assertThatThrownBy(() -> VersionedSegmentValue.nextTimestamp(new byte[] {0x02, 1, 2}))
                .isInstanceOf(IllegalStateException.class);
        byte[] raw = VersionedSegmentValue.withRecord(new byte[] {1}, 5, 9).encode();
        raw[0] = 0x07;
        byte[] bad = raw;
        assertThatThrownBy(() -> VersionedSegmentValue.find(bad, 6)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> VersionedSegmentValue.withNewest(bad, 9, 12, null))
                .isInstanceOf(IllegalStateException.class);
    }

    private static String show(VersionedSegmentValue.Found f) {
        return f.index() + ":" + f.validFrom() + "-" + f.validTo() + "=" + Arrays.toString(f.value());
    }

    private static byte[] value(Random rnd) {
        if (rnd.nextInt(5) == 0) {
            return null;
        }
        byte[] v = new byte[rnd.nextInt(6)];
        rnd.nextBytes(v);
        return v;
    }
}

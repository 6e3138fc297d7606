package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The per-table decision whether a bounded positioning asks the range filter ({@link RangeProbeGate}). */
class RangeProbeGateTest {
    private static int probesOf(RangeProbeGate g, int tries) {
        int n = 0;
        for (int i = 0; i < tries; i++) {
            if (g.shouldProbe()) {
                n++;
            }
        }
        return n;
    }

    @Test
    void aNewTableIsAlwaysProbed() {
        RangeProbeGate g = new RangeProbeGate();
        assertThat(g.noShare()).isEqualTo(RangeProbeGate.ONE);
        assertThat(probesOf(g, 1000)).isEqualTo(1000);
    }

    @Test
    void probesThatKeepSayingNoKeepTheGateOpen() {
        RangeProbeGate g = new RangeProbeGate();
        for (int i = 0; i < 1000; i++) {
            g.record(true);
        }
        assertThat(probesOf(g, 1000)).isEqualTo(1000);
    }

    @Test
    void aFilterThatAlmostNeverRulesOutIsAskedOnlyBySample() {
        RangeProbeGate g = new RangeProbeGate();
        // (15/16)^n < 1/8 from n = 33 on: still open after 32 "maybe" answers, closed after 33.
        for (int i = 0; i < 32; i++) {
            g.record(false);
        }
        assertThat(probesOf(g, 100)).as("open after 32 'maybe' answers").isEqualTo(100);
        g.record(false);
        assertThat(g.noShare()).isLessThan(RangeProbeGate.PROBE_AT_LEAST);
        // One in 16 at random: 16,000 tries give 1,000 probes on average (standard deviation ~31).
        assertThat(probesOf(g, 16_000)).as("sampled probes").isBetween(700, 1300);
    }

    @Test
    void threeNoAnswersReopenTheGateAfterTheWorkloadTurnsToEmptyRanges() {
        RangeProbeGate g = new RangeProbeGate();
        for (int i = 0; i < 10_000; i++) {
            g.record(false);
        }
        assertThat(g.noShare()).isZero();
        g.record(true);
        g.record(true);
        assertThat(g.noShare()).isLessThan(RangeProbeGate.PROBE_AT_LEAST);
        g.record(true);
        assertThat(g.noShare()).isGreaterThanOrEqualTo(RangeProbeGate.PROBE_AT_LEAST);
        assertThat(probesOf(g, 1000)).isEqualTo(1000);
    }

    @Test
    void aMixOfAnswersAboveTheBarKeepsProbing() {
        RangeProbeGate g = new RangeProbeGate();
        // One "no" in four: the share settles near 1/4, over the 1/8 bar.
        for (int i = 0; i < 4000; i++) {
            g.record(i % 4 == 0);
            assertThat(g.noShare()).as("after answer %d", i).isGreaterThanOrEqualTo(RangeProbeGate.PROBE_AT_LEAST);
        }
    }
}

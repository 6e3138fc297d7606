package io.bloomkv.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class EngineCountersTest {

    @Test
    void derivedFiguresFollowTheTickerDefinitions() {
        EngineCounters before = new EngineCounters(10, 6, 4, 2, 5, 500, 1000, 100);
        EngineCounters after = new EngineCounters(1010, 906, 104, 52, 60, 6500, 1000, 300);
        EngineCounters d = after.minus(before);
        assertThat(d.filterChecks()).isEqualTo(1000);
        assertThat(d.filterUseful()).isEqualTo(900);
        assertThat(d.filterPositive()).isEqualTo(100);
        assertThat(d.filterTruePositive()).isEqualTo(50);
        assertThat(d.falsePositives()).isEqualTo(50);
        assertThat(d.absentChecks()).isEqualTo(950);
        assertThat(d.measuredFpr()).isCloseTo(50.0 / 950, within(1e-12));
        assertThat(d.walBytesWritten()).isEqualTo(200);
        assertThat(EngineCounters.ZERO.measuredFpr()).isNaN();
    }

    @Test
    void rocksBloomMathMatchesRocksDbsOwnFigures() {
        // util/bloom_impl.h: 10 bits/key picks 6 probes; theoretical best for a 512-bit cache-local filter is 0.9535%
        assertThat(RocksBloomMath.chooseNumProbes(10)).isEqualTo(6);
        assertThat(RocksBloomMath.chooseNumProbes(16)).isEqualTo(9);
        assertThat(RocksBloomMath.chooseNumProbes(2)).isEqualTo(1);
        assertThat(RocksBloomMath.estimatedFpRate(1_000_000, 1_250_000, 6)).isCloseTo(0.0095, within(0.0003));
        assertThat(RocksBloomMath.estimatedFpRate(1_000_000, 2_000_000, 9))
                .isLessThan(RocksBloomMath.estimatedFpRate(1_000_000, 1_250_000, 6));
        assertThat(RocksBloomMath.estimatedFpRate(0, 100, 6)).isZero();
    }
}

package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link Filter#expectedFpp()} of BLOCKED filters far past their size, and {@link FilterMath}'s blocked rates at any
 * load: an answer (1, to double precision) at once, where the Poisson series was summed term by term up to the load.
 */
@ExtendWith(OffHeapLeakCheck.class)
class BlockedFppOverloadTest {
    /**
     * An overloaded BLOCKED filter (millions of keys per 512-bit block, or a key count up to 2^63 in a header whose CRC
     * is right or not checked) reports a rate of 1 at once. expectedFpp summed the Poisson load series term by term
     * up to the mean load, over an array of that many rates: minutes for a load of millions, and
     * NegativeArraySizeException once it passed 2^31.
     */
    @Test
    @Timeout(60)
    void anOverloadedBlockedFilterReportsARateOfOneAtOnce() {
        byte[] bytes;
        try (Filter f = TestKeys.filled(FilterKind.BLOCKED, 20, 10)) {
            bytes = f.toByteArray();
        }
        for (long keys : new long[] {3_000_000L, 1L << 31, 1L << 40, Long.MAX_VALUE}) {
            byte[] b = bytes.clone();
            ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(FilterHeader.OFF_KEY_COUNT, keys);
            FilterFuzzTest.resign(b);
            try (Filter f = Filters.read(b, 0, b.length)) {
                assertThat(f.keyCount()).isEqualTo(keys);
                assertThat(f.expectedFpp()).as("%d keys in one block", keys).isCloseTo(1.0, within(1e-12));
            }
        }
        for (double lambda : new double[] {1e5, 1e7, 0x1p31, 1e12, 1e300}) {
            for (int k : new int[] {1, 6, 64}) {
                assertThat(FilterMath.blockedFppForLoad(lambda, k, 512)).isCloseTo(1.0, within(1e-12));
                assertThat(FilterMath.blockedFppForLoadClassic(lambda, k, 512)).isCloseTo(1.0, within(1e-12));
            }
            assertThat(FilterMath.blockedFpp(512, 6, (long) Math.min(Long.MAX_VALUE, lambda)))
                    .isCloseTo(1.0, within(1e-12));
        }
    }

    /** Past the load where it stops summing term by term, the rate is the full series' (and stays monotone). */
    @Test
    void theBlockedRateIsUnchangedWhereItsSeriesIsCutShort() {
        for (int k : new int[] {1, 7, 20}) {
            int cut = FilterMath.saturatedLoad(k, 512);
            for (double lambda : new double[] {0.9 * cut, cut - 12 * Math.sqrt(cut), 1.2 * cut}) {
                int jMax = (int) Math.ceil(lambda + 12 * Math.sqrt(lambda) + 30);
                double[] f = FilterMath.blockRates(k, jMax, 512);
                double[] fc = new double[jMax + 1];
                double logPmf = -lambda;
                double full = 0;
                double fullClassic = 0;
                for (int j = 0; j <= jMax; j++) {
                    if (j > 0) {
                        logPmf += Math.log(lambda) - Math.log(j);
                    }
                    fc[j] = Math.pow(-Math.expm1(k * j * Math.log1p(-1.0 / 512)), k);
                    full += Math.exp(logPmf) * f[j];
                    fullClassic += Math.exp(logPmf) * fc[j];
                }
                assertThat(FilterMath.blockedFppForLoad(lambda, k, 512))
                        .as("k=%d lambda=%s", k, lambda)
                        .isCloseTo(Math.min(1, full), within(1e-12));
                assertThat(FilterMath.blockedFppForLoadClassic(lambda, k, 512))
                        .as("k=%d lambda=%s", k, lambda)
                        .isCloseTo(Math.min(1, fullClassic), within(1e-12));
            }
            double previous = 0;
            for (double lambda = 0.5; lambda < 1e9; lambda *= 1.7) {
                double p = FilterMath.blockedFppForLoad(lambda, k, 512);
                assertThat(p).as("k=%d lambda=%s", k, lambda).isGreaterThanOrEqualTo(previous - 1e-15);
                previous = p;
            }
        }
    }
}

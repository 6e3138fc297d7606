package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link RangeFilter}'s false-positive rate on empty ranges against its bound ℓ / 2^(B-2), on key sets it was not
 * tuned on: ascending 8-byte integers with random gaps, a 4-byte user id followed by an 8-byte millisecond timestamp,
 * and URL-like strings with a long shared prefix; ranges of ℓ = 2, 16, 64, 1024 (in units of the key's last byte, which
 * is where these fixed-length keys' windows end), at B = 10, 16, 22. Modest sizes here; the full sweep is the bench
 * command {@code range-fpr} (docs/bench.md).
 *
 * <p>Every run draws fresh key sets, so fresh filters (the hash seed is derived from the keys), and fresh queries from
 * one seed, logged and replayed with {@code -Dbloomkv.test.rangeFprSeed=N}. Every (keys, B, ℓ) point must be within
 * the bound: the measured count k of false positives in N queries must not reject "rate ≤ bound" in a one-sided exact
 * binomial test at level {@link #ALPHA} ({@link FilterMath#binomialUpperTail}(N, bound, k) ≥ ALPHA; equivalently the
 * Clopper–Pearson lower confidence limit of the rate is at most the bound). The bound is tight (for URL-like keys at
 * B ≥ 16 the expected rate equals it), so a measured rate above it by chance is the common case and the allowance must
 * come from the statistics, not from a factor. The binomial model needs independent queries: each key is the start of
 * at most one query per point (queries near one key would pass or fail together), and the filter's hash is four-wise
 * independent across blocks (hash version 2), so two queries share a random shift only when they start in one block.
 */
class RangeFilterFprTest {
    static final int[] LENGTHS = {2, 16, 64, 1024};
    static final double[] BITS = {10, 16, 22};

    enum Shape {
        INTS,
        TIMESTAMPS,
        URLS
    }

    static TreeSet<byte[]> keys(Shape shape, int n, SplittableRandom rnd) {
        TreeSet<byte[]> set = new TreeSet<>(Arrays::compareUnsigned);
        switch (shape) {
            case INTS: {
                long v = rnd.nextLong(1L << 40);
                while (set.size() < n) {
                    v += 1 + rnd.nextInt(8192);
                    set.add(be(v, 8));
                }
                break;
            }
            case TIMESTAMPS: {
                int users = Math.max(1, n / 200);
                for (int u = 0; u < users; u++) {
                    long uid = rnd.nextInt(1 << 30);
                    long ts = 1_700_000_000_000L + rnd.nextInt(1 << 30);
                    for (int e = 0; e < n / users; e++) {
                        ts += 1 + rnd.nextInt(8000);
                        byte[] k = new byte[12];
                        System.arraycopy(be(uid, 4), 0, k, 0, 4);
                        System.arraycopy(be(ts, 8), 0, k, 4, 8);
                        set.add(k);
                    }
                }
                break;
            }
            case URLS: {
                while (set.size() < n) {
                    StringBuilder sb = new StringBuilder("https://shop.example.com/items/");
                    for (int i = 0; i < 6; i++) {
                        sb.append((char) ('a' + rnd.nextInt(26)));
                    }
                    set.add(sb.toString().getBytes(StandardCharsets.US_ASCII));
                }
                break;
            }
            default:
                throw new IllegalArgumentException();
        }
        return set;
    }

    static byte[] be(long v, int width) {
        byte[] b = new byte[width];
        for (int i = 0; i < width; i++) {
            b[width - 1 - i] = (byte) (v >>> (8 * i));
        }
        return b;
    }

    /** key + delta, the key's bytes read as one big-endian unsigned integer (same length; null on overflow). */
    static byte[] plus(byte[] key, long delta) {
        byte[] out = key.clone();
        long carry = delta;
        for (int i = out.length - 1; i >= 0 && carry != 0; i--) {
            long s = (out[i] & 0xFF) + (carry & 0xFF);
            out[i] = (byte) s;
            carry = (carry >>> 8) + (s >>> 8);
        }
        return carry == 0 ? out : null;
    }

    /**
     * Per-point level of the one-sided binomial test: with 36 points a run whose every true rate sits exactly at its
     * bound fails with probability at most 36 · 10^-6 (union bound). Power, for 20,000 queries: a rate twice the bound
     * is rejected with probability about 1 where the bound expects 78 false positives or more (B = 10; B = 16 at
     * ℓ ≥ 64), 0.19 where it expects 20 (B = 16, ℓ = 16; B = 22, ℓ = 1024); smaller points only catch gross excess.
     * Calibration (30 URL key sets, 180 points with at least 5 expected): no p-value below 0.01, two below 0.05, false
     * positives 0.97 of the bound's count in total, so the binomial model is not anti-conservative here.
     */
    static final double ALPHA = 1e-6;

    /** Empty ranges found and false positives among them: one range of {@code length} values after each key tried. */
    static long[] falsePositives(
            RangeFilter f, TreeSet<byte[]> keys, byte[][] sorted, int length, SplittableRandom rnd) {
        int[] order = new int[sorted.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        for (int i = order.length - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        long fp = 0;
        long made = 0;
        for (int index : order) {
            byte[] k = sorted[index];
            // A few draws of the start (1 .. 4ℓ past the key) for a range that holds no key; keys followed by a gap
            // too short for any are skipped. The draws do not depend on the filter's answers.
            for (int attempt = 0; attempt < 8; attempt++) {
                byte[] lo = plus(k, 1 + rnd.nextInt(4 * length));
                byte[] hi = lo == null ? null : plus(lo, length - 1);
                if (hi == null || RangeFilterPropertyTest.holds(keys, lo, hi)) {
                    continue;
                }
                made++;
                fp += f.mightContainRange(lo, hi) ? 1 : 0;
                break;
            }
        }
        return new long[] {made, fp};
    }

    @Test
    void everyPointIsWithinItsBound() {
        long seed = TestKeys.seed("bloomkv.test.rangeFprSeed");
        int n = 20_000;
        for (Shape shape : Shape.values()) {
            SplittableRandom rnd = new SplittableRandom(seed + shape.ordinal());
            TreeSet<byte[]> keys = keys(shape, n, rnd);
            byte[][] sorted = keys.toArray(new byte[0][]);
            for (double b : BITS) {
                try (RangeFilter f = RangeFilterPropertyTest.build(keys, b, RangeFilter.DEFAULT_SEGMENT_KEYS)) {
                    double bitsPerKey = 8.0 * f.sizeInBytes() / keys.size();
                    for (int length : LENGTHS) {
                        long[] madeFp = falsePositives(f, keys, sorted, length, rnd);
                        long made = madeFp[0];
                        long fp = madeFp[1];
                        assertThat(made)
                                .as("empty ranges found, %s l=%d", shape, length)
                                .isGreaterThanOrEqualTo(n / 2);
                        double bound = RangeFilter.fppBound(length, b);
                        double pValue = FilterMath.binomialUpperTail(made, bound, fp);
                        System.out.printf(
                                "%-10s B=%2.0f (%.2f bits/key all in) l=%4d  FP %5d of %5d = %.6f  bound %.6f  p %.3g%n",
                                shape, b, bitsPerKey, length, fp, made, (double) fp / made, bound, pValue);
                        assertThat(pValue)
                                .as(
                                        "%s B=%s l=%d: %d false positives in %d empty ranges against the bound %s (seed %d)",
                                        shape, b, length, fp, made, bound, seed)
                                .isGreaterThanOrEqualTo(ALPHA);
                    }
                }
            }
        }
    }
}

package io.bloomkv.bench.range;

import io.bloomkv.bloom.FilterMath;
import io.bloomkv.bloom.RangeFilter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * The range filter's false-positive rate on empty ranges against its bound ℓ / 2^(B-2) ({@link RangeFilter}), on three
 * key shapes it was not tuned on: ascending 8-byte big-endian integers with random gaps (1..8192), a 4-byte user id
 * followed by an 8-byte millisecond timestamp (200 events per user, gaps 1..8000 ms), and URL-like strings
 * ("https://shop.example.com/items/" + 6 random lowercase letters). A range of length ℓ is [x, x + ℓ - 1] with the
 * key read as one big-endian integer (for these fixed-length keys: units of the last byte, where the filter's
 * windows end), drawn inside a gap between two keys so that it holds none: one range after each of {@code queries}
 * distinct keys (ranges after one key would pass or fail together), so the count of false positives is binomial
 * given the rate. A point is within its bound when a one-sided exact binomial test at level {@link #ALPHA} does not
 * reject "rate ≤ bound" ({@link FilterMath#binomialUpperTail}), as RangeFilterFprTest checks.
 *
 * <p>With {@code --upper=at-key} the ranges are those an iterator's exclusive upper bound makes: [c - ℓ, c) with c the
 * key after a drawn key (the ℓ values below c, holding none when the gap is wider than ℓ; narrower gaps are skipped),
 * asked with {@code hiInclusive = false}; the closed range [c - ℓ, c] would hold c.
 *
 * <pre>java -jar bloomkv-bench.jar range-fpr [--n=1000000] [--queries=200000] [--seed=1] [--bits=10,16,22] [--lengths=2,16,64,1024] [--upper=closed|at-key]</pre>
 */
public final class RangeFprSweep {
    /** The key shapes. */
    public enum Shape {
        INTS,
        TIMESTAMPS,
        URLS
    }

    /** Level of the one-sided binomial test per point. */
    public static final double ALPHA = 1e-6;

    /** One measured point. */
    public record Row(
            Shape shape,
            double bitsPerKey,
            long length,
            long queries,
            long falsePositives,
            double measured,
            double bound,
            double memoryBitsPerKey) {
        /** P(X >= falsePositives) for X ~ Binomial(queries, bound). */
        public double pValue() {
            return FilterMath.binomialUpperTail(queries, bound, falsePositives);
        }

        public boolean withinBound() {
            return pValue() >= ALPHA;
        }
    }

    private RangeFprSweep() {}

    public static TreeSet<byte[]> keys(Shape shape, int n, SplittableRandom rnd) {
        TreeSet<byte[]> set = new TreeSet<>(Arrays::compareUnsigned);
        switch (shape) {
            case INTS -> {
                long v = rnd.nextLong(1L << 40);
                while (set.size() < n) {
                    v += 1 + rnd.nextInt(8192);
                    set.add(be(v, 8));
                }
            }
            case TIMESTAMPS -> {
                int users = Math.max(1, n / 200);
                while (set.size() < n) {
                    long uid = rnd.nextInt(1 << 30);
                    long ts = 1_700_000_000_000L + rnd.nextInt(1 << 30);
                    for (int e = 0; e < n / users && set.size() < n; e++) {
                        ts += 1 + rnd.nextInt(8000);
                        byte[] k = new byte[12];
                        System.arraycopy(be(uid, 4), 0, k, 0, 4);
                        System.arraycopy(be(ts, 8), 0, k, 4, 8);
                        set.add(k);
                    }
                }
            }
            case URLS -> {
                while (set.size() < n) {
                    StringBuilder sb = new StringBuilder("https://shop.example.com/items/");
                    for (int i = 0; i < 6; i++) {
                        sb.append((char) ('a' + rnd.nextInt(26)));
                    }
                    set.add(sb.toString().getBytes(StandardCharsets.US_ASCII));
                }
            }
            default -> throw new IllegalArgumentException(shape.toString());
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

    /** key + delta, the key read as one big-endian unsigned integer (null on overflow). */
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

    /** key - delta, the key read as one big-endian unsigned integer (null below zero). */
    static byte[] minus(byte[] key, long delta) {
        byte[] out = key.clone();
        long borrow = delta;
        for (int i = out.length - 1; i >= 0 && borrow != 0; i--) {
            long d = (out[i] & 0xFF) - (borrow & 0xFF);
            out[i] = (byte) d;
            borrow = (borrow >>> 8) + (d < 0 ? 1 : 0);
        }
        return borrow == 0 ? out : null;
    }

    /** Measures every (shape, bits, length) point on closed ranges inside the gaps. */
    public static List<Row> run(int n, int queries, long seed, double[] bits, long[] lengths) {
        return run(n, queries, seed, bits, lengths, false);
    }

    /**
     * Measures every (shape, bits, length) point: closed ranges inside the gaps, or, when {@code atKey}, half-open
     * ranges [c - ℓ, c) ending at a key c (an iterator's exclusive upper bound at the next key).
     */
    public static List<Row> run(int n, int queries, long seed, double[] bits, long[] lengths, boolean atKey) {
        List<Row> rows = new ArrayList<>();
        for (Shape shape : Shape.values()) {
            SplittableRandom rnd = new SplittableRandom(seed * 31 + shape.ordinal());
            TreeSet<byte[]> keys = keys(shape, n, rnd);
            byte[][] sorted = keys.toArray(new byte[0][]);
            for (double b : bits) {
                RangeFilter.Builder builder = RangeFilter.builder(b);
                for (byte[] k : sorted) {
                    builder.add(k);
                }
                try (RangeFilter f = builder.build()) {
                    double memory = 8.0 * f.sizeInBytes() / keys.size();
                    for (long length : lengths) {
                        long fp = 0;
                        long made = 0;
                        // Keys in random order, each the start of at most one range (a few draws for an empty one).
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
                        for (int i = 0; i < order.length && made < queries; i++) {
                            byte[] k = sorted[order[i]];
                            if (atKey) {
                                if (order[i] + 1 >= sorted.length) {
                                    continue;
                                }
                                byte[] c = sorted[order[i] + 1];
                                byte[] lo = minus(c, length);
                                if (lo == null || Arrays.compareUnsigned(lo, k) <= 0) {
                                    continue; // the gap below c is not wider than the range
                                }
                                made++;
                                fp += f.mightContainRange(lo, c, false) ? 1 : 0;
                                continue;
                            }
                            for (int attempt = 0; attempt < 8; attempt++) {
                                byte[] lo = plus(k, 1 + rnd.nextLong(4 * length));
                                byte[] hi = lo == null ? null : plus(lo, length - 1);
                                if (hi == null) {
                                    continue;
                                }
                                byte[] c = keys.ceiling(lo);
                                if (c != null && Arrays.compareUnsigned(c, hi) <= 0) {
                                    continue; // not empty
                                }
                                made++;
                                fp += f.mightContainRange(lo, hi) ? 1 : 0;
                                break;
                            }
                        }
                        rows.add(new Row(
                                shape,
                                b,
                                length,
                                made,
                                fp,
                                made == 0 ? Double.NaN : (double) fp / made,
                                RangeFilter.fppBound(length, b),
                                memory));
                    }
                }
            }
        }
        return rows;
    }

    public static void main(String[] args) {
        int n = 1_000_000;
        int queries = 200_000;
        long seed = 1;
        double[] bits = {10, 16, 22};
        long[] lengths = {2, 16, 64, 1024};
        boolean atKey = false;
        for (String a : args) {
            String v = a.substring(a.indexOf('=') + 1);
            if (a.startsWith("--n=")) {
                n = Integer.parseInt(v);
            } else if (a.startsWith("--queries=")) {
                queries = Integer.parseInt(v);
            } else if (a.startsWith("--seed=")) {
                seed = Long.parseLong(v);
            } else if (a.startsWith("--bits=")) {
                bits = Arrays.stream(v.split(","))
                        .mapToDouble(Double::parseDouble)
                        .toArray();
            } else if (a.startsWith("--lengths=")) {
                lengths = Arrays.stream(v.split(",")).mapToLong(Long::parseLong).toArray();
            } else if (a.startsWith("--upper=")) {
                if (!v.equals("closed") && !v.equals("at-key")) {
                    throw new IllegalArgumentException("--upper is closed or at-key: " + v);
                }
                atKey = v.equals("at-key");
            } else {
                throw new IllegalArgumentException("unknown argument " + a
                        + " (range-fpr [--n=N] [--queries=Q] [--seed=S] [--bits=10,16,22] [--lengths=2,16,64,1024]"
                        + " [--upper=closed|at-key])");
            }
        }
        System.out.printf(
                Locale.ROOT,
                "range filter FPR on empty ranges%s: n=%d keys per shape, %d queries per point, seed %d%n",
                atKey ? " [c - l, c) ending at the next key c (exclusive upper bound)" : " [x, x + l - 1] inside gaps",
                n,
                queries,
                seed);
        System.out.printf(
                Locale.ROOT,
                "%-10s %6s %6s %10s %8s %12s %12s %10s %10s %s%n",
                "shape",
                "B",
                "l",
                "FP",
                "queries",
                "measured",
                "bound",
                "p-value",
                "bits/key",
                "within");
        boolean all = true;
        for (Row r : run(n, queries, seed, bits, lengths, atKey)) {
            System.out.printf(
                    Locale.ROOT,
                    "%-10s %6.1f %6d %10d %8d %12.7f %12.7f %10.3g %10.2f %s%n",
                    r.shape(),
                    r.bitsPerKey(),
                    r.length(),
                    r.falsePositives(),
                    r.queries(),
                    r.measured(),
                    r.bound(),
                    r.pValue(),
                    r.memoryBitsPerKey(),
                    r.withinBound() ? "yes" : "NO");
            all &= r.withinBound();
        }
        System.out.println(
                all
                        ? "every point within its bound (one-sided binomial test, level " + ALPHA + " per point)"
                        : "SOME POINT EXCEEDS ITS BOUND");
    }
}

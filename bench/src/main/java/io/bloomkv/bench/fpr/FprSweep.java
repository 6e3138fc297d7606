package io.bloomkv.bench.fpr;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Filters;
import io.bloomkv.bloom.Hashing;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Measures false-positive rates: for each kind and bits-per-key setting, adds n keys to a fresh filter, asks
 * about {@code absent} keys never added and compares the share of "might contain" answers with the kind's
 * formula ({@link Filter#expectedFpp()}). Keys are 8-byte little-endian integers, sequential (0..n-1 added,
 * n.. queried) or drawn from a seeded random generator.
 *
 * <pre>java -cp bloomkv-bench.jar io.bloomkv.bench.fpr.FprSweep [--n=200000] [--absent=2000000] [--seed=1]
 *      [--bits=4,6,8,10,12,14,16,18,20] [--kinds=STANDARD,PARTITIONED,BLOCKED,COUNTING] [--keys=random|sequential]</pre>
 */
public final class FprSweep {

    /** One measurement. {@code bitsPerKeyActual} = m / n (counters per key for COUNTING); {@code memoryBitsPerKey} = off-heap bits / n. */
    public record Row(
            FilterKind kind,
            double bitsPerKey,
            int k,
            double measured,
            double theoretical,
            double bitsPerKeyActual,
            double memoryBitsPerKey,
            long falsePositives,
            long queries) {}

    /** What to measure. */
    public record Config(
            List<FilterKind> kinds, double[] bitsPerKey, long n, long absent, long seed, boolean sequential) {
        public Config {
            if (kinds.isEmpty() || bitsPerKey.length == 0 || n <= 0 || absent <= 0) {
                throw new IllegalArgumentException("need kinds, bits per key, n > 0 and absent > 0");
            }
            kinds = List.copyOf(kinds);
            bitsPerKey = bitsPerKey.clone();
        }
    }

    private FprSweep() {}

    /** Runs every (kind, bits per key) pair, on up to {@code threads} threads; rows in kind-major order. */
    public static List<Row> run(Config config, int threads) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
        try {
            List<Future<Row>> futures = new ArrayList<>();
            // Each case gets its own generator seeded from a master one (seeds that differ by the generator's
            // gamma would only shift one shared sequence).
            SplittableRandom seeds = new SplittableRandom(config.seed());
            for (FilterKind kind : config.kinds()) {
                for (double b : config.bitsPerKey()) {
                    long caseSeed = seeds.nextLong();
                    futures.add(pool.submit(
                            () -> measure(kind, b, config.n(), config.absent(), caseSeed, config.sequential())));
                }
            }
            List<Row> rows = new ArrayList<>();
            for (Future<Row> f : futures) {
                try {
                    rows.add(f.get());
                } catch (ExecutionException e) {
                    throw new IllegalStateException("sweep case failed", e.getCause());
                }
            }
            return rows;
        } finally {
            pool.shutdownNow();
        }
    }

    /** One filter: n keys added, {@code absent} keys never added asked about. */
    public static Row measure(FilterKind kind, double bitsPerKey, long n, long absent, long seed, boolean sequential) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] key = new byte[8];
        try (Filter f = filled(kind, bitsPerKey, n, random, sequential, key)) {
            long positives = 0;
            for (long i = 0; i < absent; i++) {
                // a random absent key equals an added one with probability n / 2^64: negligible
                if (f.mightContain(encode(sequential ? n + i : random.nextLong(), key))) {
                    positives++;
                }
            }
            long bodyBits = (f.serializedSize() - 64) * 8;
            return new Row(
                    kind,
                    bitsPerKey,
                    f.hashCount(),
                    (double) positives / absent,
                    f.expectedFpp(),
                    (double) f.bitSize() / n,
                    (double) bodyBits / n,
                    positives,
                    absent);
        }
    }

    /** Keys 0..n-1 or n random ones: added one by one, or, for a static kind (RIBBON), built from their hashes. */
    private static Filter filled(
            FilterKind kind, double bitsPerKey, long n, SplittableRandom random, boolean sequential, byte[] key) {
        if (kind.isStatic()) {
            if (n > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException(kind + " sweeps hold at most 2^31 keys");
            }
            long[] hashes = new long[(int) n];
            for (int i = 0; i < n; i++) {
                hashes[i] = Hashing.hash64(encode(sequential ? i : random.nextLong(), key));
            }
            return Filters.build(kind, hashes, bitsPerKey);
        }
        Filter f = Filters.create(kind, n, bitsPerKey);
        for (long i = 0; i < n; i++) {
            f.add(encode(sequential ? i : random.nextLong(), key));
        }
        return f;
    }

    private static byte[] encode(long v, byte[] into) {
        for (int i = 0; i < 8; i++) {
            into[i] = (byte) (v >>> (8 * i));
        }
        return into;
    }

    /** The rows as a Markdown table (rates in percent). */
    public static String toMarkdown(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append(
                "| kind | bits/key | k | measured FPR | theoretical FPR | measured / theory | m/n | memory bits/key |\n");
        sb.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (Row r : rows) {
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %.4f%% | %.4f%% | %.3f | %.2f | %.2f |%n",
                    r.kind(),
                    trim(r.bitsPerKey()),
                    r.k(),
                    100 * r.measured(),
                    100 * r.theoretical(),
                    r.theoretical() == 0 ? Double.NaN : r.measured() / r.theoretical(),
                    r.bitsPerKeyActual(),
                    r.memoryBitsPerKey()));
        }
        return sb.toString();
    }

    private static String trim(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    public static void main(String[] args) throws InterruptedException {
        long n = 200_000;
        long absent = 2_000_000;
        long seed = 1;
        boolean sequential = false;
        double[] bits = {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
        List<FilterKind> kinds = Arrays.asList(FilterKind.values());
        for (String arg : args) {
            String[] kv = arg.replaceFirst("^--", "").split("=", 2);
            if (kv.length != 2) {
                throw new IllegalArgumentException("expected --name=value, got " + arg);
            }
            switch (kv[0]) {
                case "n":
                    n = Long.parseLong(kv[1]);
                    break;
                case "absent":
                    absent = Long.parseLong(kv[1]);
                    break;
                case "seed":
                    seed = Long.parseLong(kv[1]);
                    break;
                case "bits":
                    bits = Arrays.stream(kv[1].split(","))
                            .mapToDouble(Double::parseDouble)
                            .toArray();
                    break;
                case "kinds":
                    kinds = Arrays.stream(kv[1].split(","))
                            .map(s -> FilterKind.valueOf(s.trim().toUpperCase(Locale.ROOT)))
                            .toList();
                    break;
                case "keys":
                    sequential = kv[1].equalsIgnoreCase("sequential");
                    break;
                default:
                    throw new IllegalArgumentException("unknown option --" + kv[0]);
            }
        }
        Config config = new Config(kinds, bits, n, absent, seed, sequential);
        long start = System.nanoTime();
        List<Row> rows = run(config, Runtime.getRuntime().availableProcessors());
        System.out.printf(
                Locale.ROOT,
                "n = %,d keys added, %,d absent keys queried, %s keys, seed %d (%.1f s)%n%n",
                n,
                absent,
                sequential ? "sequential" : "random",
                seed,
                (System.nanoTime() - start) / 1e9);
        System.out.print(toMarkdown(rows));
    }
}

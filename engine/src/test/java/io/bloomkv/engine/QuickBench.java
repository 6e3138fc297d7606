package io.bloomkv.engine;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Stream;

/**
 * A quick measurement for the issue notes (not a test, not the bench harness): N keys of 16 bytes
 * with 100-byte values loaded in random order (even ids), then gets of present keys and of absent
 * keys inside the key range (odd ids), with filters at the given bits per key and without.
 *
 * <pre>
 * java [chronicle flags] -cp engine/target/test-classes:engine/target/classes:... io.bloomkv.engine.QuickBench [dir] [keys] [gets] [small]
 * </pre>
 * "small" uses 1 MiB memtables, 2 MiB tables, an 8 MiB level 1 and compacts level 0 at one table,
 * so the data spreads over several levels and level 0 is empty when the gets run, and compares the
 * UNIFORM and MONKEY filter allocations at the same total filter memory. "levels" loads with the
 * default options only; "nofilter" runs only the bits-per-key-0 case, "filter" only the 10 bits one. The load is followed by a
 * flush and waiting for compactions.
 */
public final class QuickBench {
    private QuickBench() {}

    static byte[] key(long id) {
        return String.format("%016d", id).getBytes(StandardCharsets.US_ASCII);
    }

    public static void main(String[] args) throws IOException {
        Path base = Path.of(args.length > 0 ? args[0] : "/tmp/bloomkv-quickbench");
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        int gets = args.length > 2 ? Integer.parseInt(args[2]) : 200_000;
        boolean small = args.length > 3 && args[3].equals("small");
        if (small) {
            for (FilterAllocation a : FilterAllocation.values()) {
                run(base.resolve(a.name()), n, gets, smallTables().bitsPerKey(10).filterAllocation(a), a.name());
            }
            return;
        }
        if (args.length > 3 && args[3].equals("levels")) {
            run(base.resolve("levels"), n, gets, Options.defaults().bitsPerKey(10), "10 bits/key, default options");
            return;
        }
        boolean only0 = args.length > 3 && args[3].equals("nofilter");
        boolean only10 = args.length > 3 && args[3].equals("filter");
        if (!only0) {
            run(base.resolve("bits10"), n, gets, Options.defaults().bitsPerKey(10), "10 bits/key");
        }
        if (!only10) {
            run(base.resolve("bits0"), n, gets, Options.defaults().bitsPerKey(0), "no filter");
        }
    }

    static Options smallTables() {
        return Options.defaults().writeBufferSize(1 << 20).targetFileSize(2 << 20).maxBytesForLevelBase(8 << 20)
                .l0CompactionTrigger(1);
    }

    static void deleteTree(Path p) throws IOException {
        if (Files.exists(p)) {
            try (Stream<Path> s = Files.walk(p)) {
                s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    static void run(Path dir, int n, int gets, Options options, String label) throws IOException {
        deleteTree(dir);
        Random rnd = new Random(42);
        long[] ids = new long[n];
        for (int i = 0; i < n; i++) {
            ids[i] = 2L * i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            long t = ids[i];
            ids[i] = ids[j];
            ids[j] = t;
        }
        byte[] value = new byte[100];
        try (Db db = Db.open(dir, options)) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                rnd.nextBytes(value);
                db.put(key(ids[i]), value);
            }
            long fillNanos = System.nanoTime() - t0;
            db.flush();
            db.waitForBackgroundWork();
            long settledNanos = System.nanoTime() - t0;
            Stats loaded = db.stats();

            // Warm-up, then present keys.
            for (int i = 0; i < gets / 10; i++) {
                db.get(key(2L * rnd.nextInt(n)));
            }
            Stats s0 = db.stats();
            t0 = System.nanoTime();
            int found = 0;
            for (int i = 0; i < gets; i++) {
                if (db.get(key(2L * rnd.nextInt(n))) != null) {
                    found++;
                }
            }
            long presentNanos = System.nanoTime() - t0;
            Stats s1 = db.stats();
            t0 = System.nanoTime();
            int wrong = 0;
            for (int i = 0; i < gets; i++) {
                if (db.get(key(2L * rnd.nextInt(n - 1) + 1)) != null) {
                    wrong++;
                }
            }
            long absentNanos = System.nanoTime() - t0;
            Stats s2 = db.stats();

            long checks = s2.filterChecks() - s1.filterChecks();
            long useful = s2.filterUseful() - s1.filterUseful();
            long positive = s2.filterPositive() - s1.filterPositive();
            long truePos = s2.filterTruePositive() - s1.filterTruePositive();
            long blockReads = s2.blockReads() - s1.blockReads();
            long dataBlocks = s2.dataBlockAccesses() - s1.dataBlockAccesses();
            long noFilter = s2.tablesReadWithoutFilter() - s1.tablesReadWithoutFilter();
            double measuredFpr = (positive - truePos) / (double) Math.max(1, useful + positive - truePos);
            int k = options.bitsPerKey() == 0 ? 0 : FilterMath.optimalBlockedK(options.bitsPerKey());
            double theoretical = options.bitsPerKey() == 0 ? 1
                    : FilterMath.expectedFpp(FilterKind.BLOCKED, (long) (options.bitsPerKey() * 1_000_000), k, 1_000_000);
            System.out.printf(Locale.ROOT, "== %s: %,d keys (16 B keys, 100 B values), SyncMode.%s, %s allocation%n",
                    label, n, options.syncMode(), options.filterAllocation());
            System.out.printf(Locale.ROOT, "fill (random order): %,.0f puts/s (%.1f s; %.1f s until flushes and compactions settled)%n",
                    n / (fillNanos / 1e9), fillNanos / 1e9, settledNanos / 1e9);
            System.out.printf(Locale.ROOT, "tables %d, table bytes %,d, filter memory %,d bytes (%.2f bits/key), write amp %.2f, stalls %d%n",
                    loaded.tableCount(), loaded.tableBytes(), loaded.filterMemoryBytes(),
                    loaded.filterMemoryBytes() * 8.0 / n, loaded.writeAmplification(), loaded.writeStalls());
            for (int level = 0; level < loaded.numLevels(); level++) {
                if (loaded.levelTables(level) > 0) {
                    System.out.printf(Locale.ROOT, "  L%d: %d tables, %,d entries, %.2f filter bits/key%n", level,
                            loaded.levelTables(level), loaded.levelEntries(level), loaded.levelBitsPerKey(level));
                }
            }
            System.out.printf(Locale.ROOT, "get present: %,.0f gets/s (%d/%d found), block reads/get %.3f%n",
                    gets / (presentNanos / 1e9), found, gets, (s1.blockReads() - s0.blockReads()) / (double) gets);
            System.out.printf(Locale.ROOT, "get absent:  %,.0f gets/s (%d wrongly found)%n", gets / (absentNanos / 1e9), wrong);
            System.out.printf(Locale.ROOT, "  filter checks %,d (%.2f/get), useful %,d, positive %,d, true positive %d; useful/checks %.5f%n",
                    checks, checks / (double) gets, useful, positive, truePos, checks == 0 ? Double.NaN : useful / (double) checks);
            System.out.printf(Locale.ROOT, "  measured FPR %.5f, theoretical (blocked, k=%d) %.5f; false probes per absent get %.5f%n",
                    measuredFpr, k, theoretical, (positive - truePos) / (double) gets);
            System.out.printf(Locale.ROOT, "  tables read without filter %,d; data-block accesses/get %.4f; block reads (cache misses)/get %.4f%n",
                    noFilter, dataBlocks / (double) gets, blockReads / (double) gets);
        }
    }
}

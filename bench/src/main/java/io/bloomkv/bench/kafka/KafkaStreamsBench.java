package io.bloomkv.bench.kafka;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.bloomkv.bench.report.Machine;
import io.bloomkv.engine.Stats;
import io.bloomkv.kafka.BloomKvStore;
import io.bloomkv.kafka.BloomKvStores;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.BatchingStateRestoreCallback;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench kafka-streams}: the word-count processor of a Kafka Streams application on Kafka's
 * RocksDB store ({@code Stores.persistentKeyValueStore}) and on the bloomkv store
 * ({@code BloomKvStores.persistentKeyValueStore}), each with the defaults a user gets (bloomkv with the
 * same 50 MiB block cache as Kafka's RocksDB store, {@code --bloomkv-cache-bytes}), called as the
 * stream thread calls the innermost store (String/Long serdes; no record cache, so every record
 * reaches the store). Processing: per record a get and a put of the word's count, a commit (store flush) every
 * {@code --commit-every} records, as a stream thread does. Restore: the changelog of that run fed to a
 * fresh store's registered restore callback in batches of {@code --restore-batch} records (Kafka's
 * restore consumer batches), then the commit. Engines alternate (A B A B); medians and min-max spreads.
 */
@Command(name = "kafka-streams", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Kafka Streams state store bench: a word count on the RocksDB store and on the bloomkv store, "
                + "records/s processed and restored, heap and off-heap memory; writes kafka-streams.md/.json/.png."})
public final class KafkaStreamsBench implements Callable<Integer> {
    @Option(names = "--records", defaultValue = "1000000", description = "Records processed per run (default ${DEFAULT-VALUE}).")
    int records;

    @Option(names = "--words", defaultValue = "200000", description = "Distinct words (keys) (default ${DEFAULT-VALUE}).")
    int words;

    @Option(names = "--commit-every", defaultValue = "10000",
            description = "Records between commits (default ${DEFAULT-VALUE}: ~100 ms at 100k records/s, the EOS commit interval).")
    int commitEvery;

    @Option(names = "--restore-batch", defaultValue = "1000", description = "Changelog records per restore batch (default ${DEFAULT-VALUE}, max.poll.records).")
    int restoreBatch;

    @Option(names = "--rounds", defaultValue = "3", description = "Runs per engine, engines alternating (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--engines", defaultValue = "rocksdb,bloomkv", split = ",", description = "Stores, run alternately (default ${DEFAULT-VALUE}).")
    List<String> engines;

    @Option(names = "--bloomkv-cache-bytes", defaultValue = "52428800",
            description = "Block cache bytes of the bloomkv store (default ${DEFAULT-VALUE}: the 50 MiB of Kafka's RocksDB store, the same memory).")
    long bloomkvCacheBytes;

    @Option(names = "--seed", defaultValue = "301", description = "Seed of the word sequence (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--report-dir", defaultValue = "bench-report", description = "Report folder (default ./${DEFAULT-VALUE}).")
    Path reportDir;

    @Option(names = "--db-dir", description = "Parent of the state directories (default: a new temp directory, deleted afterwards).")
    Path dbDir;

    private static final String TOPIC = "counts-changelog";

    /** One run of one store. */
    public record Run(String engine, int round, double processRecordsPerSec, double restoreRecordsPerSec, long processMillis,
            long restoreMillis, long heapBeforeBytes, long heapAfterBytes, long offHeapBytes, String offHeapWhat, long restoredEntries) {}

    @Override
    public Integer call() throws Exception {
        for (String e : engines) {
            if (!e.equals("rocksdb") && !e.equals("bloomkv")) {
                throw new IllegalArgumentException("unknown engine " + e + " (rocksdb, bloomkv)");
            }
        }
        Path parent = dbDir != null ? Files.createDirectories(dbDir) : Files.createTempDirectory("bloomkv-kafka-bench");
        int[] sequence = sequence();
        String[] wordText = new String[words];
        for (int i = 0; i < words; i++) {
            wordText[i] = String.format(Locale.ROOT, "word-%08d", i);
        }
        System.out.printf(Locale.ROOT, "kafka-streams bench: %,d records, %,d words, commit every %,d, restore batches of %,d, %d rounds%n",
                records, words, commitEvery, restoreBatch, rounds);
        System.out.println("machine: " + Machine.current().summary());
        List<Run> runs = new ArrayList<>();
        try {
            // Warm-up (untimed): the JIT compiles both stores' paths before the first measured run.
            for (String e : engines) {
                runOnce(e, -1, parent, Arrays.copyOf(sequence, Math.min(sequence.length, 200_000)), wordText);
            }
            for (int round = 0; round < rounds; round++) {
                for (String e : engines) {
                    Run r = runOnce(e, round, parent, sequence, wordText);
                    runs.add(r);
                    System.out.printf(Locale.ROOT, "  %-8s round %d: process %,10.0f rec/s   restore %,10.0f rec/s   heap %+6.1f MiB   off-heap %7.1f MiB (%s)%n",
                            r.engine(), round, r.processRecordsPerSec(), r.restoreRecordsPerSec(),
                            (r.heapAfterBytes() - r.heapBeforeBytes()) / 1048576.0, r.offHeapBytes() / 1048576.0, r.offHeapWhat());
                }
            }
        } finally {
            if (dbDir == null) {
                deleteRecursively(parent);
            }
        }
        report(runs);
        return 0;
    }

    /** The word of every record: skewed (a few hot words, a long tail), seeded. */
    private int[] sequence() {
        Random rnd = new Random(seed);
        int[] seq = new int[records];
        for (int i = 0; i < records; i++) {
            double u = rnd.nextDouble();
            seq[i] = (int) (words * u * u * u);
        }
        return seq;
    }

    /** Kafka's RocksDB store as users get it; the bloomkv store with its defaults and the same block-cache memory. */
    private KeyValueBytesStoreSupplier supplier(String engine) {
        return engine.equals("rocksdb") ? Stores.persistentKeyValueStore("counts")
                : BloomKvStores.persistentKeyValueStore("counts", BloomKvStores.defaultOptions().blockCacheSize(bloomkvCacheBytes));
    }

    private Run runOnce(String engine, int round, Path parent, int[] seq, String[] wordText) throws IOException {
        Path dir = parent.resolve(engine + "-" + round);
        deleteRecursively(dir);
        Files.createDirectories(dir);
        try {
            // Processing.
            BenchStoreContext ctx = new BenchStoreContext(dir.resolve("process").toFile());
            KeyValueStore<Bytes, byte[]> store = supplier(engine).get();
            Serializer<String> ks = Serdes.String().serializer();
            Serializer<Long> vs = Serdes.Long().serializer();
            Deserializer<Long> vd = Serdes.Long().deserializer();
            gc();
            long heapBefore = heapUsed();
            store.init(ctx, store);
            long t0 = System.nanoTime();
            for (int i = 0; i < seq.length; i++) {
                Bytes k = Bytes.wrap(ks.serialize(TOPIC, wordText[seq[i]]));
                byte[] old = store.get(k);
                store.put(k, vs.serialize(TOPIC, old == null ? 1L : vd.deserialize(TOPIC, old) + 1));
                if ((i + 1) % commitEvery == 0) {
                    store.flush();
                }
            }
            store.flush();
            long processNanos = System.nanoTime() - t0;
            gc();
            long heapAfter = heapUsed();
            long[] offHeap = {0};
            String offHeapWhat = offHeap(store, ctx, offHeap);
            store.close();

            // Restore: the changelog of that run into a fresh store.
            BenchStoreContext rctx = new BenchStoreContext(dir.resolve("restore").toFile());
            KeyValueStore<Bytes, byte[]> restored = supplier(engine).get();
            restored.init(rctx, restored);
            long restoreNanos = restore(rctx, seq, wordText);
            long t1 = System.nanoTime();
            restored.flush();
            restoreNanos += System.nanoTime() - t1;
            long[] expected = new long[words];
            for (int s : seq) {
                expected[s]++;
            }
            long entries = 0;
            for (int i = 0; i < words; i += Math.max(1, words / 1000)) {
                byte[] raw = restored.get(Bytes.wrap(ks.serialize(TOPIC, wordText[i])));
                Long got = raw == null ? null : vd.deserialize(TOPIC, raw);
                long want = expected[i];
                if (want == 0 ? got != null : got == null || got != want) {
                    throw new IllegalStateException(engine + ": restored count of " + wordText[i] + " is " + got + ", expected " + want);
                }
                entries += want == 0 ? 0 : 1;
            }
            restored.close();
            return new Run(engine, round, seq.length / (processNanos / 1e9), seq.length / (restoreNanos / 1e9), processNanos / 1_000_000,
                    restoreNanos / 1_000_000, heapBefore, heapAfter, offHeap[0], offHeapWhat, entries);
        } finally {
            deleteRecursively(dir);
        }
    }

    /** Feeds the changelog (word, running count) in batches to the registered callback; returns the nanoseconds inside it. */
    private long restore(BenchStoreContext ctx, int[] seq, String[] wordText) {
        Serializer<String> ks = Serdes.String().serializer();
        Serializer<Long> vs = Serdes.Long().serializer();
        long[] counts = new long[words];
        long nanos = 0;
        List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>(restoreBatch);
        List<KeyValue<byte[], byte[]>> kvBatch = new ArrayList<>(restoreBatch);
        for (int i = 0; i < seq.length; i++) {
            int w = seq[i];
            byte[] k = ks.serialize("counts-changelog", wordText[w]);
            byte[] v = vs.serialize("counts-changelog", ++counts[w]);
            batch.add(new ConsumerRecord<>("counts-changelog", 0, i, k, v));
            kvBatch.add(KeyValue.pair(k, v));
            if (batch.size() == restoreBatch || i == seq.length - 1) {
                long t = System.nanoTime();
                if (ctx.restoreCallback instanceof RecordBatchingStateRestoreCallback records) {
                    records.restoreBatch(batch);
                } else if (ctx.restoreCallback instanceof BatchingStateRestoreCallback kvs) {
                    kvs.restoreAll(kvBatch);
                } else {
                    for (KeyValue<byte[], byte[]> kv : kvBatch) {
                        ctx.restoreCallback.restore(kv.key, kv.value);
                    }
                }
                nanos += System.nanoTime() - t;
                batch = new ArrayList<>(restoreBatch);
                kvBatch = new ArrayList<>(restoreBatch);
            }
        }
        return nanos;
    }

    /** Off-heap bytes of the store: bloomkv's filters; RocksDB's memtables, table readers (filters, indexes) and block cache. */
    private static String offHeap(StateStore store, BenchStoreContext ctx, long[] out) {
        if (store instanceof BloomKvStore b) {
            Stats s = b.database().stats();
            out[0] = s.filterMemoryBytes();
            return "filters";
        }
        long sum = 0;
        List<String> parts = new ArrayList<>();
        for (Map.Entry<MetricName, ? extends Metric> e : ctx.metrics.metrics().entrySet()) {
            String n = e.getKey().name();
            if (n.equals("size-all-mem-tables") || n.equals("estimate-table-readers-mem") || n.equals("block-cache-usage")) {
                Object v = e.getValue().metricValue();
                if (v instanceof Number num) {
                    sum += num.longValue();
                    parts.add(n);
                }
            }
        }
        out[0] = sum;
        return parts.isEmpty() ? "not reported" : String.join("+", parts);
    }

    private static void gc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
    }

    private static long heapUsed() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static double min(List<Double> xs) {
        return xs.stream().mapToDouble(d -> d).min().orElse(Double.NaN);
    }

    private static double max(List<Double> xs) {
        return xs.stream().mapToDouble(d -> d).max().orElse(Double.NaN);
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(Comparator.naturalOrder());
        int n = s.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    private void report(List<Run> runs) throws IOException {
        Files.createDirectories(reportDir);
        Map<String, Map<String, Object>> summary = new LinkedHashMap<>();
        StringBuilder md = new StringBuilder();
        md.append("# bench kafka-streams\n\n");
        md.append(String.format(Locale.ROOT, "Word count, %,d records over %,d words (skewed), commit every %,d records, restore batches of %,d; "
                + "bloomkv block cache %,d bytes; %d runs per store, stores alternating; machine: %s.%n%n", records, words, commitEvery,
                restoreBatch, bloomkvCacheBytes, rounds, Machine.current().summary()));
        md.append("| store | process rec/s (median, min-max) | restore rec/s (median, min-max) | heap growth MiB (median) | off-heap MiB (median) |\n");
        md.append("|---|---:|---:|---:|---:|\n");
        for (String e : engines) {
            List<Run> mine = runs.stream().filter(r -> r.engine().equals(e)).toList();
            List<Double> p = mine.stream().map(Run::processRecordsPerSec).toList();
            List<Double> r = mine.stream().map(Run::restoreRecordsPerSec).toList();
            List<Double> h = mine.stream().map(x -> (x.heapAfterBytes() - x.heapBeforeBytes()) / 1048576.0).toList();
            List<Double> o = mine.stream().map(x -> x.offHeapBytes() / 1048576.0).toList();
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("processMedian", median(p));
            s.put("processMin", p.stream().mapToDouble(d -> d).min().orElse(Double.NaN));
            s.put("processMax", p.stream().mapToDouble(d -> d).max().orElse(Double.NaN));
            s.put("restoreMedian", median(r));
            s.put("restoreMin", r.stream().mapToDouble(d -> d).min().orElse(Double.NaN));
            s.put("restoreMax", r.stream().mapToDouble(d -> d).max().orElse(Double.NaN));
            s.put("heapGrowthMiBMedian", median(h));
            s.put("offHeapMiBMedian", median(o));
            s.put("offHeapWhat", mine.isEmpty() ? "" : mine.get(0).offHeapWhat());
            summary.put(e, s);
            md.append(String.format(Locale.ROOT, "| %s | %,.0f (%,.0f-%,.0f) | %,.0f (%,.0f-%,.0f) | %+.1f | %.1f (%s) |%n", e,
                    s.get("processMedian"), s.get("processMin"), s.get("processMax"), s.get("restoreMedian"), s.get("restoreMin"),
                    s.get("restoreMax"), s.get("heapGrowthMiBMedian"), s.get("offHeapMiBMedian"), s.get("offHeapWhat")));
        }
        if (summary.containsKey("rocksdb") && summary.containsKey("bloomkv")) {
            // Each round runs both stores back to back: the ratio per round, then its median (as the main bench's goals)
            List<Double> pr = new ArrayList<>();
            List<Double> rr = new ArrayList<>();
            for (Run b : runs) {
                for (Run x : runs) {
                    if (b.engine().equals("bloomkv") && x.engine().equals("rocksdb") && x.round() == b.round()) {
                        pr.add(b.processRecordsPerSec() / x.processRecordsPerSec());
                        rr.add(b.restoreRecordsPerSec() / x.restoreRecordsPerSec());
                    }
                }
            }
            double p = median(pr);
            double r = median(rr);
            md.append(String.format(Locale.ROOT, "%nGoal (median of the per-round ratios bloomkv / rocksdb, min-max): processing >= 1.0x the "
                            + "RocksDB store: %.2fx (%.2f-%.2f, %s); restore >= 1.0x: %.2fx (%.2f-%.2f, %s).%n",
                    p, min(pr), max(pr), p >= 1.0 ? "met" : "NOT met", r, min(rr), max(rr), r >= 1.0 ? "met" : "NOT met"));
            summary.put("ratios", Map.of("process", p, "restore", r, "processPerRound", pr, "restorePerRound", rr));
        }
        md.append("\n![kafka-streams](kafka-streams.png)\n");
        Files.writeString(reportDir.resolve("kafka-streams.md"), md.toString(), StandardCharsets.UTF_8);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("records", records);
        json.put("words", words);
        json.put("commitEvery", commitEvery);
        json.put("restoreBatch", restoreBatch);
        json.put("bloomkvCacheBytes", bloomkvCacheBytes);
        json.put("machine", Machine.current());
        json.put("runs", runs);
        json.put("summary", summary);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(reportDir.resolve("kafka-streams.json").toFile(), json);
        CategoryChart chart = new CategoryChartBuilder().width(900).height(480).title("Kafka Streams word count: records/s (median of "
                + rounds + " runs)").yAxisTitle("records/s").build();
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setYAxisDecimalPattern("#,##0");
        for (String e : engines) {
            Map<String, Object> s = summary.get(e);
            chart.addSeries(e, List.of("process", "restore"), List.of((Double) s.get("processMedian"), (Double) s.get("restoreMedian")));
        }
        BitmapEncoder.saveBitmap(chart, reportDir.resolve("kafka-streams").toString(), BitmapEncoder.BitmapFormat.PNG);
        System.out.println();
        System.out.print(md);
        System.out.println("report: " + reportDir.resolve("kafka-streams.md").toAbsolutePath());
    }

    private static void deleteRecursively(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var all = Files.walk(p)) {
            for (Path f : all.sorted(Comparator.reverseOrder()).toList()) {
                File file = f.toFile();
                if (!file.delete() && file.exists()) {
                    throw new IOException("cannot delete " + f);
                }
            }
        }
    }
}

package io.bloomkv.kafka;

import io.bloomkv.engine.SharedBlockCache;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.WriteBufferManager;
import java.math.BigInteger;
import java.util.BitSet;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.Sensor.RecordingLevel;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.internals.metrics.RocksDBMetrics;
import org.apache.kafka.streams.state.internals.metrics.RocksDBMetrics.RocksDBMetricContext;
import org.apache.kafka.streams.state.internals.metrics.RocksDBMetricsRecorder;
import org.apache.kafka.streams.state.internals.metrics.RocksDBMetricsRecordingTrigger;

/**
 * The store's engine counters in Kafka Streams' metrics registry, group {@code stream-state-metrics}, tags thread-id,
 * task-id and {@code <scope>-state-id} = the store name (scope {@code bloomkv}, {@code bloomkv-window} or {@code
 * bloomkv-session}: the tag key of the store's other metrics, docs/kafka-streams.md "Metrics"). Two kinds:
 *
 * <ul>
 *   <li>the {@code bloomkv-*} gauges, at INFO;
 *   <li>Kafka's own RocksDB store metrics wherever the engine has the same quantity, registered through Kafka's
 *       {@link RocksDBMetrics} so the names, descriptions, value types, stats and recording levels are Kafka's: the
 *       property-based gauges (KIP-607) at INFO, and the statistics-based sensors (KIP-471) at DEBUG, recorded by
 *       Kafka's {@link RocksDBMetricsRecordingTrigger} (KafkaStreams runs it once a minute at DEBUG) with what the
 *       counters moved since the last recording, as Kafka's recorder resets RocksDB's tickers.
 * </ul>
 *
 * <p>Cost: a gauge read takes no lock a read or a write of the store takes ({@code Db.stats()} retains the current
 * version and sums striped counters), but {@code Stats} walks every live table, so the gauges share one: a reporter
 * reading all of them gets one {@code Stats} per round ({@link Rounds}). A closed store reports 0.
 */
final class BloomKvMetrics {
    /** Name and description of every {@code bloomkv-*} gauge, with how it is read from {@link Stats}. */
    private record Def(String name, String description, Function<Stats, Number> read) {}

    private static final Def[] DEFS = {
        new Def(
                "filter-useful",
                "table reads a Bloom filter avoided (ticker BLOOM_FILTER_USEFUL)",
                Stats::filterUseful),
        new Def(
                "filter-positive",
                "filter checks answering 'might contain' (ticker BLOOM_FILTER_FULL_POSITIVE)",
                Stats::filterPositive),
        new Def("filter-true-positive", "filter positives whose table held the key", Stats::filterTruePositive),
        new Def(
                "filter-false-positive-rate",
                "measured false-positive rate of the filters",
                Stats::measuredFalsePositiveRate),
        new Def("filter-memory-bytes", "off-heap bytes of the open tables' Bloom filters", Stats::filterMemoryBytes),
        new Def(
                "tables-without-filter",
                "live tables point reads read without a filter (none written, broken, or no room in a filter budget)",
                Stats::tablesWithoutFilter),
        new Def("block-reads", "data and index blocks read from table files (block cache misses)", Stats::blockReads),
        new Def("block-read-bytes", "bytes of blocks read from table files", Stats::blockReadBytes),
        new Def("block-cache-hits", "data blocks found in the block cache", Stats::blockCacheHits),
        new Def("memtable-bytes", "approximate bytes of the memtables", Stats::memtableBytes),
        new Def("table-count", "live table files", s -> s.tableCount()),
        new Def("table-bytes", "bytes of the live table files", Stats::tableBytes),
        new Def("compactions", "compactions run since the store opened", Stats::compactions),
    };

    /**
     * Kafka's property-based gauges the engine can answer, each with the {@link RocksDBMetrics} method that registers
     * it under Kafka's name. {@code size-all-mem-tables} also counts, in RocksDB, flushed memtables a reader still
     * pins; the engine does not track those, so it equals {@code cur-size-all-mem-tables}. {@code total-sst-files-size}
     * likewise counts only the live tables ({@code bloomkv.total-sst-files-size}). {@code mem-table-flush-pending} is 1
     * while a frozen memtable waits for its flush or is being flushed (RocksDB: waits). The metrics Kafka has and
     * these lack are listed, with the reason, in docs/kafka-streams.md "Metrics".
     */
    private record KafkaGauge(Adder add, ToLongFunction<Stats> read) {}

    @FunctionalInterface
    private interface Adder {
        void add(StreamsMetricsImpl metrics, RocksDBMetricContext context, Gauge<BigInteger> gauge);
    }

    private static final KafkaGauge[] KAFKA_GAUGES = {
        new KafkaGauge(RocksDBMetrics::addNumImmutableMemTableMetric, Stats::immutableMemtables),
        new KafkaGauge(RocksDBMetrics::addCurSizeActiveMemTable, Stats::activeMemtableBytes),
        new KafkaGauge(RocksDBMetrics::addCurSizeAllMemTables, Stats::memtableBytes),
        new KafkaGauge(RocksDBMetrics::addSizeAllMemTables, Stats::memtableBytes),
        new KafkaGauge(RocksDBMetrics::addNumEntriesActiveMemTableMetric, Stats::activeMemtableEntries),
        new KafkaGauge(
                RocksDBMetrics::addNumEntriesImmMemTablesMetric, s -> s.memtableEntries() - s.activeMemtableEntries()),
        new KafkaGauge(RocksDBMetrics::addNumDeletesActiveMemTableMetric, Stats::activeMemtableDeletes),
        new KafkaGauge(
                RocksDBMetrics::addNumDeletesImmMemTablesMetric, s -> s.memtableDeletes() - s.activeMemtableDeletes()),
        new KafkaGauge(RocksDBMetrics::addMemTableFlushPending, s -> s.immutableMemtables() > 0 ? 1 : 0),
        new KafkaGauge(RocksDBMetrics::addCompactionPendingMetric, s -> s.compactionPending() ? 1 : 0),
        new KafkaGauge(RocksDBMetrics::addTotalSstFilesSizeMetric, Stats::tableBytes),
        new KafkaGauge(RocksDBMetrics::addLiveSstFilesSizeMetric, Stats::tableBytes),
        new KafkaGauge(RocksDBMetrics::addNumLiveVersionMetric, Stats::liveVersions),
        new KafkaGauge(RocksDBMetrics::addEstimateNumKeysMetric, Stats::estimateNumKeys),
        new KafkaGauge(RocksDBMetrics::addBackgroundErrorsMetric, Stats::backgroundErrors),
    };

    private final StreamsMetricsImpl metrics;
    private final String taskId;
    private final String storeName;
    private final String scope;
    private final RocksDBMetricContext kafkaContext;
    private final Rounds rounds;
    private final Recorder recorder;

    private BloomKvMetrics(
            StreamsMetricsImpl metrics, TaskId taskId, String storeName, String scope, Supplier<Stats> stats) {
        this.scope = scope;
        this.metrics = metrics;
        this.taskId = taskId.toString();
        this.storeName = storeName;
        this.kafkaContext = new RocksDBMetricContext(this.taskId, scope, storeName);
        this.rounds = new Rounds(stats);
        this.recorder = new Recorder(metrics, kafkaContext, taskId, stats);
    }

    /** Registers the gauges and sensors of one store; {@code stats} returns null when the store is closed. */
    static BloomKvMetrics register(StateStoreContext context, String scope, String storeName, Supplier<Stats> stats) {
        StreamsMetricsImpl metrics = ProcessorContextUtils.metricsImpl(context);
        BloomKvMetrics m = new BloomKvMetrics(metrics, context.taskId(), storeName, scope, stats);
        for (Def d : DEFS) {
            Function<Stats, Number> read = d.read();
            int round = m.rounds.newGauge();
            Gauge<Number> g = (config, now) -> {
                Stats s = m.rounds.stats(round);
                return s == null ? 0 : read.apply(s);
            };
            metrics.addStoreLevelMutableMetric(
                    m.taskId, scope, storeName, "bloomkv-" + d.name(), d.description(), RecordingLevel.INFO, g);
        }
        for (KafkaGauge k : KAFKA_GAUGES) {
            ToLongFunction<Stats> read = k.read();
            int round = m.rounds.newGauge();
            k.add().add(metrics, m.kafkaContext, (config, now) -> {
                Stats s = m.rounds.stats(round);
                return BigInteger.valueOf(s == null ? 0 : read.applyAsLong(s));
            });
        }
        metrics.rocksDBMetricsRecordingTrigger().addMetricsRecorder(m.recorder);
        return m;
    }

    /**
     * Registers the gauges of a window or session store (one database holding every segment as a key range):
     * the database's counters, plus {@code bloomkv-segments}, the live segments.
     */
    static BloomKvMetrics registerSegmented(
            StateStoreContext context,
            String scope,
            String storeName,
            Supplier<Stats> stats,
            java.util.function.IntSupplier segments) {
        BloomKvMetrics m = register(context, scope, storeName, stats);
        m.metrics.addStoreLevelMutableMetric(
                m.taskId,
                scope,
                storeName,
                "bloomkv-segments",
                "live segments (key ranges of the store's one database)",
                RecordingLevel.INFO,
                (Gauge<Number>) (config, now) -> segments.getAsInt());
        return m;
    }

    /**
     * The memory budgets the store's databases share, as Kafka's built-in persistent store reports its block cache and
     * write buffer manager: capacity and current use of the block cache and of the write-buffer budget (0 when the
     * store has none of that kind), and Kafka's {@code block-cache-capacity} and {@code block-cache-usage} (RocksDB's
     * shared cache reports the whole cache's figures too). Removed with the store's other gauges.
     */
    void registerBudgets(SharedBlockCache cache, WriteBufferManager writeBuffers) {
        addBudget(
                "block-cache-capacity-bytes",
                "capacity of the block cache the store's databases share",
                () -> cache == null ? 0 : cache.capacityBytes());
        addBudget(
                "block-cache-usage-bytes",
                "bytes of blocks in that cache now (every database sharing it)",
                () -> cache == null ? 0 : cache.usedBytes());
        addBudget(
                "write-buffer-capacity-bytes",
                "the memtable budget (bloomkv.write.buffer.bytes) the store shares",
                () -> writeBuffers == null ? 0 : writeBuffers.capacityBytes());
        addBudget(
                "write-buffer-usage-bytes",
                "memtable bytes charged to that budget now (every database sharing it)",
                () -> writeBuffers == null ? 0 : writeBuffers.usedBytes());
        RocksDBMetrics.addBlockCacheCapacityMetric(
                metrics, kafkaContext, (config, now) -> BigInteger.valueOf(cache == null ? 0 : cache.capacityBytes()));
        RocksDBMetrics.addBlockCacheUsageMetric(
                metrics, kafkaContext, (config, now) -> BigInteger.valueOf(cache == null ? 0 : cache.usedBytes()));
    }

    private void addBudget(String name, String description, Supplier<Long> read) {
        metrics.addStoreLevelMutableMetric(
                taskId, scope, storeName, "bloomkv-" + name, description, RecordingLevel.INFO, (Gauge<Number>)
                        (config, now) -> read.get());
    }

    /** Removes the store's recorder from the trigger, then every gauge and sensor of the store. Call once. */
    void remove() {
        metrics.rocksDBMetricsRecordingTrigger().removeMetricsRecorder(recorder);
        metrics.removeAllStoreLevelSensorsAndMetrics(taskId, storeName);
    }

    /**
     * One {@link Stats} per round of gauge reads: a gauge gets the Stats the round holds unless it has read that one
     * already (a reporter's next round, or a caller reading the same gauge twice) or the Stats is older than a second;
     * then a new Stats starts the next round. So a reporter that reads every gauge takes one Stats, not one per gauge,
     * and a gauge never answers the same Stats twice. Its own lock, never the store's.
     */
    static final class Rounds {
        private static final long MAX_AGE_NANOS = 1_000_000_000L;
        private final Supplier<Stats> source;
        private final BitSet served = new BitSet();
        private int gauges;
        private boolean taken;
        private Stats current; // null: the store was closed
        private long takenNanos;

        Rounds(Supplier<Stats> source) {
            this.source = source;
        }

        int newGauge() {
            return gauges++;
        }

        synchronized Stats stats(int gauge) {
            long now = System.nanoTime();
            if (!taken || served.get(gauge) || now - takenNanos > MAX_AGE_NANOS) {
                current = source.get();
                taken = true;
                takenNanos = now;
                served.clear();
            }
            served.set(gauge);
            return current;
        }
    }

    /**
     * Kafka's statistics-based sensors of the store, recorded when Kafka's trigger runs: each records what its counter
     * moved since the last recording (the counters are the engine's since the store opened), as Kafka's recorder
     * records RocksDB's tickers, which it resets. Ratios with no lookup in the interval record 0, as Kafka's do. Only
     * the {@link RocksDBMetricsRecorder} methods the trigger calls are used ({@link #taskId()}, {@link #storeName()},
     * {@link #record}); its RocksDB value providers stay empty.
     */
    private static final class Recorder extends RocksDBMetricsRecorder {
        private final TaskId task;
        private final Supplier<Stats> stats;
        private final Sensor bytesWritten;
        private final Sensor memtableBytesFlushed;
        private final Sensor memtableHitRatio;
        private final Sensor writeStallDuration;
        private final Sensor blockCacheDataHitRatio;
        private final Sensor bytesReadCompaction;
        private final Sensor bytesWrittenCompaction;
        private final Sensor openFiles;
        private long userBytes;
        private long flushBytes;
        private long gets;
        private long memtableHits;
        private long stallMicros;
        private long cacheHits;
        private long cacheMisses;
        private long compactionRead;
        private long compactionWritten;
        private long filesOpen;

        Recorder(StreamsMetricsImpl metrics, RocksDBMetricContext context, TaskId task, Supplier<Stats> stats) {
            super(context.metricsScope(), context.storeName());
            this.task = task;
            this.stats = stats;
            bytesWritten = RocksDBMetrics.bytesWrittenToDatabaseSensor(metrics, context);
            memtableBytesFlushed = RocksDBMetrics.memtableBytesFlushedSensor(metrics, context);
            memtableHitRatio = RocksDBMetrics.memtableHitRatioSensor(metrics, context);
            writeStallDuration = RocksDBMetrics.writeStallDurationSensor(metrics, context);
            blockCacheDataHitRatio = RocksDBMetrics.blockCacheDataHitRatioSensor(metrics, context);
            bytesReadCompaction = RocksDBMetrics.bytesReadDuringCompactionSensor(metrics, context);
            bytesWrittenCompaction = RocksDBMetrics.bytesWrittenDuringCompactionSensor(metrics, context);
            openFiles = RocksDBMetrics.numberOfOpenFilesSensor(metrics, context);
        }

        @Override
        public TaskId taskId() {
            return task;
        }

        /** Records the counters' moves since the last call; nothing while the store is closed. */
        @Override
        public synchronized void record(long now) {
            Stats s = stats.get();
            if (s == null) {
                return;
            }
            long hits = s.memtableHits() - memtableHits;
            long lookups = s.gets() - gets;
            long dataHits = s.blockCacheHits() - cacheHits;
            long dataMisses = s.blockCacheMisses() - cacheMisses;
            long open = s.tablesOpened() - s.tablesClosed();
            bytesWritten.record(s.userBytesWritten() - userBytes, now);
            memtableBytesFlushed.record(s.flushBytesWritten() - flushBytes, now);
            memtableHitRatio.record(hits == 0 ? 0 : (double) hits / lookups, now);
            writeStallDuration.record(s.writeStallMicros() - stallMicros, now);
            blockCacheDataHitRatio.record(dataHits == 0 ? 0 : (double) dataHits / (dataHits + dataMisses), now);
            bytesReadCompaction.record(s.compactionBytesRead() - compactionRead, now);
            bytesWrittenCompaction.record(s.compactionBytesWritten() - compactionWritten, now);
            // A cumulative sum in Kafka: the moves add up to the table files open now.
            openFiles.record(open - filesOpen, now);
            userBytes = s.userBytesWritten();
            flushBytes = s.flushBytesWritten();
            memtableHits = s.memtableHits();
            gets = s.gets();
            stallMicros = s.writeStallMicros();
            cacheHits = s.blockCacheHits();
            cacheMisses = s.blockCacheMisses();
            compactionRead = s.compactionBytesRead();
            compactionWritten = s.compactionBytesWritten();
            filesOpen = open;
        }
    }
}

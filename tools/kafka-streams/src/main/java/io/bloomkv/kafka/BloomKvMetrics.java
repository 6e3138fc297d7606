package io.bloomkv.kafka;

import io.bloomkv.engine.SharedBlockCache;
import io.bloomkv.engine.Stats;
import io.bloomkv.engine.WriteBufferManager;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Sensor.RecordingLevel;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.ProcessorContextUtils;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;

/**
 * The store's engine counters as gauges in Kafka Streams' metrics registry, in the state-store
 * group ({@code stream-state-metrics}, tags thread-id, task-id and {@code bloomkv-state-id} = the
 * store name), as Kafka's built-in persistent store reports its engine properties. Each read takes the counters of that
 * moment (cheap: no I/O); a closed store reports 0.
 */
final class BloomKvMetrics {
    /** Name and description of every gauge, with how it is read from {@link Stats}. */
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
        new Def("block-reads", "data and index blocks read from table files (block cache misses)", Stats::blockReads),
        new Def("block-read-bytes", "bytes of blocks read from table files", Stats::blockReadBytes),
        new Def("block-cache-hits", "data blocks found in the block cache", Stats::blockCacheHits),
        new Def("memtable-bytes", "approximate bytes of the memtables", Stats::memtableBytes),
        new Def("table-count", "live table files", s -> s.tableCount()),
        new Def("table-bytes", "bytes of the live table files", Stats::tableBytes),
        new Def("compactions", "compactions run since the store opened", Stats::compactions),
    };

    private final StreamsMetricsImpl metrics;
    private final String taskId;
    private final String storeName;
    private final String scope;

    private BloomKvMetrics(StreamsMetricsImpl metrics, String taskId, String storeName, String scope) {
        this.scope = scope;
        this.metrics = metrics;
        this.taskId = taskId;
        this.storeName = storeName;
    }

    /** Registers the gauges of one store; {@code stats} returns null when the store is closed. */
    static BloomKvMetrics register(StateStoreContext context, String scope, String storeName, Supplier<Stats> stats) {
        StreamsMetricsImpl metrics = ProcessorContextUtils.metricsImpl(context);
        String taskId = context.taskId().toString();
        for (Def d : DEFS) {
            Gauge<Number> g = (config, now) -> {
                Stats s = stats.get();
                return s == null ? 0 : d.read().apply(s);
            };
            metrics.addStoreLevelMutableMetric(
                    taskId, scope, storeName, "bloomkv-" + d.name(), d.description(), RecordingLevel.INFO, g);
        }
        return new BloomKvMetrics(metrics, taskId, storeName, scope);
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
     * The memory budgets the store's databases share, as Kafka's built-in persistent store reports its block cache and write
     * buffer manager: capacity and current use of the block cache and of the write-buffer budget (0 when the
     * store has none of that kind). Removed with the store's other gauges.
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
    }

    private void addBudget(String name, String description, Supplier<Long> read) {
        metrics.addStoreLevelMutableMetric(
                taskId, scope, storeName, "bloomkv-" + name, description, RecordingLevel.INFO, (Gauge<Number>)
                        (config, now) -> read.get());
    }

    void remove() {
        metrics.removeAllStoreLevelSensorsAndMetrics(taskId, storeName);
    }
}

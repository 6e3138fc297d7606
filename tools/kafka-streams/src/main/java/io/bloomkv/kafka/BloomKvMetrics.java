package io.bloomkv.kafka;

import io.bloomkv.engine.Stats;
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
 * store name), as RocksDB's store reports its properties. Each read takes the counters of that
 * moment (cheap: no I/O); a closed store reports 0.
 */
final class BloomKvMetrics {
    /** Name and description of every gauge, with how it is read from {@link Stats}. */
    private record Def(String name, String description, Function<Stats, Number> read) {}

    private static final Def[] DEFS = {
        new Def("filter-useful", "table reads a Bloom filter avoided (RocksDB BLOOM_FILTER_USEFUL)", Stats::filterUseful),
        new Def("filter-positive", "filter checks answering 'might contain' (RocksDB BLOOM_FILTER_FULL_POSITIVE)", Stats::filterPositive),
        new Def("filter-true-positive", "filter positives whose table held the key", Stats::filterTruePositive),
        new Def("filter-false-positive-rate", "measured false-positive rate of the filters", Stats::measuredFalsePositiveRate),
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

    private BloomKvMetrics(StreamsMetricsImpl metrics, String taskId, String storeName) {
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
            metrics.addStoreLevelMutableMetric(taskId, scope, storeName, "bloomkv-" + d.name(), d.description(), RecordingLevel.INFO, g);
        }
        return new BloomKvMetrics(metrics, taskId, storeName);
    }

    void remove() {
        metrics.removeAllStoreLevelSensorsAndMetrics(taskId, storeName);
    }
}

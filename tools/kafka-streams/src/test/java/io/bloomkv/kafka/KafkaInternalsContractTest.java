package io.bloomkv.kafka;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import java.io.File;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Sensor.RecordingLevel;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.junit.jupiter.api.Test;

/**
 * The Kafka Streams internals the store module still uses (docs/kafka-streams.md, "Kafka internals the stores
 * use"), each checked by reflection with the exact signature the code calls: a Kafka upgrade that removes or changes
 * one fails here with its name, not later in an application whose stores stop restoring. A second check reads the
 * module's compiled classes: a Kafka internal that is not on this list fails the build until it is added here and to
 * the docs with its reason.
 */
class KafkaInternalsContractTest {
    private static final String PROCESSOR_INTERNALS = "org.apache.kafka.streams.processor.internals.";
    private static final String STATE_INTERNALS = "org.apache.kafka.streams.state.internals.";

    /** Every Kafka internal class the main code names. */
    static final Set<String> NAMED = Set.of(
            STATE_INTERNALS + "OffsetCheckpoint",
            STATE_INTERNALS + "StoreQueryUtils",
            PROCESSOR_INTERNALS + "RecordBatchingStateRestoreCallback",
            PROCESSOR_INTERNALS + "ChangelogRecordDeserializationHelper",
            PROCESSOR_INTERNALS + "ProcessorContextUtils",
            PROCESSOR_INTERNALS + "metrics.StreamsMetricsImpl",
            "org.apache.kafka.streams.StreamsConfig$InternalConfig",
            "org.apache.kafka.streams.internals.ApiUtils",
            STATE_INTERNALS + "VersionedKeyValueToBytesStoreAdapter",
            PROCESSOR_INTERNALS + "metrics.TaskMetrics",
            PROCESSOR_INTERNALS + "InternalProcessorContext",
            "org.apache.kafka.streams.kstream.internals.TimeWindow",
            "org.apache.kafka.streams.kstream.internals.SessionWindow",
            STATE_INTERNALS + "metrics.RocksDBMetrics",
            STATE_INTERNALS + "metrics.RocksDBMetricsRecorder",
            STATE_INTERNALS + "metrics.RocksDBMetricsRecordingTrigger");

    /** The {@code RocksDBMetrics} methods that register a gauge under Kafka's name ({@code BloomKvMetrics}). */
    static final List<String> KAFKA_GAUGE_ADDERS = List.of(
            "addNumImmutableMemTableMetric",
            "addCurSizeActiveMemTable",
            "addCurSizeAllMemTables",
            "addSizeAllMemTables",
            "addNumEntriesActiveMemTableMetric",
            "addNumEntriesImmMemTablesMetric",
            "addNumDeletesActiveMemTableMetric",
            "addNumDeletesImmMemTablesMetric",
            "addMemTableFlushPending",
            "addCompactionPendingMetric",
            "addTotalSstFilesSizeMetric",
            "addLiveSstFilesSizeMetric",
            "addNumLiveVersionMetric",
            "addEstimateNumKeysMetric",
            "addBackgroundErrorsMetric",
            "addBlockCacheCapacityMetric",
            "addBlockCacheUsageMetric");

    /** The {@code RocksDBMetrics} methods that create a statistics-based sensor ({@code BloomKvMetrics.Recorder}). */
    static final List<String> KAFKA_SENSORS = List.of(
            "bytesWrittenToDatabaseSensor",
            "memtableBytesFlushedSensor",
            "memtableHitRatioSensor",
            "writeStallDurationSensor",
            "blockCacheDataHitRatioSensor",
            "bytesReadDuringCompactionSensor",
            "bytesWrittenDuringCompactionSensor",
            "numberOfOpenFilesSensor");

    @Test
    void offsetCheckpointReadsThePositionAndOffsetsFilesOfEarlierVersions() throws Exception {
        Class<?> checkpoint = Class.forName(STATE_INTERNALS + "OffsetCheckpoint");
        Constructor<?> ctor = checkpoint.getConstructor(File.class);
        assertThat(Modifier.isPublic(ctor.getModifiers())).isTrue();
        Class<?> utils = Class.forName(STATE_INTERNALS + "StoreQueryUtils");
        assertStatic(utils.getMethod("readPositionFromCheckpoint", checkpoint), Position.class);
    }

    @Test
    void storeQueryUtilsAnswersTheBasicQueries() throws Exception {
        Class<?> utils = Class.forName(STATE_INTERNALS + "StoreQueryUtils");
        assertStatic(
                utils.getMethod(
                        "handleBasicQueries",
                        Query.class,
                        PositionBound.class,
                        QueryConfig.class,
                        StateStore.class,
                        Position.class,
                        StateStoreContext.class),
                QueryResult.class);
    }

    @Test
    void restoreSeesWholeChangelogRecords() throws Exception {
        Class<?> callback = Class.forName(PROCESSOR_INTERNALS + "RecordBatchingStateRestoreCallback");
        assertThat(callback.isInterface()).isTrue();
        Method restoreBatch = callback.getMethod("restoreBatch", Collection.class);
        assertThat(Modifier.isAbstract(restoreBatch.getModifiers()))
                .as("the one method a store implements")
                .isTrue();
        assertThat(restoreBatch.getReturnType()).isEqualTo(void.class);
        Class<?> helper = Class.forName(PROCESSOR_INTERNALS + "ChangelogRecordDeserializationHelper");
        assertStatic(
                helper.getMethod("applyChecksAndUpdatePosition", ConsumerRecord.class, boolean.class, Position.class),
                void.class);
    }

    @Test
    void storeLevelGaugesGoThroughStreamsMetricsImpl() throws Exception {
        Class<?> impl = Class.forName(PROCESSOR_INTERNALS + "metrics.StreamsMetricsImpl");
        Class<?> utils = Class.forName(PROCESSOR_INTERNALS + "ProcessorContextUtils");
        assertStatic(utils.getMethod("metricsImpl", StateStoreContext.class), impl);
        Method add = impl.getMethod(
                "addStoreLevelMutableMetric",
                String.class,
                String.class,
                String.class,
                String.class,
                String.class,
                RecordingLevel.class,
                Gauge.class);
        assertThat(Modifier.isStatic(add.getModifiers())).isFalse();
        Method remove = impl.getMethod("removeAllStoreLevelSensorsAndMetrics", String.class, String.class);
        assertThat(Modifier.isStatic(remove.getModifiers())).isFalse();
    }

    @Test
    void kafkasRocksDbMetricsAreRegisteredAndRecordedThroughKafkasOwnClasses() throws Exception {
        Class<?> impl = Class.forName(PROCESSOR_INTERNALS + "metrics.StreamsMetricsImpl");
        Class<?> metrics = Class.forName(STATE_INTERNALS + "metrics.RocksDBMetrics");
        Class<?> context = Class.forName(STATE_INTERNALS + "metrics.RocksDBMetrics$RocksDBMetricContext");
        assertThat(Modifier.isPublic(context.getConstructor(String.class, String.class, String.class)
                        .getModifiers()))
                .isTrue();
        for (String adder : KAFKA_GAUGE_ADDERS) {
            assertStatic(metrics.getMethod(adder, impl, context, Gauge.class), void.class);
        }
        for (String sensor : KAFKA_SENSORS) {
            assertStatic(metrics.getMethod(sensor, impl, context), org.apache.kafka.common.metrics.Sensor.class);
        }
        Class<?> recorder = Class.forName(STATE_INTERNALS + "metrics.RocksDBMetricsRecorder");
        assertThat(Modifier.isPublic(
                        recorder.getConstructor(String.class, String.class).getModifiers()))
                .isTrue();
        for (Method m : new Method[] {
            recorder.getMethod("record", long.class), recorder.getMethod("taskId"), recorder.getMethod("storeName")
        }) {
            assertThat(Modifier.isFinal(m.getModifiers()) || Modifier.isStatic(m.getModifiers()))
                    .as("%s can be overridden", m)
                    .isFalse();
        }
        Class<?> trigger = Class.forName(STATE_INTERNALS + "metrics.RocksDBMetricsRecordingTrigger");
        assertThat(impl.getMethod("rocksDBMetricsRecordingTrigger").getReturnType())
                .isEqualTo(trigger);
        trigger.getMethod("addMetricsRecorder", recorder);
        trigger.getMethod("removeMetricsRecorder", recorder);
        assertThat(Runnable.class.isAssignableFrom(trigger))
                .as("what KafkaStreams schedules")
                .isTrue();
    }

    @Test
    void consistencyVectorSwitchIsAnInternalConfig() throws Exception {
        Class<?> internal = Class.forName("org.apache.kafka.streams.StreamsConfig$InternalConfig");
        assertThat(internal.getEnclosingClass()).isEqualTo(StreamsConfig.class);
        Field key = internal.getField("IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED");
        assertThat(Modifier.isStatic(key.getModifiers())).isTrue();
        assertThat(key.get(null)).isEqualTo("__iq.consistency.offset.vector.enabled__");
        assertStatic(internal.getMethod("getBoolean", Map.class, String.class, boolean.class), boolean.class);
    }

    @Test
    void durationChecksGiveKafkasMessages() throws Exception {
        Class<?> api = Class.forName("org.apache.kafka.streams.internals.ApiUtils");
        assertStatic(api.getMethod("prepareMillisCheckFailMsgPrefix", Object.class, String.class), String.class);
        assertStatic(api.getMethod("validateMillisecondDuration", java.time.Duration.class, String.class), long.class);
    }

    @Test
    void versionedStoresAreAdaptedToBytesStoresAsKafkasAre() throws Exception {
        Class<?> adapter = Class.forName(STATE_INTERNALS + "VersionedKeyValueToBytesStoreAdapter");
        Constructor<?> ctor = adapter.getConstructor(org.apache.kafka.streams.state.VersionedKeyValueStore.class);
        assertThat(Modifier.isPublic(ctor.getModifiers())).isTrue();
        assertThat(org.apache.kafka.streams.state.KeyValueStore.class.isAssignableFrom(adapter))
                .isTrue();
    }

    @Test
    void droppedRecordsGoToTheTaskSensor() throws Exception {
        Class<?> task = Class.forName(PROCESSOR_INTERNALS + "metrics.TaskMetrics");
        Class<?> impl = Class.forName(PROCESSOR_INTERNALS + "metrics.StreamsMetricsImpl");
        assertStatic(
                task.getMethod("droppedRecordsSensor", String.class, String.class, impl),
                org.apache.kafka.common.metrics.Sensor.class);
        Class<?> ctx = Class.forName(PROCESSOR_INTERNALS + "InternalProcessorContext");
        assertThat(ctx.getMethod("currentSystemTimeMs").getReturnType()).isEqualTo(long.class);
    }

    @Test
    void windowedKeysCarryKafkasWindowClasses() throws Exception {
        for (String name : new String[] {"TimeWindow", "SessionWindow"}) {
            Class<?> w = Class.forName("org.apache.kafka.streams.kstream.internals." + name);
            assertThat(org.apache.kafka.streams.kstream.Window.class.isAssignableFrom(w))
                    .as(name)
                    .isTrue();
            assertThat(Modifier.isPublic(
                            w.getConstructor(long.class, long.class).getModifiers()))
                    .as(name)
                    .isTrue();
        }
    }

    @Test
    void theMainCodeUsesNoOtherKafkaInternal() {
        JavaClasses main = new ClassFileImporter().importLocations(Set.of(Location.of(Path.of("target", "classes"))));
        DescribedPredicate<JavaClass> unnamedInternal = DescribedPredicate.describe(
                "a Kafka internal not named in KafkaInternalsContractTest and docs/kafka-streams.md",
                c -> c.getName().startsWith("org.apache.kafka.")
                        && isInternal(c)
                        && !NAMED.contains(outermostOrSelf(c)));
        noClasses().should().dependOnClassesThat(unnamedInternal).check(main);
    }

    private static boolean isInternal(JavaClass c) {
        return c.getPackageName().contains(".internals") || c.getName().contains("$InternalConfig");
    }

    /** The named class a nested class belongs to (StreamsMetricsImpl$X counts as StreamsMetricsImpl). */
    private static String outermostOrSelf(JavaClass c) {
        String n = c.getName();
        if (NAMED.contains(n)) {
            return n;
        }
        int dollar = n.indexOf('$');
        return dollar < 0 ? n : n.substring(0, dollar);
    }

    private static void assertStatic(Method m, Class<?> returnType) {
        assertThat(Modifier.isStatic(m.getModifiers())).as("%s is static", m).isTrue();
        assertThat(Modifier.isPublic(m.getModifiers())).as("%s is public", m).isTrue();
        assertThat(m.getReturnType()).as("return type of %s", m).isEqualTo(returnType);
    }
}

package io.bloomkv.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.processor.internals.ChangelogRecordDeserializationHelper;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.internals.PositionSerde;

/** Changelog records as a logged store writes them when IQ consistency is on (restore tests). */
final class ChangelogRecords {
    private ChangelogRecords() {}

    /**
     * A changelog record with the headers of a consistent store: the record version and the input position
     * {@code inputTopic}-{@code inputPartition} at {@code inputOffset}.
     */
    static ConsumerRecord<byte[], byte[]> withPosition(
            String changelog,
            int partition,
            long offset,
            byte[] key,
            byte[] value,
            String inputTopic,
            int inputPartition,
            long inputOffset) {
        ConsumerRecord<byte[], byte[]> r = new ConsumerRecord<>(changelog, partition, offset, key, value);
        r.headers().add(ChangelogRecordDeserializationHelper.CHANGELOG_VERSION_HEADER_RECORD_CONSISTENCY);
        r.headers()
                .add(
                        ChangelogRecordDeserializationHelper.CHANGELOG_POSITION_HEADER_KEY,
                        PositionSerde.serialize(
                                        Position.emptyPosition().withComponent(inputTopic, inputPartition, inputOffset))
                                .array());
        return r;
    }
}

package io.bloomkv.bench.kafka;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;

/**
 * One task's changelog as the bench's processing phase writes it (what Kafka's change-logging layer would send to the
 * changelog topic), kept compact until the restore phase reads it back as {@link ConsumerRecord}s: a record is its
 * timestamp, key and value (null: a tombstone) packed into 1 MiB byte chunks. A real application sends these records
 * to a producer and keeps none; a list of {@code ConsumerRecord}s (about 190 bytes of objects a record, kept live
 * through the whole processing phase) was most of the bench's live heap, and young collections copied it, for both
 * engines, so the resident set the bench reports was largely its own. The chunks are allocated once each (G1 places
 * arrays of more than half a region outside the young generation, so they are never copied).
 */
final class Changelog {
    /**
     * Bytes of a chunk: 1 MiB less a byte array's 16-byte header, so that a chunk is exactly one G1 region of 1 MiB (the
     * region size up to 2 GiB heaps). A chunk of 1 MiB of bytes was 16 bytes over, and G1 gave each such humongous
     * array two regions: the bench's changelogs held twice their size of heap, in both engines' runs.
     */
    private static final int CHUNK = (1 << 20) - 16;

    private final String topic;
    private final int partition;
    private final List<byte[]> chunks = new ArrayList<>();
    /** The bytes used in each chunk before {@link #current} (their ends are left unused). */
    private final List<Integer> filled = new ArrayList<>();

    private byte[] current;
    private int used;
    private int size;

    Changelog(String topic, int partition) {
        this.topic = topic;
        this.partition = partition;
    }

    /** Records appended so far: the next record's offset. */
    int size() {
        return size;
    }

    /** Appends a record (the changelog offset is its index); {@code value} null is a tombstone. */
    void append(byte[] key, byte[] value, long timestamp) {
        int length = 8 + 4 + key.length + 4 + (value == null ? 0 : value.length);
        if (current == null || used + length > current.length) {
            if (current != null) {
                filled.add(used);
            }
            current = new byte[Math.max(CHUNK, length)];
            chunks.add(current);
            used = 0;
        }
        putLong(current, used, timestamp);
        used += 8;
        putInt(current, used, key.length);
        used += 4;
        System.arraycopy(key, 0, current, used, key.length);
        used += key.length;
        putInt(current, used, value == null ? -1 : value.length);
        used += 4;
        if (value != null) {
            System.arraycopy(value, 0, current, used, value.length);
            used += value.length;
        }
        size++;
    }

    /** Every record, in order, as the consumer of the changelog topic would hand them to a restore. */
    List<ConsumerRecord<byte[], byte[]>> records() {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>(size);
        for (int c = 0; c < chunks.size(); c++) {
            byte[] chunk = chunks.get(c);
            int end = c < filled.size() ? filled.get(c) : used;
            int at = 0;
            while (at < end) {
                long timestamp = getLong(chunk, at);
                at += 8;
                int keyLength = getInt(chunk, at);
                at += 4;
                byte[] key = Arrays.copyOfRange(chunk, at, at + keyLength);
                at += keyLength;
                int valueLength = getInt(chunk, at);
                at += 4;
                byte[] value = null;
                if (valueLength >= 0) {
                    value = Arrays.copyOfRange(chunk, at, at + valueLength);
                    at += valueLength;
                }
                out.add(new ConsumerRecord<>(
                        topic,
                        partition,
                        out.size(),
                        timestamp,
                        TimestampType.CREATE_TIME,
                        0,
                        0,
                        key,
                        value,
                        new RecordHeaders(),
                        Optional.empty()));
            }
        }
        if (out.size() != size) {
            throw new IllegalStateException(
                    "changelog of partition " + partition + ": read " + out.size() + " records, wrote " + size);
        }
        return out;
    }

    private static void putLong(byte[] b, int at, long v) {
        putInt(b, at, (int) (v >>> 32));
        putInt(b, at + 4, (int) v);
    }

    private static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    private static long getLong(byte[] b, int at) {
        return ((long) getInt(b, at) << 32) | (getInt(b, at + 4) & 0xFFFFFFFFL);
    }

    private static int getInt(byte[] b, int at) {
        return (b[at] & 0xFF) << 24 | (b[at + 1] & 0xFF) << 16 | (b[at + 2] & 0xFF) << 8 | (b[at + 3] & 0xFF);
    }
}

package io.bloomkv.bench.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

class ChangelogTest {
    @Test
    void readsBackEveryRecordInOrderAcrossChunks() {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println("ChangelogTest seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        Changelog log = new Changelog("topic", 3);
        List<byte[][]> expected = new ArrayList<>();
        List<Long> times = new ArrayList<>();
        for (int i = 0; i < 40_000; i++) {
            // Mostly small records, some empty keys, tombstones, and a few larger than a chunk.
            byte[] key = new byte[rnd.nextInt(10) == 0 ? 0 : 1 + rnd.nextInt(40)];
            rnd.nextBytes(key);
            byte[] value = rnd.nextInt(5) == 0 ? null : new byte[i % 9973 == 0 ? (1 << 20) + 7 : rnd.nextInt(100)];
            if (value != null) {
                rnd.nextBytes(value);
            }
            long ts = rnd.nextLong();
            log.append(key, value, ts);
            expected.add(new byte[][] {key, value});
            times.add(ts);
        }
        assertThat(log.size()).isEqualTo(expected.size());
        List<ConsumerRecord<byte[], byte[]>> records = log.records();
        assertThat(records).hasSize(expected.size());
        for (int i = 0; i < records.size(); i++) {
            ConsumerRecord<byte[], byte[]> r = records.get(i);
            assertThat(r.offset()).as("seed " + seed + " record " + i).isEqualTo(i);
            assertThat(r.partition()).isEqualTo(3);
            assertThat(r.topic()).isEqualTo("topic");
            assertThat(r.timestamp()).as("seed " + seed + " record " + i).isEqualTo(times.get(i));
            assertThat(r.key()).as("seed " + seed + " record " + i).isEqualTo(expected.get(i)[0]);
            assertThat(r.value()).as("seed " + seed + " record " + i).isEqualTo(expected.get(i)[1]);
        }
    }
}

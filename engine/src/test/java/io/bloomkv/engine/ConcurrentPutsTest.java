package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Single puts from several threads at once, each on its own keys interleaved in one key space, into small memtables:
 * writers queue behind one another, leaders write groups, and memtables switch (and flush) between and within the
 * threads' runs. Every key must then read as its thread last wrote it, through gets and through a scan in key order,
 * and again after a reopen (from the tables and the WAL). Seeded.
 */
class ConcurrentPutsTest {
    @TempDir
    Path dir;

    private static byte[] key(int id) {
        return String.format("key%07d", id).getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void putsFromSeveralThreadsReadAsEachThreadLastWroteThem() throws Exception {
        long seed = TestSeeds.seed("ConcurrentPutsTest");
        int threads = 3;
        int puts = 15_000;
        int keysPerThread = 3_000;
        List<Map<Integer, byte[]>> last = new ArrayList<>();
        Options o = Options.defaults().writeBufferSize(256 << 10);
        try (Db db = Db.open(dir, o)) {
            List<Thread> ts = new ArrayList<>();
            List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                Map<Integer, byte[]> mine = new TreeMap<>();
                last.add(mine);
                int thread = t;
                ts.add(new Thread(() -> {
                    Random rnd = new Random(seed + thread);
                    try {
                        for (int i = 0; i < puts; i++) {
                            int id = rnd.nextInt(keysPerThread) * threads + thread; // this thread's keys only
                            byte[] v = new byte[rnd.nextInt(3) == 0 ? 200 + rnd.nextInt(800) : 1 + rnd.nextInt(60)];
                            rnd.nextBytes(v);
                            db.put(key(id), v);
                            mine.put(id, v);
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            ts.forEach(Thread::start);
            for (Thread th : ts) {
                th.join();
            }
            assertThat(errors).as("seed %d", seed).isEmpty();
            check(db, last, seed, "open");
        }
        try (Db db = Db.open(dir, o)) {
            check(db, last, seed, "reopened");
        }
    }

    private static void check(Db db, List<Map<Integer, byte[]>> last, long seed, String when) {
        TreeMap<String, byte[]> all = new TreeMap<>();
        for (Map<Integer, byte[]> mine : last) {
            for (Map.Entry<Integer, byte[]> e : mine.entrySet()) {
                byte[] k = key(e.getKey());
                assertThat(db.get(k))
                        .as("seed %d, %s, key %d", seed, when, e.getKey())
                        .isEqualTo(e.getValue());
                all.put(new String(k, StandardCharsets.US_ASCII), e.getValue());
            }
        }
        List<String> scanned = new ArrayList<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                String k = new String(it.key(), StandardCharsets.US_ASCII);
                assertThat(it.value()).as("seed %d, %s, scan %s", seed, when, k).isEqualTo(all.get(k));
                scanned.add(k);
            }
        }
        assertThat(scanned).as("seed %d, %s: the scan", seed, when).containsExactlyElementsOf(all.keySet());
    }
}

package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point reads through the per-thread SuperVersion ({@link ThreadLocalRefs}) while flushes and compactions install new
 * ones, over merge operands (uint64 counters) and with range tombstones present elsewhere (so get and multiGet take the
 * tombstone-aware lookup): a writer adds 1 to each counter in turn, flushing and compacting as it goes, and deletes
 * ranges of other keys; each reader's get, multiGet and iterator must see every counter within [the count acknowledged
 * before the read, the count begun after it], never going back. Reader threads stay alive across close: the slots'
 * cached SuperVersions must not keep tables open.
 */
class ConcurrentMergeReadsTest {
    @TempDir
    Path dir;

    private static final int COUNTERS = 6;
    private static final int ROUNDS = 1500;

    @AfterEach
    void noTableLeftOpen() {
        assertThat(TableReader.liveTables()).as("no table left open").isZero();
    }

    private static byte[] counter(int i) {
        return ("c" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] one() {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(1).array();
    }

    private static long count(byte[] v) {
        return v == null ? 0 : ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void readersSeeCountersGrowWhileSuperVersionsChange() throws Exception {
        Options o = Options.defaults()
                .writeBufferSize(4 << 10)
                .blockSize(256)
                .targetFileSize(4 << 10)
                .l0CompactionTrigger(2)
                .mergeOperator(MergeOperators.uint64Add());
        AtomicLongArray acked = new AtomicLongArray(COUNTERS);
        AtomicLongArray started = new AtomicLongArray(COUNTERS);
        AtomicBoolean done = new AtomicBoolean();
        ExecutorService readers = Executors.newFixedThreadPool(3);
        try {
            Db db = Db.open(dir, o);
            try {
                List<Future<Long>> reads = new ArrayList<>();
                for (int t = 0; t < 3; t++) {
                    int mode = t;
                    reads.add(readers.submit(() -> {
                        long[] seen = new long[COUNTERS];
                        long n = 0;
                        while (!done.get()) {
                            long[] before = new long[COUNTERS];
                            for (int i = 0; i < COUNTERS; i++) {
                                before[i] = acked.get(i);
                            }
                            long[] got = new long[COUNTERS];
                            if (mode == 0) {
                                for (int i = 0; i < COUNTERS; i++) {
                                    got[i] = count(db.get(counter(i)));
                                }
                            } else if (mode == 1) {
                                List<byte[]> ks = new ArrayList<>();
                                for (int i = 0; i < COUNTERS; i++) {
                                    ks.add(counter(i));
                                }
                                List<byte[]> vs = db.multiGet(ks);
                                for (int i = 0; i < COUNTERS; i++) {
                                    got[i] = count(vs.get(i));
                                }
                            } else {
                                try (DbIterator it = db.iterator(ReadOptions.defaults()
                                        .iterateLowerBound(counter(0))
                                        .iterateUpperBound(counter(COUNTERS)))) {
                                    for (it.seekToFirst(); it.valid(); it.next()) {
                                        int i = it.key()[1] - '0';
                                        got[i] = count(it.value());
                                    }
                                }
                            }
                            for (int i = 0; i < COUNTERS; i++) {
                                long after = started.get(i);
                                String what = "mode " + mode + " counter " + i;
                                assertThat(got[i]).as(what + " >= acked before").isGreaterThanOrEqualTo(before[i]);
                                assertThat(got[i])
                                        .as(what + " <= started after")
                                        .isLessThanOrEqualTo(after);
                                assertThat(got[i]).as(what + " never goes back").isGreaterThanOrEqualTo(seen[i]);
                                seen[i] = got[i];
                            }
                            n++;
                        }
                        return n;
                    }));
                }
                byte[] filler = new byte[40];
                for (int r = 1; r <= ROUNDS; r++) {
                    for (int i = 0; i < COUNTERS; i++) {
                        started.set(i, r);
                        db.merge(counter(i), one());
                        acked.set(i, r);
                    }
                    db.put(("z" + r).getBytes(StandardCharsets.UTF_8), filler);
                    if (r % 25 == 0) {
                        db.deleteRange(("z" + (r - 20)).getBytes(StandardCharsets.UTF_8), "z~".getBytes());
                    }
                    if (r % 100 == 0) {
                        db.flush();
                    }
                    if (r % 400 == 0) {
                        db.compactRange(null, null);
                    }
                }
                done.set(true);
                for (Future<Long> f : reads) {
                    assertThat(f.get()).as("reads done").isPositive();
                }
                assertThat(count(db.get(counter(0)))).isEqualTo(ROUNDS);
            } finally {
                done.set(true);
                db.close(); // the reader threads are still alive, their slots filled
            }
        } finally {
            readers.shutdownNow();
            readers.awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}

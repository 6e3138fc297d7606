package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.InternalKey;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Blocks (restart points) and tables (index + data blocks) iterated backward and with direction switches. */
class TableReverseIterationTest {
    @TempDir
    Path dir;

    private final FileSystem fs = FileSystem.disk();

    @Test
    void blockIteratesBackwardAcrossRestartPoints() {
        for (int interval : new int[] {1, 2, 3, 16}) {
            BlockBuilder b = new BlockBuilder(interval);
            List<byte[]> keys = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                byte[] k = ("k" + (1000 + i)).getBytes();
                keys.add(k);
                b.add(k, ("v" + i).getBytes());
            }
            Block block = new Block(b.finish(), null, 0);
            BlockIterator it = block.iterator(java.util.Arrays::compareUnsigned);
            List<byte[]> back = new ArrayList<>();
            for (it.seekToLast(); it.valid(); it.prev()) {
                back.add(it.key());
            }
            Collections.reverse(back);
            assertThat(back).as("interval " + interval).containsExactlyElementsOf(keys);
            it.seekForPrev("k1010x".getBytes());
            assertThat(it.key()).isEqualTo("k1010".getBytes());
            it.seekForPrev("k1010".getBytes());
            assertThat(it.key()).isEqualTo("k1010".getBytes());
            it.seekForPrev("a".getBytes());
            assertThat(it.valid()).isFalse();
            it.seekForPrev("z".getBytes());
            assertThat(it.key()).isEqualTo("k1049".getBytes());
            it.prev();
            it.next();
            assertThat(it.key()).isEqualTo("k1049".getBytes());
        }
        BlockIterator empty =
                new Block(new BlockBuilder(16).finish(), null, 0).iterator(java.util.Arrays::compareUnsigned);
        empty.seekToLast();
        assertThat(empty.valid()).isFalse();
    }

    @Test
    void tableWalksMatchTheModel() throws Exception {
        long seed = TestSeeds.seed("TableReverseIterationTest");
        Random rnd = new Random(seed);
        for (int round = 0; round < 4; round++) {
            TestTables.Model m = TestTables.model(1 + rnd.nextInt(800), rnd);
            Path p = dir.resolve("t" + round + ".sst");
            TestTables.write(
                    fs,
                    p,
                    m,
                    TableBuilderOptions.defaults()
                            .blockSize(64 + rnd.nextInt(512))
                            .restartInterval(1 + rnd.nextInt(16)));
            TreeMap<byte[], byte[]> model = new TreeMap<>(InternalKey.COMPARATOR);
            for (byte[][] e : m.entries) {
                model.put(e[0], e[1]);
            }
            int n = m.versions.size();
            try (TableReader t = TableReader.open(
                            fs, p, 1, rnd.nextBoolean() ? new BlockCache(1 << 20) : null, new ReadCounters());
                    InternalIterator it = t.iterator()) {
                List<byte[]> back = new ArrayList<>();
                for (it.seekToLast(); it.valid(); it.prev()) {
                    back.add(it.key());
                }
                Collections.reverse(back);
                assertThat(back).as("seed " + seed).containsExactlyElementsOf(model.keySet());
                IteratorWalk.walk(
                        it,
                        model,
                        rnd,
                        200,
                        30,
                        r -> InternalKey.forSeek(
                                r.nextInt(20) == 0 ? new byte[] {'a'} : TestTables.userKey(r.nextInt(2 * n + 2)),
                                r.nextInt(4000)),
                        "seed " + seed + " round " + round);
            }
        }
    }
}

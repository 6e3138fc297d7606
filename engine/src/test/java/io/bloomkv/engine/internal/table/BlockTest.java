package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.util.Coding;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BlockTest {
    private static final Comparator<byte[]> BYTEWISE = Arrays::compareUnsigned;
    private static final Path FILE = Path.of("test.sst");

    private static byte[] randomKey(Random rnd) {
        // shared prefixes are common so prefix compression is exercised
        String[] prefixes = {"", "a", "ab", "user:", "user:00", "\u00ff\u00fe"};
        String p = prefixes[rnd.nextInt(prefixes.length)];
        byte[] tail = new byte[rnd.nextInt(6)];
        rnd.nextBytes(tail);
        byte[] pb = p.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        byte[] k = Arrays.copyOf(pb, pb.length + tail.length);
        System.arraycopy(tail, 0, k, pb.length, tail.length);
        return k;
    }

    private static NavigableMap<byte[], byte[]> randomModel(Random rnd, int n) {
        NavigableMap<byte[], byte[]> model = new TreeMap<>(BYTEWISE);
        for (int i = 0; i < n; i++) {
            byte[] v = new byte[rnd.nextInt(20)];
            rnd.nextBytes(v);
            model.put(randomKey(rnd), v);
        }
        return model;
    }

    private static Block build(NavigableMap<byte[], byte[]> model, int restartInterval) {
        BlockBuilder b = new BlockBuilder(restartInterval);
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            b.add(e.getKey(), e.getValue());
        }
        int estimate = b.currentSizeEstimate();
        byte[] contents = b.finish();
        assertThat(contents.length).isEqualTo(estimate);
        return new Block(contents, FILE, 0);
    }

    /**
     * finish() and finishInPlace() give the same block whether or not writing the restart array grows the builder's
     * buffer past its first 4 KiB (finish once copied the buffer it had before that growth, losing the restarts).
     */
    @Test
    void finishIsWholeWhenTheRestartArrayGrowsTheBuffer() {
        for (int n = 300; n <= 700; n++) {
            BlockBuilder a = new BlockBuilder(1);
            BlockBuilder b = new BlockBuilder(1);
            for (int i = 0; i < n; i++) {
                byte[] k = new byte[] {(byte) (i >>> 8), (byte) i};
                a.add(k, new byte[0]);
                b.add(k, new byte[0]);
            }
            int estimate = a.currentSizeEstimate();
            byte[] copy = a.finish();
            int length = b.finishInPlace();
            assertThat(copy).as("%d entries", n).hasSize(estimate);
            assertThat(length).isEqualTo(estimate);
            assertThat(Arrays.copyOf(b.contents(), length)).isEqualTo(copy);
            BlockIterator it = new Block(copy, FILE, 0).iterator(BYTEWISE);
            int seen = 0;
            for (it.seekToFirst(); it.valid(); it.next()) {
                seen++;
            }
            assertThat(seen).as("%d entries", n).isEqualTo(n);
        }
    }

    /** Checks iteration and seeks of a block built from {@code model} against the TreeMap. */
    private static void checkAgainstModel(
            NavigableMap<byte[], byte[]> model, int restartInterval, Random rnd, String ctx) {
        Block block = build(model, restartInterval);
        BlockIterator it = block.iterator(BYTEWISE);
        it.seekToFirst();
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            assertThat(it.valid()).as(ctx).isTrue();
            assertThat(it.key()).as(ctx).isEqualTo(e.getKey());
            assertThat(it.value()).as(ctx).isEqualTo(e.getValue());
            it.next();
        }
        assertThat(it.valid()).as(ctx).isFalse();
        for (int i = 0; i < 200; i++) {
            byte[] target = rnd.nextInt(3) == 0 && !model.isEmpty()
                    ? model.keySet().stream()
                            .skip(rnd.nextInt(model.size()))
                            .findFirst()
                            .orElseThrow()
                    : randomKey(rnd);
            Map.Entry<byte[], byte[]> expected = model.ceilingEntry(target);
            it.seek(target);
            if (expected == null) {
                assertThat(it.valid()).as(ctx + " seek past end").isFalse();
            } else {
                assertThat(it.valid()).as(ctx).isTrue();
                assertThat(it.key())
                        .as(ctx + " seek " + Arrays.toString(target))
                        .isEqualTo(expected.getKey());
                assertThat(it.value()).as(ctx).isEqualTo(expected.getValue());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 16, 1000})
    void roundTripAndSeekMatchTreeMap(int restartInterval) {
        long seed = TestSeeds.seed("BlockTest", "block.seed");
        Random rnd = new Random(seed);
        for (int round = 0; round < 20; round++) {
            NavigableMap<byte[], byte[]> model = randomModel(rnd, rnd.nextInt(300));
            checkAgainstModel(model, restartInterval, rnd, "seed " + seed + " (-Dblock.seed) round " + round);
        }
    }

    @Property(tries = 60)
    void propertyRoundTrip(
            @ForAll long seed,
            @ForAll @IntRange(min = 0, max = 200) int n,
            @ForAll @IntRange(min = 1, max = 32) int restartInterval) {
        Random rnd = new Random(seed);
        checkAgainstModel(randomModel(rnd, n), restartInterval, rnd, "seed " + seed);
    }

    @Test
    void emptyBlock() {
        Block b = build(new TreeMap<>(BYTEWISE), 16);
        assertThat(b.size()).isEqualTo(8);
        BlockIterator it = b.iterator(BYTEWISE);
        it.seekToFirst();
        assertThat(it.valid()).isFalse();
        it.seek(new byte[] {1});
        assertThat(it.valid()).isFalse();
    }

    @Test
    void restartsEvery16KeysAndPrefixCompression() {
        BlockBuilder b = new BlockBuilder(16);
        for (int i = 0; i < 40; i++) {
            b.add(String.format("key%05d", i).getBytes(), new byte[0]);
        }
        Block block = new Block(b.finish(), FILE, 0);
        assertThat(block.restartCount()).isEqualTo(3);
        // 40 keys of 8 bytes would take 320 bytes uncompressed; shared prefixes take far less
        assertThat(block.size()).isLessThan(40 * (3 + 8));
    }

    @Test
    void malformedBlocksAreCorruption() {
        assertThatThrownBy(() -> new Block(new byte[3], FILE, 100))
                .isInstanceOfSatisfying(CorruptionException.class, e -> {
                    assertThat(e.file()).isEqualTo(FILE);
                    assertThat(e.offset()).isEqualTo(100);
                });
        byte[] huge = new byte[8];
        Coding.putFixed32(huge, 4, 1000);
        assertThatThrownBy(() -> new Block(huge, FILE, 0)).isInstanceOf(CorruptionException.class);

        NavigableMap<byte[], byte[]> model = randomModel(new Random(1), 50);
        BlockBuilder bb = new BlockBuilder(16);
        model.forEach(bb::add);
        byte[] contents = bb.finish();
        // shared length larger than the previous key: entry 1 starts right after entry 0
        byte[] bad = contents.clone();
        Coding.Reader r = new Coding.Reader(bad, 0, bad.length);
        r.varint31();
        int unshared = r.varint31();
        int vlen = r.varint31();
        int entry1 = r.pos + unshared + vlen;
        bad[entry1] = 0x7f;
        Block block = new Block(bad, FILE, 0);
        BlockIterator it = block.iterator(BYTEWISE);
        it.seekToFirst();
        assertThatThrownBy(it::next).isInstanceOf(CorruptionException.class).hasMessageContaining("test.sst");
    }

    @Test
    void everySingleByteFlipIsDetectedOrHarmlessInStructure() {
        // The block layer alone has no checksum (the trailer does); here: no flip may crash with
        // anything but CorruptionException, and iteration always terminates.
        NavigableMap<byte[], byte[]> model = randomModel(new Random(7), 40);
        BlockBuilder bb = new BlockBuilder(4);
        model.forEach(bb::add);
        byte[] contents = bb.finish();
        for (int pos = 0; pos < contents.length; pos++) {
            byte[] bad = contents.clone();
            bad[pos] ^= (byte) 0xa5;
            try {
                BlockIterator it = new Block(bad, FILE, 0).iterator(BYTEWISE);
                int n = 0;
                for (it.seekToFirst(); it.valid(); it.next()) {
                    n++;
                }
                assertThat(n).isLessThanOrEqualTo(contents.length);
                it.seek(new byte[] {'u'});
            } catch (CorruptionException expected) {
                assertThat(expected.file()).isEqualTo(FILE);
            }
        }
    }
}

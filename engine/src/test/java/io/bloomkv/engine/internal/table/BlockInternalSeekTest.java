package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The in-place search of blocks of internal keys ({@link BlockIterator#seek} with
 * {@link InternalKey#COMPARATOR}, {@link BlockIterator#seekInternal}) against a TreeMap ceiling, and
 * blocks that wrap only a prefix of their array (contents followed by the trailer, not copied); and
 * {@link IndexSearch} over blocks with one entry per restart point (the index's layout).
 */
class BlockInternalSeekTest {
    private static final Path FILE = Path.of("test.sst");
    private static final long SEED = Long.getLong("bloomkv.seed", System.nanoTime());

    private static byte[] userKey(Random rnd) {
        String[] prefixes = {"", "k", "key:", "key:0000000", "\u00ff"};
        byte[] p = prefixes[rnd.nextInt(prefixes.length)].getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        byte[] k = Arrays.copyOf(p, p.length + rnd.nextInt(12));
        for (int i = p.length; i < k.length; i++) {
            k[i] = (byte) rnd.nextInt(4); // small alphabet: many shared prefixes and equal user keys
        }
        return k;
    }

    /**
     * The handles {@link IndexSearch} keeps per entry: each is the entry's value decoded, packed as offset and size;
     * a handle too large to pack or a malformed value is {@link IndexSearch#NOT_PACKED} (the reader decodes those).
     */
    @Test
    void indexSearchKeepsEachEntrysHandle() {
        long maxSize = (1L << 24) - 1;
        long maxOffset = (1L << 39) - 1;
        BlockHandle[] handles = {
            new BlockHandle(0, 0),
            new BlockHandle(4096, 4000),
            new BlockHandle(123_456_789, maxSize),
            new BlockHandle(maxOffset, 17),
            new BlockHandle(1, maxSize + 1),
            new BlockHandle(maxOffset + 1, 1),
            null,
        };
        BlockBuilder b = new BlockBuilder(1);
        for (int i = 0; i < handles.length; i++) {
            byte[] value = handles[i] == null ? new byte[] {(byte) 0x80} : handles[i].encode(); // null: a cut varint
            b.add(InternalKey.encode(new byte[] {'k', (byte) i}, 1, ValueType.PUT), value);
        }
        byte[] contents = b.finish();
        Block block = new Block(contents, contents.length, FILE, 0);
        IndexSearch search = IndexSearch.of(block, Long.MAX_VALUE);
        assertThat(search).isNotNull();
        assertThat(search.entries()).isEqualTo(handles.length);
        for (int i = 0; i < handles.length; i++) {
            long packed = search.handle(i);
            boolean packs = i < 4;
            assertThat(packed == IndexSearch.NOT_PACKED)
                    .as("entry %d: %s", i, handles[i])
                    .isEqualTo(!packs);
            if (packs) {
                assertThat(new BlockHandle(IndexSearch.offsetOf(packed), IndexSearch.sizeOf(packed)))
                        .as("entry %d", i)
                        .isEqualTo(handles[i]);
            }
        }
        // A handle that reaches past the data area is left to the decode path, which reports the damage.
        IndexSearch bounded = IndexSearch.of(block, handles[1].end() - 1);
        assertThat(bounded.handle(0)).isNotEqualTo(IndexSearch.NOT_PACKED);
        assertThat(bounded.handle(1)).isEqualTo(IndexSearch.NOT_PACKED);
    }

    @Test
    void inPlaceSeekMatchesTheModel() {
        System.out.println("BlockInternalSeekTest seed " + SEED + " (replay with -Dbloomkv.seed=" + SEED + ")");
        Random rnd = new Random(SEED);
        for (int round = 0; round < 60; round++) {
            String ctx = "seed " + SEED + " round " + round;
            TreeMap<byte[], byte[]> model = new TreeMap<>(InternalKey.COMPARATOR);
            int n = rnd.nextInt(8) == 0 ? rnd.nextInt(4000) : rnd.nextInt(300); // many groups of IndexSearch.GROUP
            for (int i = 0; i < n; i++) {
                ValueType t = rnd.nextBoolean() ? ValueType.PUT : ValueType.DELETE;
                model.put(InternalKey.encode(userKey(rnd), rnd.nextInt(50), t), new byte[] {(byte) i, (byte) (i >> 8)});
            }
            int interval = rnd.nextInt(3) == 0 ? 1 : 1 + rnd.nextInt(20); // 1: the index blocks' layout
            BlockBuilder b = new BlockBuilder(interval);
            for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
                b.add(e.getKey(), e.getValue());
            }
            byte[] contents = b.finish();
            // The block wraps a prefix of a larger array, as blocks read from a file do (trailer after).
            byte[] withTrailer = Arrays.copyOf(contents, contents.length + TableFormat.BLOCK_TRAILER_SIZE);
            Arrays.fill(withTrailer, contents.length, withTrailer.length, (byte) 0x7f);
            Block block = new Block(withTrailer, contents.length, FILE, 0);
            assertThat(block.size()).as(ctx).isEqualTo(contents.length);
            IndexSearch search = IndexSearch.of(block, Long.MAX_VALUE);
            if (interval == 1 && !model.isEmpty()) {
                assertThat(search).as(ctx + ": one entry per restart point").isNotNull();
            } else if (model.size() > interval) {
                assertThat(search).as(ctx + ": entries between restart points").isNull();
            }
            for (int q = 0; q < 200; q++) {
                long seq = rnd.nextInt(60);
                byte[] target =
                        InternalKey.encode(userKey(rnd), Math.min(seq, InternalKey.MAX_SEQUENCE), ValueType.FOR_SEEK);
                if (rnd.nextInt(4) == 0 && !model.isEmpty()) {
                    target = model.keySet().toArray(new byte[0][])[rnd.nextInt(model.size())];
                }
                Map.Entry<byte[], byte[]> want = model.ceilingEntry(target);
                BlockIterator it = block.iterator(InternalKey.COMPARATOR);
                it.seek(target);
                BlockIterator it2 = block.iterator(InternalKey.COMPARATOR);
                int ul = target.length - InternalKey.TRAILER_SIZE;
                it2.seekInternal(Arrays.copyOf(target, ul), ul, InternalKey.trailer(target));
                // IndexSearch (prefix words, then whole keys among equal words) finds the same entry
                BlockIterator it3 = block.iterator(InternalKey.COMPARATOR);
                if (search != null) {
                    it3.seekToRestartPoint(search.find(target, ul, InternalKey.trailer(target)));
                } else {
                    it3.seekInternal(target, ul, InternalKey.trailer(target));
                }
                for (BlockIterator x : new BlockIterator[] {it, it2, it3}) {
                    if (want == null) {
                        assertThat(x.valid()).as(ctx).isFalse();
                    } else {
                        assertThat(x.valid()).as(ctx).isTrue();
                        assertThat(x.key()).as(ctx).isEqualTo(want.getKey());
                        assertThat(x.keyRef()).as(ctx).isEqualTo(want.getKey());
                        assertThat(x.value()).as(ctx).isEqualTo(want.getValue());
                        assertThat(x.currentTrailer()).as(ctx).isEqualTo(InternalKey.trailer(want.getKey()));
                        assertThat(Integer.signum(x.compareCurrentUserKey(InternalKey.userKey(target))))
                                .as(ctx)
                                .isEqualTo(Integer.signum(InternalKey.compareUserKeys(want.getKey(), target)));
                    }
                }
                // Iteration continues from a seek exactly as the model does.
                if (want != null) {
                    Map.Entry<byte[], byte[]> next = model.higherEntry(want.getKey());
                    it.next();
                    assertThat(it.valid()).as(ctx).isEqualTo(next != null);
                    if (next != null) {
                        assertThat(it.key()).as(ctx).isEqualTo(next.getKey());
                    }
                }
            }
        }
    }

    @Test
    void aRestartKeyShorterThanATrailerIsCorruption() {
        BlockBuilder b = new BlockBuilder(1);
        b.add(new byte[] {1, 2, 3}, new byte[] {9});
        Block block = new Block(b.finish(), FILE, 4096);
        BlockIterator it = block.iterator(InternalKey.COMPARATOR);
        assertThatThrownBy(() -> it.seek(InternalKey.encode(new byte[] {1}, 5, ValueType.PUT)))
                .isInstanceOf(CorruptionException.class)
                .hasMessageContaining("shorter than its trailer")
                .hasMessageContaining("test.sst");
    }

    @Test
    void aLengthOutsideTheArrayIsRejected() {
        assertThatThrownBy(() -> new Block(new byte[8], 9, FILE, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}

package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Entries copied into the memtable's chunks come back intact (get and iteration), whatever their size, and share chunks. */
class MemTableChunksTest {

    @Test
    void valuesOfEverySizeRoundTripThroughTheArena() {
        long seed = TestSeeds.seed("MemTableChunksTest");
        Random rnd = new Random(seed);
        MemTable m = new MemTable(1);
        int n = 3000;
        byte[][] values = new byte[n][];
        for (int i = 0; i < n; i++) {
            int size = switch (rnd.nextInt(10)) {
                case 0 -> 0;
                case 1 ->
                    rnd.nextInt(30) == 0
                            ? MemSkipList.MAX_CHUNK + rnd.nextInt(1000) // a chunk of its own
                            : (256 << 10) + rnd.nextInt(1000);
                case 2 -> MemSkipList.FIRST_CHUNK - 40 + rnd.nextInt(80); // around a whole first chunk
                default -> rnd.nextInt(5000);
            };
            values[i] = new byte[size];
            rnd.nextBytes(values[i]);
            byte[] given = values[i].clone();
            m.add(i + 1, ValueType.PUT, key(i), given);
            Arrays.fill(given, (byte) 0); // the memtable copied the value: changing the caller's array changes nothing
        }
        m.add(n + 1, ValueType.DELETE, key(0), null);
        for (int i = 0; i < n; i++) {
            assertThat(m.get(key(i), i + 1).value())
                    .as("seed %d value %d (%d bytes)", seed, i, values[i].length)
                    .isEqualTo(values[i]);
        }
        assertThat(m.get(key(0), n + 1).type()).isEqualTo(ValueType.DELETE);
        int seen = 0;
        try (InternalIterator it = m.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                int i = (int) InternalKey.sequence(it.key()) - 1;
                if (i < n) {
                    assertThat(it.value())
                            .as("seed %d iterated value %d", seed, i)
                            .isEqualTo(values[i]);
                    seen++;
                }
            }
        }
        assertThat(seen).isEqualTo(n);
    }

    @Test
    void smallEntriesShareChunksThatGrowToTheLimit() {
        MemSkipList list = new MemSkipList();
        long start = list.bytesTaken(); // the head
        byte[] v = new byte[1024];
        long total = 0;
        int closedChunk = 0;
        for (int i = 0; i < 20_000; i++) { // 20 MB of 1 KiB values
            v[0] = (byte) i;
            int chunksBefore = list.chunkCount();
            long took = list.insert(key(i), InternalKey.packTrailer(i + 1, ValueType.PUT), v, 0, v.length);
            assertThat(took % 8).isZero();
            assertThat(took)
                    .isGreaterThanOrEqualTo(
                            MemSkipList.MIN_KEY_AREA + 1024 + MemSkipList.HEADER + 8); // 4-byte keys take 16
            if (list.chunkCount() == chunksBefore) { // no chunk closed: the record's own bytes only
                assertThat(took)
                        .isLessThanOrEqualTo(
                                MemSkipList.MIN_KEY_AREA + 1024 + MemSkipList.HEADER + 8 * MemSkipList.MAX_HEIGHT + 7);
            } else {
                closedChunk++;
            }
            total += took;
        }
        // 64 KiB, 128 KiB, ... 1 MiB, then 1, 2 and 4 MiB chunks, each about a quarter of its arena, in each arena: a
        // few dozen arrays instead of 20,000 objects. The 1 KiB values are out of line: the value arena holds ~20 MB
        // (64 KiB .. 512 KiB, seven of 1 MiB, four of 2 MiB, then 4 MiB), the records' chunks only links, headers, keys
        assertThat(list.chunkCount()).isLessThan(28);
        assertThat(list.valueChunkCount()).isBetween(14, 18);
        assertThat(list.chunkCount() - list.valueChunkCount()).isLessThanOrEqualTo(8);
        for (int c = 0;
                c < list.chunkCount();
                c++) { // with its header each chunk is a power of two: no G1 region half used
            long object = list.chunkLength(c) + MemSkipList.ARRAY_HEADER;
            assertThat(Long.bitCount(object))
                    .as("chunk %d: %d bytes", c, list.chunkLength(c))
                    .isEqualTo(1);
            assertThat(object).isBetween(64L << 10, 4L << 20);
        }
        assertThat(closedChunk).isEqualTo(list.chunkCount() - 1);
        assertThat(list.bytesTaken() - start).isEqualTo(total);
        assertThat(list.chunkBytes())
                .isGreaterThanOrEqualTo(list.bytesTaken())
                .isLessThan(list.bytesTaken() + MemSkipList.MAX_CHUNK);
        int i = 0;
        for (long x = list.first(); x != 0; x = list.next(x), i++) {
            assertThat(list.value(x)[0]).isEqualTo((byte) i);
        }
        assertThat(i).isEqualTo(20_000);
    }

    @Test
    void theChunkBeingFilledStaysUnderAQuarterOfTheArena() {
        // The unused end of the chunk being filled is heap the memtable does not count (a new array's pages are all
        // touched when it is zeroed): past doubling it stays under a quarter of the arena, not up to all of it.
        MemSkipList list = new MemSkipList();
        byte[] v = new byte[40]; // inline: the records' arena only
        long maxUnusedShare = 0;
        for (int i = 0; i < 200_000; i++) { // ~22 MB
            list.insert(key(i), InternalKey.packTrailer(i + 1, ValueType.PUT), v, 0, v.length);
            long arena = list.chunkBytes();
            long unused = arena - list.bytesTaken();
            assertThat(unused)
                    .as("entry %d: %d of %d chunk bytes unused", i, unused, arena)
                    .isLessThanOrEqualTo(Math.max(MemSkipList.STEADY_CHUNK + MemSkipList.ARRAY_HEADER, arena / 4));
            if (arena > (8 << 20)) {
                maxUnusedShare = Math.max(maxUnusedShare, 100 * unused / arena);
            }
        }
        assertThat(list.valueChunkCount()).isZero();
        assertThat(list.chunkBytes()).isGreaterThan(16L << 20);
        assertThat(maxUnusedShare).isBetween(10L, 25L); // the bound is reached, not just held
        for (int c = 0; c < list.chunkCount(); c++) {
            long object = list.chunkLength(c) + MemSkipList.ARRAY_HEADER;
            assertThat(Long.bitCount(object)).as("chunk %d", c).isEqualTo(1);
        }
    }

    @Test
    void chunkSizesDoubleThenFollowTheArena() {
        int one = MemSkipList.STEADY_CHUNK;
        assertThat(MemSkipList.grown(MemSkipList.FIRST_CHUNK, 64 << 10)).isEqualTo((128 << 10) - 16);
        assertThat(MemSkipList.grown((512 << 10) - 16, 1 << 20)).isEqualTo(one);
        assertThat(MemSkipList.grown(one, 2 << 20)).isEqualTo(one);
        assertThat(MemSkipList.grown(one, (8 << 20) - 1)).isEqualTo(one);
        assertThat(MemSkipList.grown(one, 8 << 20)).isEqualTo((2 << 20) - 16);
        assertThat(MemSkipList.grown((2 << 20) - 16, 16 << 20)).isEqualTo(MemSkipList.MAX_CHUNK);
        assertThat(MemSkipList.grown(MemSkipList.MAX_CHUNK, 1L << 33)).isEqualTo(MemSkipList.MAX_CHUNK);
    }

    @Test
    void anEntryLargerThanAChunkGetsAChunkOfItsOwn() {
        MemSkipList list = new MemSkipList();
        byte[] big = new byte[MemSkipList.MAX_CHUNK * 2 + 3];
        new Random(5).nextBytes(big);
        list.insert(key(1), InternalKey.packTrailer(1, ValueType.PUT), new byte[] {7}, 0, 1);
        list.insert(key(2), InternalKey.packTrailer(2, ValueType.PUT), big, 0, big.length);
        list.insert(key(3), InternalKey.packTrailer(3, ValueType.PUT), new byte[] {9}, 0, 1);
        // the records' first chunk; the big value's own chunk in the value arena (the small values stay inline)
        assertThat(list.chunkCount()).isEqualTo(2);
        assertThat(list.valueChunkCount()).isEqualTo(1);
        long n = list.first();
        assertThat(list.value(n)).containsExactly(7);
        n = list.next(n);
        assertThat(list.value(n)).isEqualTo(big);
        assertThat(list.value(list.next(n))).containsExactly(9);
        // a version's value too large for a chunk: a value chunk of its own; the version record in the records' chunk
        byte[] big2 = new byte[MemSkipList.MAX_CHUNK + 5];
        new Random(6).nextBytes(big2);
        list.insert(key(2), InternalKey.packTrailer(4, ValueType.PUT), big2, 0, big2.length);
        assertThat(list.chunkCount()).isEqualTo(3);
        assertThat(list.valueChunkCount()).isEqualTo(2);
        long v = list.newest(n);
        assertThat(v).isNotEqualTo(n);
        assertThat(v >>> 32).isZero();
        assertThat(list.value(v)).isEqualTo(big2);
        assertThat(list.older(n, v)).isEqualTo(n);
        assertThat(list.value(list.older(n, v))).isEqualTo(big);
        assertThat(list.older(n, n)).isZero();
    }

    @Test
    void valuesPastTheInlineLimitGoOutOfLineAndKeyNodesStayPacked() {
        MemSkipList list = new MemSkipList();
        int max = MemSkipList.INLINE_VALUE_MAX;
        int[] sizes = {0, 1, max - 1, max, max + 1, 1024, 3 * max};
        Random rnd = new Random(7);
        byte[][] values = new byte[2 * sizes.length][];
        for (int i = 0; i < sizes.length; i++) {
            values[i] = new byte[sizes[i]];
            rnd.nextBytes(values[i]);
            long before = list.valueChunkCount();
            list.insert(key(i), InternalKey.packTrailer(i + 1, ValueType.PUT), values[i], 0, sizes[i]);
            // the first out-of-line value opens the value arena; values up to the limit never do
            assertThat(list.valueChunkCount())
                    .as("value of %d bytes", sizes[i])
                    .isEqualTo(sizes[i] > max || before > 0 ? 1 : 0);
        }
        // versions (no key, no links) of each key, with the sizes in reverse: both kinds of record, both kinds of value
        for (int i = 0; i < sizes.length; i++) {
            int size = sizes[sizes.length - 1 - i];
            values[sizes.length + i] = new byte[size];
            rnd.nextBytes(values[sizes.length + i]);
            list.insert(key(i), InternalKey.packTrailer(100 + i, ValueType.PUT), values[sizes.length + i], 0, size);
        }
        int i = 0;
        for (long x = list.first(); x != 0; x = list.next(x), i++) {
            long v = list.newest(x);
            assertThat(list.value(v)).as("newest of key %d", i).isEqualTo(values[sizes.length + i]);
            assertThat(list.value(list.older(x, v))).as("first of key %d", i).isEqualTo(values[i]);
            assertThat(list.older(x, v)).isEqualTo(x);
        }
        assertThat(i).isEqualTo(sizes.length);

        // 1 KiB values: the records' chunks hold links, lengths, trailer, key and the value's address only
        MemSkipList packed = new MemSkipList();
        long start = packed.bytesTaken();
        byte[] kib = new byte[1024];
        for (int k = 0; k < 1000; k++) {
            packed.insert(key(k), InternalKey.packTrailer(k + 1, ValueType.PUT), kib, 0, kib.length);
        }
        // 1,000 nodes of ~7.3 words fit the first 64 KiB chunk (inline values would take some 16 chunks' worth)
        assertThat(packed.chunkCount() - packed.valueChunkCount()).isEqualTo(1);
        assertThat(packed.bytesTaken() - start)
                .isGreaterThanOrEqualTo(1000L * (1024 + MemSkipList.HEADER + MemSkipList.MIN_KEY_AREA + 8));
        for (long x = packed.first(); x != 0; x = packed.next(x)) {
            assertThat(packed.value(x)).isEqualTo(kib);
        }
    }

    private static byte[] key(int i) {
        return new byte[] {(byte) (i >>> 24), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
    }
}

package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Values kept in the memtable's arena come back intact (get and iteration), whatever their size, and share chunks. */
class MemArenaTest {

    @Test
    void valuesOfEverySizeRoundTripThroughTheArena() {
        long seed = TestSeeds.seed("MemArenaTest");
        Random rnd = new Random(seed);
        MemTable m = new MemTable(1);
        int n = 3000;
        byte[][] values = new byte[n][];
        for (int i = 0; i < n; i++) {
            int size = switch (rnd.nextInt(10)) {
                case 0 -> 0;
                case 1 -> MemArena.OWN_ARRAY + rnd.nextInt(1000); // an array of its own
                case 2 -> MemArena.FIRST_CHUNK - 1 + rnd.nextInt(3); // around a whole first chunk
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
            assertThat(m.get(key(i), i + 1).value()).as("seed %d value %d (%d bytes)", seed, i, values[i].length)
                    .isEqualTo(values[i]);
        }
        assertThat(m.get(key(0), n + 1).type()).isEqualTo(ValueType.DELETE);
        int seen = 0;
        try (InternalIterator it = m.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                int i = (int) InternalKey.sequence(it.key()) - 1;
                if (i < n) {
                    assertThat(it.value()).as("seed %d iterated value %d", seed, i).isEqualTo(values[i]);
                    seen++;
                }
            }
        }
        assertThat(seen).isEqualTo(n);
    }

    @Test
    void smallValuesShareChunksThatGrowToTheLimit() {
        MemArena arena = new MemArena();
        Set<byte[]> arrays = Collections.newSetFromMap(new IdentityHashMap<>());
        byte[] v = new byte[1024];
        long total = 0;
        for (int i = 0; i < 20_000; i++) { // 20 MB of 1 KiB values
            v[0] = (byte) i;
            int at = arena.copy(v, 0, v.length);
            byte[] chunk = arena.lastArray();
            assertThat(chunk[at]).isEqualTo((byte) i);
            assertThat(chunk.length).isLessThanOrEqualTo(MemArena.MAX_CHUNK);
            arrays.add(chunk);
            total += v.length;
        }
        // 64 KiB, 128 KiB, ... 4 MiB, then 4 MiB chunks: a handful of arrays instead of 20,000
        assertThat(arrays.size()).isLessThan(15);
        assertThat(arrays.stream().mapToLong(a -> a.length).sum()).isGreaterThanOrEqualTo(total);
    }

    private static byte[] key(int i) {
        return new byte[] {(byte) (i >>> 24), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
    }
}

package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.ValueType;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MemKeyTest {
    @Test
    void ordersExactlyLikeEncodedInternalKeys() {
        long seed = TestSeeds.seed("MemKeyTest");
        Random rnd = new Random(seed);
        for (int i = 0; i < 200_000; i++) {
            byte[] a = randomKey(rnd);
            byte[] b = rnd.nextInt(4) == 0 ? a.clone() : randomKey(rnd);
            long sa = rnd.nextInt(4);
            long sb = rnd.nextInt(4);
            ValueType ta = rnd.nextBoolean() ? ValueType.PUT : ValueType.DELETE;
            ValueType tb = rnd.nextBoolean() ? ValueType.PUT : ValueType.DELETE;
            int expected = Integer.signum(InternalKey.compare(InternalKey.encode(a, sa, ta), InternalKey.encode(b, sb, tb)));
            int actual = Integer.signum(MemKey.compare(new MemKey(a, InternalKey.packTrailer(sa, ta)), new MemKey(b, InternalKey.packTrailer(sb, tb))));
            assertThat(actual).as("seed " + seed + " case " + i).isEqualTo(expected);
        }
        byte[] ik = InternalKey.encode(new byte[] {1, 2, 3}, 77, ValueType.PUT);
        assertThat(MemKey.of(ik).encode()).isEqualTo(ik);
    }

    /** Short and long keys, zero bytes and high bytes around the 8- and 16-byte word boundaries. */
    private static byte[] randomKey(Random rnd) {
        byte[] k = new byte[rnd.nextInt(rnd.nextBoolean() ? 20 : 40)];
        for (int i = 0; i < k.length; i++) {
            int r = rnd.nextInt(4);
            k[i] = (byte) (r == 0 ? 0 : r == 1 ? 0xFF : r == 2 ? 0x80 : 0x7F);
        }
        return k;
    }
}

package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import net.openhft.chronicle.core.UnsafeMemory;
import org.junit.jupiter.api.Test;

/**
 * {@link InPlaceBlock} over a block's bytes in native memory answers exactly as {@link BlockIterator} over the same
 * bytes in an array (seeks, steps, keys, trailers, values), on random blocks of every restart interval; and over
 * damaged bytes it throws {@link CorruptionException} naming the file and block, and never reads outside the block.
 */
class InPlaceBlockTest {
    private static final Path FILE = Path.of("000042.sst");

    private static byte[] userKey(Random rnd) {
        String[] prefixes = {"", "k", "key:", "key:0000000", "\u00ff"};
        byte[] p = prefixes[rnd.nextInt(prefixes.length)].getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        byte[] k = Arrays.copyOf(p, p.length + rnd.nextInt(12));
        for (int i = p.length; i < k.length; i++) {
            k[i] = (byte) rnd.nextInt(4); // small alphabet: many shared prefixes and equal user keys
        }
        return k;
    }

    /** {@code contents} copied into native memory with {@code pad} guard bytes on each side; returns its address. */
    private static long nativeCopy(byte[] contents, int pad) {
        long a = UnsafeMemory.UNSAFE.allocateMemory(contents.length + 2L * pad);
        UnsafeMemory.UNSAFE.setMemory(a, contents.length + 2L * pad, (byte) 0x5a);
        for (int i = 0; i < contents.length; i++) {
            UnsafeMemory.UNSAFE.putByte(a + pad + i, contents[i]);
        }
        return a;
    }

    @Test
    void answersAsTheIteratorOverTheSameBytes() {
        long seed = TestSeeds.seed("InPlaceBlockTest", "inplace.seed");
        Random rnd = new Random(seed);
        for (int round = 0; round < 80; round++) {
            String ctx = "seed " + seed + " round " + round;
            TreeMap<byte[], byte[]> model = new TreeMap<>(InternalKey.COMPARATOR);
            int n = rnd.nextInt(200);
            for (int i = 0; i < n; i++) {
                ValueType t = rnd.nextBoolean() ? ValueType.PUT : ValueType.DELETE;
                byte[] v = new byte[rnd.nextInt(rnd.nextInt(8) == 0 ? 2000 : 40)];
                rnd.nextBytes(v);
                model.put(InternalKey.encode(userKey(rnd), rnd.nextInt(50), t), v);
            }
            BlockBuilder b = new BlockBuilder(1 + rnd.nextInt(20));
            for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
                b.add(e.getKey(), e.getValue());
            }
            byte[] contents = b.finish();
            Block block = new Block(contents, FILE, 8192);
            long mem = nativeCopy(contents, 64);
            try {
                InPlaceBlock in = new InPlaceBlock();
                for (int q = 0; q < 100; q++) {
                    byte[] uk = rnd.nextInt(3) == 0 && !model.isEmpty()
                            ? InternalKey.userKey(model.keySet().toArray(new byte[0][])[rnd.nextInt(model.size())])
                            : userKey(rnd);
                    long trailer = InternalKey.packTrailer(rnd.nextInt(60), ValueType.FOR_SEEK);
                    BlockIterator it = block.iterator(InternalKey.COMPARATOR);
                    in.reset(mem + 64, contents.length, FILE, 8192);
                    if (q % 10 == 0) {
                        it.seekToFirst();
                        in.seekToFirst();
                    } else {
                        it.seekInternal(uk, uk.length, trailer);
                        in.seekInternal(uk, uk.length, trailer);
                    }
                    for (int steps = 0; steps < 5 + rnd.nextInt(20); steps++) {
                        assertThat(in.valid()).as(ctx).isEqualTo(it.valid());
                        if (!it.valid()) {
                            break;
                        }
                        assertThat(in.keyLength()).as(ctx).isEqualTo(it.keyLength());
                        assertThat(in.currentTrailer()).as(ctx).isEqualTo(it.currentTrailer());
                        assertThat(Integer.signum(in.compareCurrentUserKey(uk)))
                                .as(ctx)
                                .isEqualTo(Integer.signum(it.compareCurrentUserKey(uk)));
                        assertThat(in.value()).as(ctx).isEqualTo(it.value());
                        it.next();
                        in.next();
                    }
                }
            } finally {
                UnsafeMemory.UNSAFE.freeMemory(mem);
            }
        }
    }

    /**
     * Random byte flips anywhere in a block (entry headers, keys, the restart array) under an in-place search: every
     * answer is a value or a {@link CorruptionException} naming the file and the block, and every entry it stands on
     * (key and value) lies inside the block's entries.
     */
    @Test
    void damagedBytesAreCorruptionNeverAReadOutsideTheBlock() {
        long seed = TestSeeds.seed("InPlaceBlockTest", "inplace.seed");
        Random rnd = new Random(seed ^ 0x5EED);
        for (int round = 0; round < 300; round++) {
            String ctx = "seed " + seed + " round " + round;
            BlockBuilder b = new BlockBuilder(1 + rnd.nextInt(16));
            int n = 1 + rnd.nextInt(40);
            for (int i = 0; i < n; i++) {
                byte[] v = new byte[rnd.nextInt(100)];
                rnd.nextBytes(v);
                b.add(InternalKey.encode(String.format("key%05d", i).getBytes(), 7, ValueType.PUT), v);
            }
            byte[] contents = b.finish();
            for (int f = 0; f < 1 + rnd.nextInt(4); f++) {
                contents[rnd.nextInt(contents.length)] = (byte) rnd.nextInt(256);
            }
            long mem = nativeCopy(contents, 64);
            try {
                InPlaceBlock in = new InPlaceBlock();
                for (int q = 0; q < 20; q++) {
                    byte[] uk = String.format("key%05d", rnd.nextInt(n + 2)).getBytes();
                    try {
                        in.reset(mem + 64, contents.length, FILE, 8192);
                        in.seekInternal(uk, uk.length, InternalKey.packTrailer(9, ValueType.FOR_SEEK));
                        for (int s = 0; s < 50 && in.valid(); s++) {
                            in.currentTrailer();
                            in.compareCurrentUserKey(uk);
                            assertThat(in.value()).as(ctx).hasSize(in.valueLength());
                            assertThat((long) in.valueOffset() + in.valueLength())
                                    .as(ctx)
                                    .isLessThanOrEqualTo(contents.length - 4);
                            in.next();
                        }
                    } catch (CorruptionException e) {
                        assertThat(e).as(ctx).hasMessageContaining("000042.sst");
                        assertThat(e.offset()).as(ctx).isEqualTo(8192);
                    }
                }
            } finally {
                UnsafeMemory.UNSAFE.freeMemory(mem);
            }
        }
    }

    @Test
    void aRestartArrayThatDoesNotFitIsCorruption() {
        byte[] contents = new byte[16];
        contents[12] = 100; // restart count 100 in a 16-byte block
        long mem = nativeCopy(contents, 0);
        try {
            assertThatThrownBy(() -> new InPlaceBlock().reset(mem, 16, FILE, 4096))
                    .isInstanceOf(CorruptionException.class)
                    .hasMessageContaining("restart count");
        } finally {
            UnsafeMemory.UNSAFE.freeMemory(mem);
        }
    }
}

package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemTableTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void getSeesTheNewestEntryAtOrBelowTheSnapshot() {
        MemTable m = new MemTable(1);
        m.add(1, ValueType.PUT, b("k"), b("v1"));
        m.add(2, ValueType.PUT, b("k"), b("v2"));
        m.add(3, ValueType.DELETE, b("k"), null);
        m.add(4, ValueType.PUT, b("k2"), b("x"));
        assertThat(m.get(b("k"), 0)).isNull();
        assertThat(m.get(b("k"), 1).value()).isEqualTo(b("v1"));
        assertThat(m.get(b("k"), 2).value()).isEqualTo(b("v2"));
        TableReader.Entry tomb = m.get(b("k"), 3);
        assertThat(tomb.type()).isEqualTo(ValueType.DELETE);
        assertThat(tomb.sequence()).isEqualTo(3);
        assertThat(m.get(b("j"), 10)).isNull();
        assertThat(m.get(b("k1"), 10)).isNull();
        assertThat(m.entryCount()).isEqualTo(4);
        assertThat(m.approximateMemoryUsage()).isGreaterThan(4 * MemTable.ENTRY_OVERHEAD);
        // Returned values are copies.
        m.get(b("k"), 2).value()[0] = 'X';
        assertThat(m.get(b("k"), 2).value()).isEqualTo(b("v2"));
    }

    /**
     * {@code lendKey} and {@code lendValue} (the flush's path) give the bytes of {@code key} and {@code value} for every
     * entry, in one array each while lengths repeat: values of every length from empty to past the bulk-copy threshold
     * (with and without a partial last word), runs of one length, keys of a few lengths, several versions per key; the
     * caller scribbles over each lent array before the next step.
     */
    @Test
    void lentKeysAndValuesAreTheCopiesBytes() {
        long seed = io.bloomkv.engine.TestSeeds.seed("MemTableTest.lent");
        java.util.Random rnd = new java.util.Random(seed);
        MemTable m = new MemTable(1);
        long seq = 1;
        for (int i = 0; i < 3000; i++) {
            byte[] k = b(rnd.nextInt(4) == 0 ? "key" + rnd.nextInt(500) : String.format("k%05d", rnd.nextInt(2000)));
            int len = rnd.nextInt(3) == 0 ? 48 : rnd.nextInt(8 * MemSkipList.SHIFT_WORDS + 40);
            byte[] v = new byte[len];
            rnd.nextBytes(v);
            m.add(seq++, rnd.nextInt(10) == 0 ? ValueType.DELETE : ValueType.PUT, k, v);
        }
        try (InternalIterator copies = m.iterator();
                InternalIterator lent = m.iterator()) {
            copies.seekToFirst();
            lent.seekToFirst();
            int n = 0;
            while (copies.valid()) {
                assertThat(lent.valid()).isTrue();
                byte[] lk = lent.lendKey();
                byte[] lv = lent.lendValue();
                assertThat(lk).as("seed %d entry %d", seed, n).isEqualTo(copies.key());
                assertThat(lv).as("seed %d entry %d", seed, n).isEqualTo(copies.value());
                java.util.Arrays.fill(lk, (byte) 0x77);
                java.util.Arrays.fill(lv, (byte) 0x77);
                copies.next();
                lent.next();
                n++;
            }
            assertThat(lent.valid()).isFalse();
            assertThat(n).isEqualTo(3000);
        }
    }

    /**
     * A seek sizes the lent key and value arrays for the entry it lands on (so a flush's first entry takes the branch
     * every later one takes); the bytes lent after every seek, and after the steps that follow it, are still those of
     * {@code key} and {@code value}: seeks to random keys and to the first entry, over keys of several lengths and
     * values on both sides of the bulk-copy threshold, the caller scribbling over each lent array.
     */
    @Test
    void lentArraysAfterASeekHoldTheEntrysBytes() {
        long seed = io.bloomkv.engine.TestSeeds.seed("MemTableTest.seekLent");
        java.util.Random rnd = new java.util.Random(seed);
        MemTable m = new MemTable(1);
        List<byte[]> keys = new ArrayList<>();
        long seq = 1;
        for (int i = 0; i < 2000; i++) {
            byte[] k = b(rnd.nextBoolean() ? "k" + rnd.nextInt(700) : String.format("key%06d", rnd.nextInt(700)));
            keys.add(k);
            byte[] v = new byte[rnd.nextBoolean() ? 1000 : rnd.nextInt(8 * MemSkipList.SHIFT_WORDS + 40)];
            rnd.nextBytes(v);
            m.add(seq++, rnd.nextInt(10) == 0 ? ValueType.DELETE : ValueType.PUT, k, v);
        }
        try (InternalIterator copies = m.iterator();
                InternalIterator lent = m.iterator()) {
            for (int round = 0; round < 500; round++) {
                if (rnd.nextInt(10) == 0) {
                    copies.seekToFirst();
                    lent.seekToFirst();
                } else {
                    byte[] target = InternalKey.forSeek(keys.get(rnd.nextInt(keys.size())), 1 + rnd.nextInt((int) seq));
                    copies.seek(target);
                    lent.seek(target);
                }
                for (int step = 0; step < 4 && copies.valid(); step++) {
                    assertThat(lent.valid()).isTrue();
                    byte[] lk = lent.lendKey();
                    byte[] lv = lent.lendValue();
                    assertThat(lk)
                            .as("seed %d round %d step %d", seed, round, step)
                            .isEqualTo(copies.key());
                    assertThat(lv)
                            .as("seed %d round %d step %d", seed, round, step)
                            .isEqualTo(copies.value());
                    java.util.Arrays.fill(lk, (byte) 0x55);
                    java.util.Arrays.fill(lv, (byte) 0x55);
                    copies.next();
                    lent.next();
                }
                assertThat(lent.valid()).isEqualTo(copies.valid());
            }
        }
    }

    @Test
    void iteratorIsInInternalKeyOrder() {
        MemTable m = new MemTable(1);
        m.add(5, ValueType.PUT, b("b"), b("b5"));
        m.add(6, ValueType.PUT, b("a"), b("a6"));
        m.add(7, ValueType.PUT, b("b"), b("b7"));
        List<String> seen = new ArrayList<>();
        try (InternalIterator it = m.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                seen.add(new String(InternalKey.userKey(it.key()), StandardCharsets.UTF_8) + "@"
                        + InternalKey.sequence(it.key()));
            }
            it.seek(InternalKey.forSeek(b("b"), 6));
            assertThat(InternalKey.sequence(it.key())).isEqualTo(5);
        }
        assertThat(seen).containsExactly("a@6", "b@7", "b@5");
    }
}

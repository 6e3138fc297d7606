package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Iterators over key nodes and their version chains visit entries in {@link InternalKey#COMPARATOR} order whatever
 * the mix of new keys and updates: a full walk either way, every seek and seekForPrev, and every step after either,
 * against a sorted set of the encoded internal keys. jqwik shrinks a failure to its smallest case and prints it.
 */
class MemTableIteratorPropertyTest {

    @Property(tries = 200)
    void iteratorsFollowInternalKeyOrder(
            @ForAll long seed,
            @ForAll @IntRange(min = 0, max = 300) int n,
            @ForAll @IntRange(min = 1, max = 40) int distinctKeys,
            @ForAll boolean indexed) {
        Random rnd = new Random(seed);
        MemTable m = new MemTable(1, 0, 0, indexed);
        TreeSet<byte[]> model = new TreeSet<>(InternalKey.COMPARATOR);
        byte[][] keys = new byte[distinctKeys][];
        for (int i = 0; i < distinctKeys; i++) {
            keys[i] = new byte[rnd.nextInt(20)];
            for (int j = 0; j < keys[i].length; j++) {
                keys[i][j] = (byte) (rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(3) == 0 ? 0xFF : 'a' + rnd.nextInt(2));
            }
        }
        for (long seq = 1; seq <= n; seq++) {
            byte[] k = keys[rnd.nextInt(distinctKeys)];
            ValueType type = ValueType.fromCode(rnd.nextInt(3) == 0 ? 0 : 1); // DELETE or PUT
            m.add(seq, type, k, new byte[] {(byte) seq});
            model.add(InternalKey.encode(k, seq, type));
        }
        try (InternalIterator it = m.iterator()) {
            List<byte[]> forward = new ArrayList<>();
            for (it.seekToFirst(); it.valid(); it.next()) {
                forward.add(it.key());
            }
            assertThat(forward).containsExactlyElementsOf(model);
            List<byte[]> backward = new ArrayList<>();
            for (it.seekToLast(); it.valid(); it.prev()) {
                backward.add(it.key());
            }
            assertThat(backward).containsExactlyElementsOf(model.descendingSet());
            for (int q = 0; q < 30; q++) {
                byte[] target = InternalKey.encode(
                        rnd.nextInt(4) == 0 ? new byte[] {(byte) rnd.nextInt(256)} : keys[rnd.nextInt(distinctKeys)],
                        rnd.nextInt(n + 2),
                        ValueType.fromCode(rnd.nextInt(3)));
                boolean forPrev = rnd.nextBoolean();
                byte[] want = forPrev ? model.floor(target) : model.ceiling(target);
                if (forPrev) {
                    it.seekForPrev(target);
                } else {
                    it.seek(target);
                }
                for (int step = 0; step < 10; step++) {
                    if (want == null) {
                        assertThat(it.valid()).isFalse();
                        break;
                    }
                    assertThat(it.valid()).isTrue();
                    assertThat(it.key()).isEqualTo(want);
                    if (InternalKey.type(want) == ValueType.PUT) { // a delete's value is empty
                        assertThat(it.value()).containsExactly((byte) InternalKey.sequence(want));
                    } else {
                        assertThat(it.value()).isEmpty();
                    }
                    if (rnd.nextBoolean()) {
                        it.next();
                        want = model.higher(want);
                    } else {
                        it.prev();
                        want = model.lower(want);
                    }
                }
            }
        }
    }
}

package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.function.Function;

/**
 * Random walks of an {@link InternalIterator} against a sorted map holding exactly its entries:
 * seeks of the four kinds, then next and prev in random order (direction switches included); after
 * every move the iterator's position must be the map's.
 */
public final class IteratorWalk {
    private IteratorWalk() {}

    /** {@code walks} walks of up to {@code steps} moves; {@code target} draws seek targets. */
    public static void walk(
            InternalIterator it,
            NavigableMap<byte[], byte[]> model,
            Random rnd,
            int walks,
            int steps,
            Function<Random, byte[]> target,
            String ctx) {
        for (int w = 0; w < walks; w++) {
            Map.Entry<byte[], byte[]> expected;
            String where = ctx + " walk " + w;
            switch (rnd.nextInt(4)) {
                case 0 -> {
                    it.seekToFirst();
                    expected = model.firstEntry();
                    where += " seekToFirst";
                }
                case 1 -> {
                    it.seekToLast();
                    expected = model.lastEntry();
                    where += " seekToLast";
                }
                case 2 -> {
                    byte[] t = target.apply(rnd);
                    it.seek(t);
                    expected = model.ceilingEntry(t);
                    where += " seek";
                }
                default -> {
                    byte[] t = target.apply(rnd);
                    it.seekForPrev(t);
                    expected = model.floorEntry(t);
                    where += " seekForPrev";
                }
            }
            check(it, expected, where);
            for (int s = 0; s < steps && expected != null; s++) {
                if (rnd.nextBoolean()) {
                    it.next();
                    expected = model.higherEntry(expected.getKey());
                    where += " n";
                } else {
                    it.prev();
                    expected = model.lowerEntry(expected.getKey());
                    where += " p";
                }
                check(it, expected, where);
            }
        }
    }

    private static void check(InternalIterator it, Map.Entry<byte[], byte[]> expected, String where) {
        if (expected == null) {
            assertThat(it.valid()).as(where + ": past the end").isFalse();
        } else {
            assertThat(it.valid()).as(where + ": valid").isTrue();
            assertThat(it.key()).as(where + ": key").isEqualTo(expected.getKey());
            assertThat(it.value()).as(where + ": value").isEqualTo(expected.getValue());
        }
    }
}

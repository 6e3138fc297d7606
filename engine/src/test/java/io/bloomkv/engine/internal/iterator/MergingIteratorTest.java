package io.bloomkv.engine.internal.iterator;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.IteratorWalk;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class MergingIteratorTest {
    @Test
    void mergesLikeOneSortedMap() {
        long seed = TestSeeds.seed("MergingIteratorTest");
        Random rnd = new Random(seed);
        TreeMap<byte[], byte[]> model = new TreeMap<>(InternalKey.COMPARATOR);
        List<MemTable> parts = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            parts.add(new MemTable(i));
        }
        for (long seq = 1; seq <= 2000; seq++) {
            byte[] k = new byte[1 + rnd.nextInt(3)];
            rnd.nextBytes(k);
            byte[] v = new byte[] {(byte) seq};
            parts.get(rnd.nextInt(parts.size())).add(seq, ValueType.PUT, k, v);
            model.put(InternalKey.encode(k, seq, ValueType.PUT), v);
        }
        List<InternalIterator> its = new ArrayList<>();
        parts.forEach(p -> its.add(p.iterator()));
        try (MergingIterator m = new MergingIterator(its)) {
            List<byte[]> keys = new ArrayList<>();
            for (m.seekToFirst(); m.valid(); m.next()) {
                keys.add(m.key());
            }
            assertThat(keys).as("seed " + seed).containsExactlyElementsOf(model.keySet());
            for (int i = 0; i < 100; i++) {
                byte[] target = new byte[1 + rnd.nextInt(3)];
                rnd.nextBytes(target);
                byte[] seekKey = InternalKey.forSeek(target, rnd.nextInt(2100));
                m.seek(seekKey);
                byte[] expected = model.ceilingKey(seekKey);
                if (expected == null) {
                    assertThat(m.valid()).as("seed " + seed).isFalse();
                } else {
                    assertThat(m.key()).as("seed " + seed).isEqualTo(expected);
                    assertThat(m.value()).isEqualTo(model.get(expected));
                }
            }
        }
    }

    @Test
    void walksBothWaysWithDirectionSwitches() {
        long seed = TestSeeds.seed("MergingIteratorTest.walks");
        Random rnd = new Random(seed);
        TreeMap<byte[], byte[]> model = new TreeMap<>(InternalKey.COMPARATOR);
        List<MemTable> parts = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            parts.add(new MemTable(i));
        }
        for (long seq = 1; seq <= 3000; seq++) {
            byte[] k = new byte[1 + rnd.nextInt(2)];
            rnd.nextBytes(k);
            byte[] v = new byte[] {(byte) seq, (byte) (seq >> 8)};
            ValueType type = rnd.nextInt(5) == 0 ? ValueType.DELETE : ValueType.PUT;
            parts.get(rnd.nextInt(parts.size())).add(seq, type, k, v);
            model.put(InternalKey.encode(k, seq, type), type == ValueType.DELETE ? new byte[0] : v);
        }
        List<InternalIterator> its = new ArrayList<>();
        parts.forEach(p -> its.add(p.iterator()));
        its.add(new MemTable(9).iterator()); // an empty child
        try (MergingIterator m = new MergingIterator(its)) {
            List<byte[]> back = new ArrayList<>();
            for (m.seekToLast(); m.valid(); m.prev()) {
                back.add(m.key());
            }
            java.util.Collections.reverse(back);
            assertThat(back).as("seed " + seed).containsExactlyElementsOf(model.keySet());
            IteratorWalk.walk(
                    m,
                    model,
                    rnd,
                    300,
                    40,
                    r -> {
                        byte[] t = new byte[1 + r.nextInt(2)];
                        r.nextBytes(t);
                        return InternalKey.forSeek(t, r.nextInt(3100));
                    },
                    "seed " + seed);
        }
    }

    @Test
    void lendingKeysMergesLikeTheCopyingMerge() {
        long seed = TestSeeds.seed("MergingIteratorTest.lending");
        Random rnd = new Random(seed);
        TreeMap<byte[], byte[]> model = new TreeMap<>(InternalKey.COMPARATOR);
        List<MemTable> parts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            parts.add(new MemTable(i));
        }
        for (long seq = 1; seq <= 3000; seq++) {
            byte[] k = new byte[2]; // one length: every memtable child refills one lent array
            rnd.nextBytes(k);
            byte[] v = new byte[] {(byte) seq, (byte) (seq >> 8)};
            ValueType type = rnd.nextInt(3) == 0 ? ValueType.DELETE : ValueType.PUT;
            parts.get(rnd.nextInt(parts.size())).add(seq, type, k, v);
            model.put(InternalKey.encode(k, seq, type), type == ValueType.DELETE ? new byte[0] : v);
        }
        // The memtable lends one array while the key length holds: this test exercises lent keys.
        InternalIterator single = parts.get(0).iterator();
        single.seekToFirst();
        byte[] first = single.lendKey();
        single.next();
        assertThat(single.lendKey())
                .as("the memtable refills the array it lent")
                .isSameAs(first);
        List<InternalIterator> its = new ArrayList<>();
        parts.forEach(p -> its.add(p.iterator()));
        try (MergingIterator m = MergingIterator.lendingKeys(its)) {
            List<byte[]> keys = new ArrayList<>();
            for (m.seekToFirst(); m.valid(); m.next()) {
                keys.add(m.keyNoCopy().clone()); // valid until the next move: copied
            }
            assertThat(keys).as("seed " + seed).containsExactlyElementsOf(model.keySet());
            IteratorWalk.walk(
                    m,
                    model,
                    rnd,
                    300,
                    40,
                    r -> {
                        byte[] t = new byte[2];
                        r.nextBytes(t);
                        return InternalKey.forSeek(t, r.nextInt(3100));
                    },
                    "seed " + seed);
        }
    }

    @Test
    void equalInternalKeysComeFromTheChildListedFirstGoingForward() {
        // A consistent database never holds one internal key twice; the merge still orders such ties by child.
        List<MemTable> parts = List.of(new MemTable(0), new MemTable(1), new MemTable(2));
        for (int i = 0; i < parts.size(); i++) {
            parts.get(i).add(7, ValueType.PUT, new byte[] {'k'}, new byte[] {(byte) i});
            parts.get(i).add(8 + i, ValueType.PUT, new byte[] {(byte) ('a' + i)}, new byte[] {(byte) i});
        }
        List<InternalIterator> its = new ArrayList<>();
        parts.forEach(p -> its.add(p.iterator()));
        try (MergingIterator m = new MergingIterator(its)) {
            List<Integer> forward = new ArrayList<>();
            for (m.seekToFirst(); m.valid(); m.next()) {
                if (InternalKey.userKey(m.key())[0] == 'k') {
                    forward.add((int) m.value()[0]);
                }
            }
            assertThat(forward).containsExactly(0, 1, 2);
            List<Integer> backward = new ArrayList<>();
            for (m.seekToLast(); m.valid(); m.prev()) {
                if (InternalKey.userKey(m.key())[0] == 'k') {
                    backward.add((int) m.value()[0]);
                }
            }
            assertThat(backward).containsExactly(2, 1, 0);
        }
    }

    @Test
    void longRunsFromOneChildInterleaveWithShortOnes() {
        // One large child and several sparse ones, as a compaction of level 0 into a large base level: most steps
        // keep the current child, and every key must still come out in order, going forward and backward.
        long seed = TestSeeds.seed("MergingIteratorTest.runs");
        Random rnd = new Random(seed);
        TreeMap<byte[], byte[]> model = new TreeMap<>(InternalKey.COMPARATOR);
        List<MemTable> parts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            parts.add(new MemTable(i));
        }
        for (long seq = 1; seq <= 4000; seq++) {
            byte[] k = new byte[2];
            rnd.nextBytes(k);
            byte[] v = new byte[] {(byte) seq};
            int child = rnd.nextInt(20) < 17 ? 0 : 1 + rnd.nextInt(parts.size() - 1);
            parts.get(child).add(seq, ValueType.PUT, k, v);
            model.put(InternalKey.encode(k, seq, ValueType.PUT), v);
        }
        List<InternalIterator> its = new ArrayList<>();
        parts.forEach(p -> its.add(p.iterator()));
        try (MergingIterator m = new MergingIterator(its)) {
            List<byte[]> keys = new ArrayList<>();
            for (m.seekToFirst(); m.valid(); m.next()) {
                keys.add(m.keyNoCopy());
            }
            assertThat(keys).as("seed " + seed).containsExactlyElementsOf(model.keySet());
            List<byte[]> back = new ArrayList<>();
            for (m.seekToLast(); m.valid(); m.prev()) {
                back.add(m.key());
            }
            java.util.Collections.reverse(back);
            assertThat(back).as("seed " + seed).containsExactlyElementsOf(model.keySet());
        }
    }
}

package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AddLifecycleHook;

/**
 * A filter never forgets a key it was given. jqwik prints the seed of every run; replay a failure with
 * {@code @Property(seed = "...")}.
 */
@AddLifecycleHook(OffHeapLeakCheck.class)
class NoFalseNegativesTest {

    @Provide
    Arbitrary<List<byte[]>> keySets() {
        return Arbitraries.bytes()
                .array(byte[].class)
                .ofMinSize(0)
                .ofMaxSize(24)
                .list()
                .ofMaxSize(400);
    }

    @Property(tries = 150)
    void everyAddedKeyIsFound(
            @ForAll FilterKind kind,
            @ForAll("keySets") List<byte[]> keys,
            @ForAll @DoubleRange(min = 0.5, max = 24) double bitsPerKey) {
        try (Filter f = kind.isStatic()
                ? Filters.build(kind, keys.stream().mapToLong(Hashing::hash64).toArray(), bitsPerKey)
                : Filters.create(kind, keys.size(), bitsPerKey)) {
            if (!kind.isStatic()) {
                keys.forEach(f::add);
            }
            for (byte[] key : keys) {
                assertThat(f.mightContain(key))
                        .as("%s lost key %s", kind, Arrays.toString(key))
                        .isTrue();
            }
            assertThat(f.keyCount()).isEqualTo(keys.size());
        }
    }

    @Property(tries = 100)
    void everyAddedHashIsFoundAfterARoundTrip(
            @ForAll FilterKind kind,
            @ForAll @Size(max = 300) List<Long> hashes,
            @ForAll @DoubleRange(min = 1, max = 20) double bitsPerKey) {
        try (Filter f = kind.isStatic()
                ? Filters.build(kind, hashes.stream().mapToLong(Long::longValue).toArray(), bitsPerKey)
                : Filters.create(kind, hashes.size(), bitsPerKey)) {
            if (!kind.isStatic()) {
                hashes.forEach(f::add);
            }
            try (Filter copy = Filters.read(ByteBuffer.wrap(f.toByteArray()))) {
                for (long h : hashes) {
                    assertThat(f.mightContain(h)).isTrue();
                    assertThat(copy.mightContain(h)).isTrue();
                }
            }
        }
    }

    /** One step of a counting-filter history: add (true) or remove (false) key number {@code key}. */
    record Op(boolean add, int key) {}

    @Provide
    Arbitrary<List<Op>> histories() {
        return Combinators.combine(
                        Arbitraries.of(true, false), Arbitraries.integers().between(0, 80))
                .as(Op::new)
                .list()
                .ofMaxSize(600);
    }

    @Property(tries = 200)
    void countingFilterKeepsEveryKeyStillPresent(
            @ForAll("histories") List<Op> history, @ForAll @DoubleRange(min = 2, max = 16) double countersPerKey) {
        Map<Integer, Integer> model = new HashMap<>();
        try (CountingFilter f = Filters.createCounting(40, countersPerKey)) {
            for (Op op : history) {
                byte[] key = TestKeys.longKey(op.key);
                int count = model.getOrDefault(op.key, 0);
                if (op.add) {
                    f.add(key);
                    model.put(op.key, count + 1);
                } else if (count > 0) {
                    f.remove(key);
                    model.put(op.key, count - 1);
                }
                for (Map.Entry<Integer, Integer> e : model.entrySet()) {
                    if (e.getValue() > 0) {
                        assertThat(f.mightContain(TestKeys.longKey(e.getKey())))
                                .as("key %d after %s", e.getKey(), op)
                                .isTrue();
                    }
                }
            }
            long live = model.values().stream().mapToLong(Integer::longValue).sum();
            assertThat(f.keyCount()).isEqualTo(live);
            if (live == 0 && ((CountingBloomFilter) f).saturatedCounters() == 0) {
                // every add was undone and no counter saturated: the filter is empty again
                assertThat(f.fractionOfBitsSet()).isZero();
            }
        }
    }
}

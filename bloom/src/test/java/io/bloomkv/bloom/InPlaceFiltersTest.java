package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import net.openhft.chronicle.core.UnsafeMemory;
import net.openhft.chronicle.core.io.AbstractReferenceCounted;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Filters probed where they lie in native memory ({@link InPlaceFilters}): several serialized filters laid end to end
 * at unaligned offsets (as partitions lie in a table file) answer every hash as the filters they were written from; a
 * flipped byte fails {@link InPlaceFilters#verify}; views refuse ranges outside the memory and are read-only; closing
 * views frees nothing and closing the wrapper releases its one handle (Chronicle reference tracing).
 */
class InPlaceFiltersTest {
    @BeforeEach
    void trace() {
        AbstractReferenceCounted.enableReferenceTracing();
    }

    @AfterEach
    void noLeaks() {
        AbstractReferenceCounted.assertReferencesReleased();
        AbstractReferenceCounted.disableReferenceTracing();
    }

    /** {@code blobs} copied end to end into fresh native memory after {@code lead} bytes; returns the address. */
    private static long place(List<byte[]> blobs, int lead, long[] offsets) {
        long total = lead;
        for (byte[] b : blobs) {
            total += b.length + 5; // a block trailer's worth of gap, so no filter starts 8-byte aligned
        }
        long address = UnsafeMemory.UNSAFE.allocateMemory(total);
        long at = lead;
        for (int i = 0; i < blobs.size(); i++) {
            byte[] b = blobs.get(i);
            UnsafeMemory.UNSAFE.copyMemory(
                    b, UnsafeMemory.UNSAFE.arrayBaseOffset(byte[].class), null, address + at, b.length);
            offsets[i] = at;
            at += b.length + 5;
        }
        return address;
    }

    @ParameterizedTest
    @EnumSource(
            value = FilterKind.class,
            names = {"BLOCKED", "STANDARD", "PARTITIONED", "RIBBON"})
    void viewsAnswerAsTheFiltersTheyWereWrittenFrom(FilterKind kind) {
        long seed = TestKeys.seed("InPlaceFiltersTest.seed");
        SplittableRandom rnd = new SplittableRandom(seed);
        List<Filter> originals = new ArrayList<>();
        List<byte[]> blobs = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                long[] keys = rnd.longs(200 + rnd.nextInt(2000)).toArray();
                Filter f = TestKeys.filled(kind, keys, 4 + rnd.nextInt(12));
                originals.add(f);
                blobs.add(f.toByteArray());
            }
            long[] offsets = new long[blobs.size()];
            long address = place(blobs, 3, offsets);
            try (InPlaceFilters in = InPlaceFilters.wrap(address, offsets[3] + blobs.get(3).length + 5)) {
                for (int i = 0; i < blobs.size(); i++) {
                    in.verify(offsets[i], blobs.get(i).length);
                    Filter v = in.view(offsets[i], blobs.get(i).length);
                    Filter o = originals.get(i);
                    assertThat(v.kind()).isEqualTo(kind);
                    assertThat(v.keyCount()).isEqualTo(o.keyCount());
                    assertThat(v.bitSize()).isEqualTo(o.bitSize());
                    for (int j = 0; j < 20_000; j++) {
                        long h = rnd.nextLong();
                        assertThat(v.mightContain(h))
                                .as("filter " + i + ", hash " + h + " (seed " + seed + ")")
                                .isEqualTo(o.mightContain(h));
                    }
                    assertThat(v.toByteArray()).isEqualTo(blobs.get(i));
                    assertThatThrownBy(() -> v.add(1L)).isInstanceOf(IllegalStateException.class);
                    v.close(); // frees nothing: the next view reads the same memory
                    assertThat(in.view(offsets[i], blobs.get(i).length).mightContain(0L))
                            .isEqualTo(o.mightContain(0L));
                }
            } finally {
                UnsafeMemory.UNSAFE.freeMemory(address);
            }
        } finally {
            originals.forEach(Filter::close);
        }
    }

    @Test
    void aFlippedByteFailsVerificationAndBadRangesAreRefused() {
        Filter f = TestKeys.filled(FilterKind.BLOCKED, 3000, 10);
        byte[] blob = f.toByteArray();
        f.close();
        long[] offsets = new long[1];
        long address = place(List.of(blob), 1, offsets);
        try {
            InPlaceFilters in = InPlaceFilters.wrap(address, blob.length + 6);
            in.verify(offsets[0], blob.length);
            long body = address + offsets[0] + 64 + 100;
            UnsafeMemory.UNSAFE.putByte(body, (byte) (UnsafeMemory.UNSAFE.getByte(body) ^ 0x10));
            assertThatThrownBy(() -> in.verify(offsets[0], blob.length))
                    .isInstanceOf(FilterFormatException.class)
                    .hasMessageContaining("CRC");
            assertThatThrownBy(() -> in.view(offsets[0], blob.length + 8))
                    .isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> in.view(offsets[0], blob.length - 8)).isInstanceOf(FilterFormatException.class);
            assertThatThrownBy(() -> in.view(-1, 64)).isInstanceOf(IndexOutOfBoundsException.class);
            long live = InPlaceFilters.live();
            in.close();
            in.close(); // once only
            assertThat(InPlaceFilters.live()).isEqualTo(live - 1);
            assertThatThrownBy(() -> in.view(offsets[0], blob.length)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> InPlaceFilters.wrap(0, 64)).isInstanceOf(IllegalArgumentException.class);
        } finally {
            UnsafeMemory.UNSAFE.freeMemory(address);
        }
    }

    /**
     * Descriptors ({@link InPlaceFilters#describe}) probe as the filters were written: every added key is found through
     * {@code mightContain} and through {@code touch} + {@code mightContainTouched}, and random hashes get the
     * original's answer, for filters at unaligned offsets, fractional bits per key (Ribbon's upper blocks) and filters
     * without keys.
     */
    @ParameterizedTest
    @EnumSource(
            value = FilterKind.class,
            names = {"BLOCKED", "STANDARD", "PARTITIONED", "RIBBON"})
    void descriptorsAnswerAsTheFiltersTheyWereWrittenFrom(FilterKind kind) {
        long seed = TestKeys.seed("InPlaceFiltersTest.seed");
        SplittableRandom rnd = new SplittableRandom(seed);
        List<Filter> originals = new ArrayList<>();
        List<long[]> keySets = new ArrayList<>();
        List<byte[]> blobs = new ArrayList<>();
        try {
            for (int i = 0; i < 5; i++) {
                long[] keys = i == 4
                        ? new long[0]
                        : rnd.longs(100 + rnd.nextInt(3000)).toArray();
                Filter f = TestKeys.filled(kind, keys, 4 + rnd.nextInt(12) + (i == 1 ? 0.37 : 0));
                originals.add(f);
                keySets.add(keys);
                blobs.add(f.toByteArray());
            }
            long[] offsets = new long[blobs.size()];
            long address = place(blobs, 7, offsets);
            int last = blobs.size() - 1;
            try (InPlaceFilters in = InPlaceFilters.wrap(address, offsets[last] + blobs.get(last).length + 5)) {
                long[] d = new long[InPlaceFilters.DESCRIPTOR_LONGS * blobs.size()];
                for (int i = 0; i < blobs.size(); i++) {
                    int at = InPlaceFilters.DESCRIPTOR_LONGS * i;
                    in.describe(offsets[i], blobs.get(i).length, d, at);
                    assertThat(d[at]).isNotZero();
                    Filter o = originals.get(i);
                    String what = kind + " filter " + i + " (seed " + seed + ")";
                    long sink = 0;
                    for (long key : keySets.get(i)) {
                        long h = Hashing.hash64(TestKeys.longKey(key));
                        assertThat(in.mightContain(offsets[i], d[at], d[at + 1], h))
                                .as(what)
                                .isTrue();
                        sink += in.touch(offsets[i], d[at], d[at + 1], h);
                        assertThat(in.mightContainTouched(offsets[i], d[at], d[at + 1], h))
                                .as(what)
                                .isTrue();
                    }
                    for (int j = 0; j < 20_000; j++) {
                        long h = rnd.nextLong();
                        boolean expected = o.mightContain(h);
                        assertThat(in.mightContain(offsets[i], d[at], d[at + 1], h))
                                .as(what + ", hash " + h)
                                .isEqualTo(expected);
                        sink += in.touch(offsets[i], d[at], d[at + 1], h);
                        assertThat(in.mightContainTouched(offsets[i], d[at], d[at + 1], h))
                                .as(what + ", touched, hash " + h)
                                .isEqualTo(expected);
                    }
                    if (sink == 42) {
                        System.out.println("touched");
                    }
                }
                // A descriptor used at an offset where its filter would run past the memory is refused.
                long[] bad = {d[2 * last], d[2 * last + 1]};
                assertThatThrownBy(() -> in.mightContain(offsets[last] + 16, bad[0], bad[1], 1L))
                        .isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> in.mightContain(-1, bad[0], bad[1], 1L))
                        .isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> in.describe(offsets[0], blobs.get(0).length, new long[1], 0))
                        .isInstanceOf(IndexOutOfBoundsException.class);
                in.close();
                assertThatThrownBy(() -> in.mightContain(offsets[0], d[0], d[1], 1L))
                        .isInstanceOf(IllegalStateException.class);
            } finally {
                UnsafeMemory.UNSAFE.freeMemory(address);
            }
        } finally {
            originals.forEach(Filter::close);
        }
    }

    @Test
    void countingFiltersAreNotDescribed() {
        Filter f = TestKeys.filled(FilterKind.COUNTING, 500, 4);
        byte[] blob = f.toByteArray();
        f.close();
        long[] offsets = new long[1];
        long address = place(List.of(blob), 0, offsets);
        try (InPlaceFilters in = InPlaceFilters.wrap(address, blob.length + 5)) {
            assertThatThrownBy(() -> in.describe(0, blob.length, new long[2], 0))
                    .isInstanceOf(FilterFormatException.class)
                    .hasMessageContaining("COUNTING");
        } finally {
            UnsafeMemory.UNSAFE.freeMemory(address);
        }
    }

    /**
     * Memory the object allocates ({@link InPlaceFilters#allocate}): filters written at 64-byte boundaries are
     * described and probed as in wrapped memory, the allocation is counted and freed at close (reference tracing), and
     * wrapped memory refuses writes.
     */
    @Test
    void allocatedMemoryHoldsWrittenFiltersAndIsFreedAtClose() {
        long seed = TestKeys.seed("InPlaceFiltersTest.allocated");
        SplittableRandom rnd = new SplittableRandom(seed);
        Filter a = TestKeys.filled(FilterKind.BLOCKED, rnd.longs(1500).toArray(), 10);
        Filter b = TestKeys.filled(FilterKind.RIBBON, rnd.longs(900).toArray(), 7.5);
        try (a;
                b) {
            byte[] ba = a.toByteArray();
            byte[] bb = b.toByteArray();
            long offB = (ba.length + 63) & -64L;
            try (InPlaceFilters in = InPlaceFilters.allocate(offB + bb.length)) {
                assertThat(in.allocatedBytes()).isGreaterThanOrEqualTo(offB + bb.length);
                in.write(0, ba, 0, ba.length);
                in.write(offB, bb, 0, bb.length);
                long[] d = new long[4];
                in.describe(0, ba.length, d, 0);
                in.describe(offB, bb.length, d, 2);
                for (int j = 0; j < 20_000; j++) {
                    long h = rnd.nextLong();
                    assertThat(in.mightContain(0, d[0], d[1], h)).isEqualTo(a.mightContain(h));
                    assertThat(in.mightContain(offB, d[2], d[3], h)).isEqualTo(b.mightContain(h));
                }
                assertThatThrownBy(() -> in.write(offB + bb.length - 4, bb, 0, 8))
                        .isInstanceOf(IndexOutOfBoundsException.class);
            }
        }
        long address = UnsafeMemory.UNSAFE.allocateMemory(128);
        try (InPlaceFilters wrapped = InPlaceFilters.wrap(address, 128)) {
            assertThat(wrapped.allocatedBytes()).isZero();
            assertThatThrownBy(() -> wrapped.write(0, new byte[8], 0, 8)).isInstanceOf(IllegalStateException.class);
        } finally {
            UnsafeMemory.UNSAFE.freeMemory(address);
        }
    }

    /** {@link Filters#readWithoutCrc} reads what {@link Filters#read} reads, and skips only the CRC32C. */
    @Test
    void readWithoutCrcSkipsOnlyTheChecksum() {
        Filter f = TestKeys.filled(FilterKind.BLOCKED, 2000, 10);
        byte[] blob = f.toByteArray();
        try (Filter r = Filters.readWithoutCrc(blob, 0, blob.length)) {
            for (long h = 0; h < 10_000; h++) {
                assertThat(r.mightContain(h * 0x9E3779B97F4A7C15L)).isEqualTo(f.mightContain(h * 0x9E3779B97F4A7C15L));
            }
        } finally {
            f.close();
        }
        blob[100] ^= 1; // a body byte: the CRC32C no longer matches
        assertThatThrownBy(() -> Filters.read(blob, 0, blob.length)).isInstanceOf(FilterFormatException.class);
        Filters.readWithoutCrc(blob, 0, blob.length).close();
        blob[4] ^= 1; // the header's format version: still checked
        assertThatThrownBy(() -> Filters.readWithoutCrc(blob, 0, blob.length))
                .isInstanceOf(FilterFormatException.class);
    }

    /**
     * A run ({@link InPlaceFilters#run}) of filters of one geometry at a fixed stride answers every hash as each filter
     * it covers, through {@code mightContain} and through {@code touch} + {@code mightContainTouched}, for the Bloom
     * kinds (equal key counts give equal geometry) and Ribbon (filters of one key count and seed); it refuses a stride
     * shorter than a filter, runs reaching past the memory, an index outside the run and a closed object.
     */
    @ParameterizedTest
    @EnumSource(
            value = FilterKind.class,
            names = {"BLOCKED", "STANDARD", "PARTITIONED", "RIBBON"})
    void aRunAnswersAsEachFilterOfOneGeometry(FilterKind kind) {
        long seed = TestKeys.seed("InPlaceFiltersTest.run");
        SplittableRandom rnd = new SplittableRandom(seed);
        int count = 5;
        int keys = 1000;
        List<Filter> originals = new ArrayList<>();
        List<long[]> added = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                long[] k = rnd.longs(keys).toArray();
                added.add(k);
                originals.add(TestKeys.filled(kind, k, 10));
            }
            byte[] first = originals.get(0).toByteArray();
            long stride = (first.length + 63) & -64L;
            try (InPlaceFilters in = InPlaceFilters.allocate(stride * count)) {
                long[] d = new long[InPlaceFilters.DESCRIPTOR_LONGS];
                long[] shared = null;
                for (int i = 0; i < count; i++) {
                    byte[] b = originals.get(i).toByteArray();
                    assertThat(b.length).as("one geometry (seed " + seed + ")").isEqualTo(first.length);
                    in.write(i * stride, b, 0, b.length);
                    in.describe(i * stride, b.length, d, 0);
                    if (shared == null) {
                        shared = d.clone();
                    }
                    if (kind != FilterKind.RIBBON) {
                        assertThat(d)
                                .as("Bloom filters of one key count share a descriptor")
                                .isEqualTo(shared);
                    }
                }
                if (kind == FilterKind.RIBBON) {
                    // Ribbon's descriptor carries its seed, which each filter picks: a run covers only filters whose
                    // descriptor it has; here the first alone, the others through their own descriptors
                    count = 1;
                }
                InPlaceFilters.Run run = in.run(0, stride, count, shared[0], shared[1]);
                assertThat(run.count()).isEqualTo(count);
                for (int i = 0; i < count; i++) {
                    Filter o = originals.get(i);
                    for (long key : added.get(i)) {
                        long h = Hashing.hash64(TestKeys.longKey(key));
                        assertThat(run.mightContain(i, h))
                                .as("added key, filter " + i)
                                .isTrue();
                        run.touch(i, h);
                        assertThat(run.mightContainTouched(i, h)).isTrue();
                    }
                    for (int j = 0; j < 20_000; j++) {
                        long h = rnd.nextLong();
                        assertThat(run.mightContain(i, h))
                                .as("filter " + i + ", hash " + h + " (seed " + seed + ")")
                                .isEqualTo(o.mightContain(h));
                        assertThat(run.mightContainTouched(i, h)).isEqualTo(o.mightContain(h));
                    }
                }
                int n = count;
                long[] w = shared;
                assertThatThrownBy(() -> run.mightContain(n, 1L)).isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> run.mightContain(-1, 1L)).isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> in.run(0, first.length - 1, 2, w[0], w[1]))
                        .isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> in.run(0, stride, 6, w[0], w[1]))
                        .isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> in.run(-64, stride, 1, w[0], w[1]))
                        .isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> in.run(0, stride, 0, w[0], w[1])).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> in.run(0, stride, 1, 0L, 0L)).isInstanceOf(IllegalArgumentException.class);
                in.close();
                assertThatThrownBy(() -> in.run(0, stride, 1, w[0], w[1])).isInstanceOf(IllegalStateException.class);
            }
        } finally {
            originals.forEach(Filter::close);
        }
    }
}

package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The public API's answers to bad and extreme input, as a Guava BloomFilter user would try it: typed exceptions
 * ({@link IllegalArgumentException} and its subclasses {@link FilterFormatException} and
 * {@link IncompatibleFiltersException}, {@link IllegalStateException} after close, {@link NullPointerException} for a
 * null argument as in Guava), and working filters at the edges of the valid ranges. {@link OffHeapLeakCheck}: every
 * filter, including those of failed calls, is released exactly once.
 */
@ExtendWith(OffHeapLeakCheck.class)
class ApiEdgesTest {
    @TempDir
    Path dir;

    private static final double[] BAD_BITS_PER_KEY = {
        0, -0.0, -1, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -Double.MIN_VALUE
    };
    private static final double[] BAD_FPP = {
        0, -0.0, 1, -0.5, 1.5, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Math.nextUp(1.0)
    };

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void badSizingArgumentsAreIllegalArguments(FilterKind kind) {
        for (long n : new long[] {-1, Long.MIN_VALUE}) {
            assertThatThrownBy(() -> Filters.create(kind, n, 10)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Filters.createForFpp(kind, n, 0.01)).isInstanceOf(IllegalArgumentException.class);
        }
        for (double b : BAD_BITS_PER_KEY) {
            assertThatThrownBy(() -> Filters.create(kind, 10, b))
                    .as("bits per key %s", b)
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Filters.build(kind, new long[] {1, 2}, b))
                    .as("bits per key %s", b)
                    .isInstanceOf(IllegalArgumentException.class);
        }
        for (double p : BAD_FPP) {
            assertThatThrownBy(() -> Filters.createForFpp(kind, 10, p))
                    .as("fpp %s", p)
                    .isInstanceOf(IllegalArgumentException.class);
        }
        // more than 2^40 bits
        assertThatThrownBy(() -> Filters.create(kind, Long.MAX_VALUE, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Filters.create(kind, 1L << 37, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Filters.build(kind, new long[] {1}, 0x1p41))
                .isInstanceOf(IllegalArgumentException.class);
        if (!kind.isStatic()) {
            for (int k : new int[] {0, -1, 65, Integer.MAX_VALUE}) {
                assertThatThrownBy(() -> Filters.create(kind, 10, 10, k)).isInstanceOf(IllegalArgumentException.class);
            }
        }
    }

    /**
     * m just under 2^40 with k rows of m/k bits rounded up to 64: the rows add up to more than 2^40 bits. The limit is an
     * {@link IllegalArgumentException} before anything is allocated, not an {@link OutOfMemoryError} from allocating
     * 128 GiB (nor, where that succeeds, a leaked body when the constructor then refuses the geometry).
     */
    @Test
    void partitionedRowsRoundedPastTheLimitAreRefusedBeforeAllocating() {
        double justUnder = (double) ((1L << 40) - 1);
        assertThatThrownBy(() -> Filters.create(FilterKind.PARTITIONED, 1, justUnder, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2^40");
        // 7 = optimalK(10): (2^40 - 7) bits in 7 rows of a multiple of 64 bits
        assertThatThrownBy(() -> Filters.create(FilterKind.PARTITIONED, ((1L << 40) - 7) / 10, 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2^40");
    }

    /** The edges of the valid ranges give working filters: n of 0 and 1, tiny and huge bits per key, fpp near 0 and 1. */
    @ParameterizedTest
    @EnumSource(FilterKind.class)
    @Timeout(60)
    void extremeButValidSizingGivesWorkingFilters(FilterKind kind) {
        List<Filter> made = new ArrayList<>();
        try {
            if (kind.isStatic()) {
                made.add(Filters.build(kind, new long[0], 10));
                made.add(Filters.build(kind, new long[] {5}, Double.MIN_VALUE));
                made.add(Filters.build(kind, new long[] {5}, 1e6));
                made.add(Filters.build(kind, new long[] {5, 5, 5}, 0.01));
            } else {
                made.add(Filters.create(kind, 0, 10));
                made.add(Filters.create(kind, 1, 10));
                made.add(Filters.create(kind, 1, Double.MIN_VALUE));
                made.add(Filters.create(kind, Long.MAX_VALUE, 1e-12));
                made.add(Filters.create(kind, 3, 1e6));
                made.add(Filters.createForFpp(kind, 10, Double.MIN_VALUE));
                made.add(Filters.createForFpp(kind, 10, 0.9999999));
                made.add(Filters.createForFpp(kind, 10, Math.nextDown(1.0)));
                made.add(Filters.createForFpp(kind, 0, 0.5));
                made.add(Filters.create(kind, 10, 10, 64));
                made.add(Filters.create(kind, 10, 10, 1));
            }
            for (Filter f : made) {
                if (!kind.isStatic()) {
                    f.add(5L);
                    f.add(TestKeys.longKey(6));
                    assertThat(f.mightContain(TestKeys.longKey(6))).as("%s", f).isTrue();
                }
                if (f.keyCount() > 0) {
                    assertThat(f.mightContain(5L)).as("%s", f).isTrue();
                }
                assertThat(f.expectedFpp()).as("%s", f).isBetween(0.0, 1.0);
                assertThat(f.approximateKeyCount()).isNotNegative();
            }
        } finally {
            made.forEach(Filter::close);
        }
    }

    /**
     * A negative batch count is an {@link IllegalArgumentException}, as other bad sizes are, not a batch of nothing: for
     * every kind, and for {@link Filter}'s default {@code mightContainAll} (through a proxy that answers only
     * {@code mightContain(long)}).
     */
    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void negativeBatchCountIsAnIllegalArgument(FilterKind kind) {
        try (Filter f = kind.isStatic() ? Filters.build(kind, new long[] {1}, 10) : Filters.create(kind, 10, 10)) {
            assertThatThrownBy(() -> f.mightContainAll(new long[] {1}, -1, new boolean[1]))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("-1");
        }
        Filter plain = (Filter) Proxy.newProxyInstance(
                Filter.class.getClassLoader(), new Class<?>[] {Filter.class}, (proxy, method, args) -> {
                    if (method.isDefault()) {
                        return InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    if (method.getName().equals("mightContain")) {
                        return true;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        assertThat(plain.mightContainAll(new long[] {1, 2}, 2, new boolean[2])).isEqualTo(2);
        assertThatThrownBy(() -> plain.mightContainAll(new long[] {1}, -1, new boolean[1]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
    }

    /** Null keys and arguments: NullPointerException (as Guava's put/mightContain); the empty key is a key like any other. */
    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void nullKeysAreNullPointerExceptionsAndTheEmptyKeyIsAKey(FilterKind kind) {
        byte[] empty = new byte[0];
        try (Filter f = kind.isStatic()
                ? Filters.build(kind, new long[] {Hashing.hash64(empty)}, 10)
                : Filters.create(kind, 10, 10)) {
            if (!kind.isStatic()) {
                assertThatThrownBy(() -> f.add((byte[]) null)).isInstanceOf(NullPointerException.class);
                f.add(empty);
            }
            assertThatThrownBy(() -> f.mightContain((byte[]) null)).isInstanceOf(NullPointerException.class);
            assertThat(f.mightContain(empty)).isTrue();
            assertThat(f.mightContain(Hashing.hash64(empty))).isTrue();
            assertThat(Hashing.hash64(new byte[] {7, 0, 9}, 1, 0)).isEqualTo(Hashing.hash64(empty));
            assertThat(f.keyCount()).isEqualTo(1);
            assertThatThrownBy(() -> f.writeTo(null)).isInstanceOf(NullPointerException.class);
            if (f instanceof CountingFilter c) {
                assertThatThrownBy(() -> c.remove((byte[]) null)).isInstanceOf(NullPointerException.class);
                c.remove(empty);
                assertThat(f.mightContain(empty)).isFalse();
            }
        }
        assertThatThrownBy(() -> Filters.create(null, 10, 10))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("kind");
        assertThatThrownBy(() -> Filters.create(null, 10, 10, 3))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("kind");
        assertThatThrownBy(() -> Filters.createForFpp(null, 10, 0.01))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("kind");
        assertThatThrownBy(() -> Filters.build(null, new long[] {1}, 10))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("kind");
        assertThatThrownBy(() -> Filters.build(kind, null, 10)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Filters.read((byte[]) null, 0, 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Filters.read((ByteBuffer) null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Filters.readCompressed(null)).isInstanceOf(NullPointerException.class);
    }

    /** Removing a key never added is refused when the filter can tell, and changes nothing; a read-only one refuses any. */
    @Test
    void countingRemoveOfAKeyNeverAddedChangesNothing() throws IOException {
        try (CountingFilter f = Filters.createCounting(1000, 10)) {
            for (int i = 0; i < 500; i++) {
                f.add(TestKeys.longKey(i));
            }
            byte[] before = f.toByteArray();
            int refused = 0;
            for (int i = 1000; i < 3000; i++) {
                byte[] key = TestKeys.longKey(i);
                if (f.mightContain(key)) {
                    continue; // a false positive: the filter cannot tell (CountingFilter's documented caller error)
                }
                assertThatThrownBy(() -> f.remove(key))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("never added");
                refused++;
            }
            assertThat(refused).isGreaterThan(1900);
            assertThat(f.toByteArray()).isEqualTo(before);
            assertThat(f.keyCount()).isEqualTo(500);
            Path p = dir.resolve("counting");
            Files.write(p, before);
            try (Filter mapped = Filters.map(p, 0, before.length);
                    Filter built = Filters.build(FilterKind.COUNTING, new long[] {1, 2}, 10)) {
                assertThatThrownBy(() -> ((CountingFilter) mapped).remove(TestKeys.longKey(1)))
                        .isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> ((CountingFilter) built).remove(1L)).isInstanceOf(IllegalStateException.class);
                assertThat(built.mightContain(1L)).isTrue();
            }
        }
    }

    /** Every pair of different kinds, sizes or probe counts, RIBBONs of other seeds, and foreign Filter implementations. */
    @Test
    void incompatibleOperandsAreIncompatibleFiltersExceptions() {
        List<Filter> filters = new ArrayList<>();
        try {
            for (FilterKind kind : FilterKind.values()) {
                filters.add(TestKeys.filled(kind, 100, 10));
            }
            for (Filter a : filters) {
                for (Filter b : filters) {
                    if (a == b && a.kind() != FilterKind.RIBBON) {
                        try (Filter u = Filters.union(a, b);
                                Filter i = Filters.intersection(a, b)) {
                            // a with itself: the same bits (COUNTING: the union sums the counters); the key
                            // counts differ, a union adds the operands' adds
                            assertThat(body(i)).isEqualTo(body(a));
                            if (a.kind() == FilterKind.COUNTING) {
                                assertThat(u.approximateKeyCount()).isEqualTo(2 * a.approximateKeyCount());
                            } else {
                                assertThat(body(u)).isEqualTo(body(a));
                            }
                            assertThat(u.keyCount()).isEqualTo(2 * a.keyCount());
                            assertThat(i.keyCount()).isEqualTo(a.keyCount());
                        }
                        continue;
                    }
                    assertThatThrownBy(() -> Filters.union(a, b))
                            .as("%s with %s", a, b)
                            .isInstanceOf(IncompatibleFiltersException.class);
                    assertThatThrownBy(() -> Filters.intersection(a, b))
                            .as("%s with %s", a, b)
                            .isInstanceOf(IncompatibleFiltersException.class);
                }
            }
            for (FilterKind kind : new FilterKind[] {
                FilterKind.STANDARD, FilterKind.PARTITIONED, FilterKind.BLOCKED, FilterKind.COUNTING
            }) {
                try (Filter a = Filters.create(kind, 1000, 10);
                        Filter bigger = Filters.create(kind, 5000, 10);
                        Filter otherK = Filters.create(kind, 1000, 10, 2)) {
                    assertThat(otherK.bitSize()).isNotEqualTo(bigger.bitSize());
                    for (Filter b : new Filter[] {bigger, otherK}) {
                        assertThatThrownBy(() -> Filters.union(a, b)).isInstanceOf(IncompatibleFiltersException.class);
                        assertThatThrownBy(() -> Filters.intersection(b, a))
                                .isInstanceOf(IncompatibleFiltersException.class);
                    }
                }
            }
            Filter foreign = java.lang.reflect.Proxy.newProxyInstance(
                                    Filter.class.getClassLoader(), new Class<?>[] {Filter.class}, (proxy, m, args) -> {
                                        throw new UnsupportedOperationException(m.getName());
                                    })
                            instanceof Filter p
                    ? p
                    : null;
            assertThatThrownBy(() -> Filters.union(filters.get(0), foreign))
                    .isInstanceOf(IncompatibleFiltersException.class);
            assertThatThrownBy(() -> Filters.intersection(foreign, filters.get(0)))
                    .isInstanceOf(IncompatibleFiltersException.class);
        } finally {
            filters.forEach(Filter::close);
        }
    }

    private static byte[] body(Filter f) {
        byte[] b = f.toByteArray();
        return Arrays.copyOfRange(b, FilterHeader.HEADER_SIZE, b.length);
    }

    /** The methods LifecycleTest does not list refuse a closed filter too; a closed operand is refused by union. */
    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void everyMethodOfAClosedFilterIsAnIllegalStateException(FilterKind kind) {
        Filter f = TestKeys.filled(kind, 10, 10);
        f.close();
        f.close();
        List<Consumer<Filter>> calls = List.of(
                Filter::approximateKeyCount,
                x -> x.mightContainAll(new long[] {1}, 1, new boolean[1]),
                x -> x.mightContainTouched(1L),
                x -> {
                    try {
                        x.writeCompressed(OutputStream.nullOutputStream());
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                },
                x -> Filters.union(x, x),
                x -> Filters.intersection(x, x));
        for (Consumer<Filter> call : calls) {
            assertThatThrownBy(() -> call.accept(f)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void everyMethodOfAClosedRangeFilterIsAnIllegalStateException() {
        RangeFilter f = RangeFilter.builder(10).add(new byte[] {1}).build();
        f.close();
        f.close();
        List<Consumer<RangeFilter>> calls = List.of(
                x -> x.mightContainRange(null, null),
                x -> x.mightContainRange(new byte[] {0}, new byte[] {2}, false),
                x -> x.mightContainRange(new byte[] {0}, 1, new byte[] {2}, 1),
                RangeFilter::keyCount,
                RangeFilter::bitsPerKey,
                RangeFilter::segmentKeys,
                RangeFilter::sizeInBytes,
                RangeFilter::serializedSize,
                RangeFilter::toByteArray);
        for (Consumer<RangeFilter> call : calls) {
            assertThatThrownBy(() -> call.accept(f)).isInstanceOf(IllegalStateException.class);
        }
        assertThat(f.toString()).contains("closed");
    }

    /** Range bounds: an inverted or empty range holds nothing, a point range at a key holds it, bad lengths are refused. */
    @Test
    void rangeFilterBoundsAndBuilderMisuse() {
        byte[] a = {'a'};
        byte[] b = {'b'};
        byte[] c = {'c'};
        RangeFilter.Builder builder = RangeFilter.builder(16).add(new byte[0]).add(b);
        try (RangeFilter f = builder.build()) {
            assertThat(f.keyCount()).isEqualTo(2);
            assertThat(f.mightContainRange(c, a)).as("lo > hi").isFalse();
            assertThat(f.mightContainRange(c, a, false)).isFalse();
            assertThat(f.mightContainRange(b, b, false)).as("[b, b) is empty").isFalse();
            assertThat(f.mightContainRange(b, b)).as("[b, b] holds b").isTrue();
            assertThat(f.mightContainRange(a, c, false)).isTrue();
            assertThat(f.mightContainRange(new byte[0], new byte[0]))
                    .as("the empty key")
                    .isTrue();
            assertThat(f.mightContainRange(null, new byte[0], false))
                    .as("nothing sorts below the empty key")
                    .isFalse();
            assertThat(f.mightContainRange(null, null)).isTrue();
            assertThat(f.mightContainRange(b, 1, new byte[] {'b', 'z'}, 1))
                    .as("prefixes of arrays")
                    .isTrue();
            assertThatThrownBy(() -> f.mightContainRange(a, 2, c, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> f.mightContainRange(a, -1, c, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> builder.add(c)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(builder::build).as("a builder builds once").isInstanceOf(IllegalStateException.class);
        }
        assertThatThrownBy(() -> RangeFilter.builder(10).add(b).add(a)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RangeFilter.builder(10).add(null)).isInstanceOf(NullPointerException.class);
        for (double bad : new double[] {1.99, 60.01, Double.NaN, Double.POSITIVE_INFINITY, -3}) {
            assertThatThrownBy(() -> RangeFilter.builder(bad)).isInstanceOf(IllegalArgumentException.class);
        }
        for (int bad : new int[] {0, -1, (1 << 20) + 1}) {
            assertThatThrownBy(() -> RangeFilter.builder(10, bad)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    /** Leak check of a failing build: nothing of a filter whose creation threw stays allocated ({@link OffHeapLeakCheck}). */
    @Test
    void writeToAStreamThatFailsLeavesTheFilterUsable() throws IOException {
        try (Filter f = TestKeys.filled(FilterKind.BLOCKED, 100, 10)) {
            OutputStream broken = new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    throw new IOException("disk full");
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    throw new IOException("disk full");
                }
            };
            assertThatThrownBy(() -> f.writeTo(broken)).isInstanceOf(IOException.class);
            assertThatThrownBy(() -> f.writeCompressed(broken)).isInstanceOf(IOException.class);
            ByteArrayOutputStream ok = new ByteArrayOutputStream();
            f.writeTo(ok);
            assertThat(ok.toByteArray()).isEqualTo(f.toByteArray());
        }
    }
}

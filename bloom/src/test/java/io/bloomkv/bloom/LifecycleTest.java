package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import net.openhft.chronicle.core.io.AbstractReferenceCounted;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Off-heap memory is released exactly once, checked with Chronicle's reference accounting
 * ({@link AbstractReferenceCounted#enableReferenceTracing()} / {@link AbstractReferenceCounted#assertReferencesReleased()}),
 * and a closed filter refuses every call with {@link IllegalStateException} instead of touching freed memory.
 */
class LifecycleTest {
    @TempDir
    Path dir;

    @BeforeEach
    void trace() {
        AbstractReferenceCounted.enableReferenceTracing();
    }

    @AfterEach
    void noLeaks() {
        AbstractReferenceCounted.assertReferencesReleased();
        AbstractReferenceCounted.disableReferenceTracing();
    }

    @Test
    void leakCheckDetectsAnUnclosedFilter() {
        Filter leaked = Filters.create(FilterKind.BLOCKED, 1000, 10);
        try {
            assertThatThrownBy(AbstractReferenceCounted::assertReferencesReleased)
                    .isInstanceOf(AssertionError.class);
        } finally {
            leaked.close();
        }
    }

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void createdCopiedAndMappedFiltersReleaseTheirMemory(FilterKind kind) throws Exception {
        byte[] bytes;
        try (Filter f = TestKeys.filled(kind, new long[] {1}, 10)) {
            assertThat(f.sizeInBytes()).isGreaterThanOrEqualTo(f.serializedSize() - FilterHeader.HEADER_SIZE);
            bytes = f.toByteArray();
        }
        try (Filter copy = Filters.read(bytes, 0, bytes.length)) {
            assertThat(copy.mightContain(TestKeys.longKey(1))).isTrue();
        }
        Path p = dir.resolve("f");
        Files.write(p, bytes);
        try (Filter mapped = Filters.map(p, 0, bytes.length)) {
            assertThat(mapped.mightContain(TestKeys.longKey(1))).isTrue();
        }
        // failed reads release what they allocated
        byte[] bad = bytes.clone();
        bad[bad.length - 1] ^= 1;
        assertThatThrownBy(() -> Filters.map(p.resolveSibling("missing"), 0, 64))
                .isInstanceOf(java.io.IOException.class);
        Files.write(p, bad);
        assertThatThrownBy(() -> Filters.map(p, 0, bad.length)).isInstanceOf(FilterFormatException.class);
        assertThatThrownBy(() -> Filters.read(bad, 0, bad.length)).isInstanceOf(FilterFormatException.class);
    }

    @ParameterizedTest
    @EnumSource(FilterKind.class)
    void useAfterCloseIsAnIllegalStateException(FilterKind kind) {
        Filter f = TestKeys.filled(kind, new long[] {7}, 10);
        f.close();
        f.close(); // idempotent
        List<Consumer<Filter>> calls = List.of(
                x -> x.add(TestKeys.longKey(1)),
                x -> x.add(1L),
                x -> x.mightContain(TestKeys.longKey(7)),
                x -> x.mightContain(1L),
                x -> x.touch(1L),
                Filter::hashCount,
                Filter::bitSize,
                Filter::expectedKeys,
                Filter::keyCount,
                Filter::expectedFpp,
                Filter::fractionOfBitsSet,
                Filter::sizeInBytes,
                Filter::serializedSize,
                Filter::toByteArray,
                x -> {
                    try {
                        x.writeTo(new ByteArrayOutputStream());
                    } catch (java.io.IOException e) {
                        throw new AssertionError(e);
                    }
                });
        for (Consumer<Filter> call : calls) {
            assertThatThrownBy(() -> call.accept(f))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
        if (f instanceof CountingFilter) {
            assertThatThrownBy(() -> ((CountingFilter) f).remove(1L)).isInstanceOf(IllegalStateException.class);
        }
        assertThat(f.kind()).isEqualTo(kind);
        assertThat(f.toString()).contains("closed");
    }
}

package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.openhft.chronicle.core.UnsafeMemory;
import net.openhft.chronicle.core.io.AbstractReferenceCounted;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link OffHeapLeakCheck} can fail: a filter left open, a range filter left open and an in-place filter object left
 * open each fail its check, and both of its registrations (a Jupiter test, a jqwik property) run with reference tracing
 * on, without which Chronicle's check passes whatever leaked.
 */
@ExtendWith(OffHeapLeakCheck.class)
@AddLifecycleHook(OffHeapLeakCheck.class)
class OffHeapLeakCheckTest {
    @Test
    void aJupiterTestRunsWithReferenceTracingOn() {
        Filter open = Filters.create(FilterKind.BLOCKED, 100, 10);
        try {
            assertThatThrownBy(AbstractReferenceCounted::assertReferencesReleased)
                    .isInstanceOf(AssertionError.class);
        } finally {
            open.close();
        }
    }

    @Property(tries = 3)
    void aPropertyRunsWithReferenceTracingOn(@ForAll @IntRange(min = 1, max = 1000) int keys) {
        try (Filter open = Filters.create(FilterKind.STANDARD, keys, 10)) {
            assertThatThrownBy(AbstractReferenceCounted::assertReferencesReleased)
                    .isInstanceOf(AssertionError.class);
        }
    }

    /** The check itself, outside a test's lifecycle: what it reports, and that it switches tracing off either way. */
    @Test
    void everyKindOfLeftoverFailsTheCheck() {
        AbstractReferenceCounted.disableReferenceTracing(); // this test's own baseline is taken again below
        OffHeapLeakCheck.Baseline clean = OffHeapLeakCheck.Baseline.take();
        Filters.create(FilterKind.COUNTING, 100, 10).close();
        clean.check(); // nothing left: passes

        OffHeapLeakCheck.Baseline before = OffHeapLeakCheck.Baseline.take();
        Filter filter = TestKeys.filled(FilterKind.RIBBON, 500, 10);
        try {
            assertThatThrownBy(before::check).isInstanceOf(AssertionError.class);
        } finally {
            filter.close();
        }

        before = OffHeapLeakCheck.Baseline.take();
        RangeFilter range = RangeFilter.builder(10).add(new byte[] {1}).build();
        try {
            assertThatThrownBy(before::check).isInstanceOf(AssertionError.class);
        } finally {
            range.close();
        }

        before = OffHeapLeakCheck.Baseline.take();
        InPlaceFilters inPlace = InPlaceFilters.allocate(4096);
        try {
            assertThatThrownBy(before::check).isInstanceOf(AssertionError.class);
        } finally {
            inPlace.close();
        }

        // The counters catch what reference tracing would not see (tracing off here): an in-place object left open,
        // and a filter body left in the huge-page arena where there is one.
        before = OffHeapLeakCheck.Baseline.take();
        AbstractReferenceCounted.disableReferenceTracing();
        long address = UnsafeMemory.UNSAFE.allocateMemory(64);
        InPlaceFilters wrapped = InPlaceFilters.wrap(address, 64);
        try {
            assertThatThrownBy(before::check)
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("in-place filter objects");
        } finally {
            wrapped.close();
            UnsafeMemory.UNSAFE.freeMemory(address);
        }
        before = OffHeapLeakCheck.Baseline.take();
        AbstractReferenceCounted.disableReferenceTracing();
        Filter inArena = Filters.create(FilterKind.BLOCKED, 100, 10);
        try {
            if (Filters.hugePageArenaLiveBytes() > before.arenaBytes()) {
                assertThatThrownBy(before::check)
                        .isInstanceOf(AssertionError.class)
                        .hasMessageContaining("huge-page arena bytes");
            } else {
                assertThat(Filters.hugePageArenaLiveBytes()).as("no arena here").isZero();
            }
        } finally {
            inArena.close();
        }
        OffHeapLeakCheck.Baseline.take(); // for the extension's own check after this test, which now passes
    }
}

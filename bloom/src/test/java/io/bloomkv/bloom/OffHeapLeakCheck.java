package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.openhft.chronicle.core.io.AbstractReferenceCounted;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Checks that a test released every piece of off-heap memory it allocated, exactly once: what {@code LifecycleTest} and
 * {@code InPlaceFiltersTest} check by hand, for any test class. Before the test, Chronicle's reference tracing is
 * switched on and the live counts are noted; after it (the test's own filters closed),
 * {@link AbstractReferenceCounted#assertReferencesReleased()} fails for any filter, range filter or mapping still
 * holding its Chronicle handle (one never closed), and the huge-page arena's live bytes
 * ({@link Filters#hugePageArenaLiveBytes()}, 0 where it is off) and the open {@link InPlaceFilters} must be back where
 * they were: more is a leak, less a double release.
 *
 * <p>JUnit Jupiter tests (each invocation of a parameterized test, each input a fuzz test replays):
 * {@code @ExtendWith(OffHeapLeakCheck.class)}. jqwik properties, checked once around all the tries of a property:
 * {@code @AddLifecycleHook(OffHeapLeakCheck.class)}. A class with both kinds carries both annotations.
 */
final class OffHeapLeakCheck implements BeforeEachCallback, AfterEachCallback, AroundPropertyHook {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(OffHeapLeakCheck.class);

    /** The live counts before a test, taken with tracing switched on; {@link #check} compares the counts after it. */
    record Baseline(long arenaBytes, long inPlace) {
        static Baseline take() {
            AbstractReferenceCounted.enableReferenceTracing();
            return new Baseline(Filters.hugePageArenaLiveBytes(), InPlaceFilters.live());
        }

        /** Checks that nothing is left, then switches tracing off (also when the check fails). */
        void check() {
            try {
                AbstractReferenceCounted.assertReferencesReleased();
                assertThat(Filters.hugePageArenaLiveBytes())
                        .as("huge-page arena bytes live after the test")
                        .isEqualTo(arenaBytes);
                assertThat(InPlaceFilters.live())
                        .as("in-place filter objects open after the test")
                        .isEqualTo(inPlace);
            } finally {
                AbstractReferenceCounted.disableReferenceTracing();
            }
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NAMESPACE).put(Baseline.class, Baseline.take());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Baseline before = context.getStore(NAMESPACE).remove(Baseline.class, Baseline.class);
        if (before != null) { // null: beforeEach did not run
            before.check();
        }
    }

    /** Registered on a class, the hook reaches its properties (jqwik's default would keep it to the class itself). */
    @Override
    public PropagationMode propagateTo() {
        return PropagationMode.ALL_DESCENDANTS;
    }

    @Override
    public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
        Baseline before = Baseline.take();
        PropertyExecutionResult result;
        try {
            result = property.execute();
        } catch (RuntimeException | Error e) {
            AbstractReferenceCounted.disableReferenceTracing();
            throw e;
        }
        try {
            before.check();
        } catch (AssertionError leak) {
            if (result.status() == PropertyExecutionResult.Status.SUCCESSFUL) {
                return result.mapToFailed(leak);
            }
            result.throwable().ifPresent(t -> t.addSuppressed(leak));
        }
        return result;
    }
}

package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.table.TableReader;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test that leaves a table reader alive: {@link TableReader#liveTables()} must be back where it was before
 * the test once the test and its {@code @AfterEach} methods (which JUnit runs before this callback) have closed what
 * they opened. Use with {@code @ExtendWith(NoTableLeak.class)}; {@link #before} gives the count for checks inside a
 * test.
 */
final class NoTableLeak implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(NoTableLeak.class);
    private static final ThreadLocal<Long> BEFORE = new ThreadLocal<>();

    @Override
    public void beforeEach(ExtensionContext context) {
        long live = TableReader.liveTables();
        context.getStore(NS).put("before", live);
        BEFORE.set(live);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        long before = context.getStore(NS).get("before", Long.class);
        BEFORE.remove();
        assertThat(TableReader.liveTables()).as("table readers alive").isEqualTo(before);
    }

    /** The live table readers when the running test (on this thread) began. */
    static long before() {
        Long b = BEFORE.get();
        if (b == null) {
            throw new IllegalStateException("not inside a test extended with NoTableLeak");
        }
        return b;
    }
}

package io.bloomkv.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.inspect.OpenResources;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.processor.StateStore;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The stores a test opened, closed after each test, which then checks that no table and no off-heap filter byte was
 * left open (every store's resources released exactly once). A store the test closes itself (a simulated crash, a
 * reopen) is {@link #remove}d first. A test whose stores are all closed by what opened them (a TopologyTestDriver, a
 * {@code finally}) adds none and gets the check alone. Register with {@code @RegisterExtension}.
 */
final class OpenStores implements AfterEachCallback {
    private final List<StateStore> stores = new ArrayList<>();

    void add(StateStore store) {
        stores.add(store);
    }

    void remove(StateStore store) {
        stores.remove(store);
    }

    /** The store opened last. */
    StateStore last() {
        return stores.get(stores.size() - 1);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        try {
            stores.forEach(StateStore::close);
        } finally {
            stores.clear();
        }
        assertThat(OpenResources.tables()).as("tables left open").isZero();
        assertThat(OpenResources.filterBytes()).as("off-heap filter bytes left").isZero();
    }
}

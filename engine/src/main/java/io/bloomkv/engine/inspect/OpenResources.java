package io.bloomkv.engine.inspect;

import io.bloomkv.engine.internal.table.TableReader;

/**
 * What the engine holds open in this JVM, across every {@code Db}, {@link TableDump} and {@link TableProbe}: tables
 * and the off-heap filter bytes they keep. Both return to their earlier values once everything opened since has
 * been closed, which is how tests check that nothing leaks (an application can export them as gauges).
 */
public final class OpenResources {
    private OpenResources() {}

    /** Tables opened and not yet released. */
    public static long tables() {
        return TableReader.liveTables();
    }

    /** Off-heap filter bytes held by tables not yet released. */
    public static long filterBytes() {
        return TableReader.liveFilterBytes();
    }
}

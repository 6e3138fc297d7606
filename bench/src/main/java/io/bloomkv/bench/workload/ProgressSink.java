package io.bloomkv.bench.workload;

/** Where the runner reports progress. Thread-safe. */
public interface ProgressSink extends AutoCloseable {
    ProgressSink NONE = new ProgressSink() {
        @Override
        public void task(String name) {}

        @Override
        public void step(long ops) {}

        @Override
        public void close() {}
    };

    /** Names what runs now (engine, workload, phase). */
    void task(String name);

    /** {@code ops} more operations done. */
    void step(long ops);

    @Override
    void close();
}

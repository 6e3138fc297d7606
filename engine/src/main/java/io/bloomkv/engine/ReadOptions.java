package io.bloomkv.engine;

/** Options of one read ({@link Db#get(byte[], ReadOptions)}, {@link Db#iterator(ReadOptions)}). */
public final class ReadOptions {
    private Snapshot snapshot;

    private ReadOptions() {}

    /** Read the latest state. */
    public static ReadOptions defaults() {
        return new ReadOptions();
    }

    /** Read at {@code snapshot} (null = the latest state). */
    public ReadOptions snapshot(Snapshot snapshot) {
        this.snapshot = snapshot;
        return this;
    }

    public Snapshot snapshot() {
        return snapshot;
    }
}

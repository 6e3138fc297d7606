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

    private boolean prefixSameAsStart;

    /**
     * RocksDB's {@code prefix_same_as_start}, for a database with {@link Options#prefixLength} p > 0: an iterator's
     * {@code seek(target)} with a target of at least p bytes only visits keys starting with the target's first p
     * bytes (it becomes invalid past them) and skips every table whose prefix filter says none is there, without
     * reading it. Targets shorter than p, {@code seekToFirst}, and databases without a prefix length iterate over
     * everything, as without this option. Default false.
     */
    public ReadOptions prefixSameAsStart(boolean sameAsStart) {
        this.prefixSameAsStart = sameAsStart;
        return this;
    }

    public boolean prefixSameAsStart() {
        return prefixSameAsStart;
    }
}

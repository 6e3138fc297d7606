package io.bloomkv.bench.engine;

/** One column of the comparison: an engine with its filters on or off. */
public record EngineSpec(String engine, boolean filters) {

    /** "bloomkv", "bloomkv-nofilter", "rocksdb", "rocksdb-nofilter". */
    public String label() {
        return filters ? engine : engine + "-nofilter";
    }

    @Override
    public String toString() {
        return label();
    }
}

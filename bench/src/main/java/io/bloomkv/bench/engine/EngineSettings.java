package io.bloomkv.bench.engine;

/**
 * What both engines are configured with (same values on both). With {@code ownDefaults} each engine
 * runs on its own defaults instead, and only {@code filters}, {@code bitsPerKey} and {@code sync} apply.
 */
public record EngineSettings(boolean filters, double bitsPerKey, String filterKind, int blockSize, long cacheSize,
                             long writeBufferSize, boolean sync, boolean ownDefaults) {

    /** Matched settings (the same values on both engines). */
    public EngineSettings(boolean filters, double bitsPerKey, String filterKind, int blockSize, long cacheSize,
                          long writeBufferSize, boolean sync) {
        this(filters, bitsPerKey, filterKind, blockSize, cacheSize, writeBufferSize, sync, false);
    }
}

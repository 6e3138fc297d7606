package io.bloomkv.bench.engine;

/**
 * What both engines are configured with (same values on both). With {@code ownDefaults} each engine
 * runs on its own defaults instead (each its own compression, page-cache reads), and only
 * {@code filters}, {@code bitsPerKey} and {@code sync} apply.
 *
 * @param compression  block compression of every level, bottommost included: "none", "lz4" or "zstd"
 * @param directReads  table reads bypass the OS page cache (O_DIRECT) on both engines
 * @param ownDefaults  each engine on its own defaults (bench --defaults)
 */
public record EngineSettings(boolean filters, double bitsPerKey, String filterKind, int blockSize, long cacheSize,
                             long writeBufferSize, boolean sync, String compression, boolean directReads,
                             boolean ownDefaults) {

    /** Matched settings. */
    public EngineSettings(boolean filters, double bitsPerKey, String filterKind, int blockSize, long cacheSize,
                          long writeBufferSize, boolean sync, String compression, boolean directReads) {
        this(filters, bitsPerKey, filterKind, blockSize, cacheSize, writeBufferSize, sync, compression, directReads, false);
    }

    /** Uncompressed tables read through the page cache. */
    public EngineSettings(boolean filters, double bitsPerKey, String filterKind, int blockSize, long cacheSize,
                          long writeBufferSize, boolean sync) {
        this(filters, bitsPerKey, filterKind, blockSize, cacheSize, writeBufferSize, sync, "none", false);
    }
}

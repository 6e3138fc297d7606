package io.bloomkv.bench.engine;

/**
 * What both engines are configured with (same values on both).
 *
 * @param compression  block compression of every level, bottommost included: "none", "lz4" or "zstd"
 * @param directReads  table reads bypass the OS page cache (O_DIRECT) on both engines
 */
public record EngineSettings(boolean filters, double bitsPerKey, String filterKind, int blockSize, long cacheSize,
                             long writeBufferSize, boolean sync, String compression, boolean directReads) {

    /** Uncompressed tables read through the page cache. */
    public EngineSettings(boolean filters, double bitsPerKey, String filterKind, int blockSize, long cacheSize,
                          long writeBufferSize, boolean sync) {
        this(filters, bitsPerKey, filterKind, blockSize, cacheSize, writeBufferSize, sync, "none", false);
    }
}

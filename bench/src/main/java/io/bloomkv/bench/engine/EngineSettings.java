package io.bloomkv.bench.engine;

/** What both engines are configured with (same values on both). */
public record EngineSettings(boolean filters, double bitsPerKey, String filterKind, int blockSize, long cacheSize,
                             long writeBufferSize, boolean sync) {
}

package io.bloomkv.bench.engine;

/**
 * What both engines are configured with (same values on both, but {@code mmapReads}). With {@code ownDefaults} each engine
 * runs on its own defaults instead (each its own compression, page-cache reads), and only
 * {@code filters}, {@code bitsPerKey} and {@code sync} apply.
 *
 * @param compression  block compression of every level, bottommost included: "none", "lz4" or "zstd"
 * @param directReads  table reads bypass the OS page cache (O_DIRECT) on both engines
 * @param mmapReads    this engine's table reads copy out of memory mappings (bloomkv {@code useMmapReads}, RocksDB
 *                     {@code allow_mmap_reads}); false: {@code pread}. Off under {@code directReads}. The one value
 *                     that may differ between the engines of a run (bench {@code --mmap-reads=bloomkv}, {@link MmapReads})
 * @param ownDefaults  each engine on its own defaults (bench --defaults)
 * @param prefixLength a fixed-length prefix extractor of this many bytes on both engines (0 = none): bloomkv
 *                     {@code Options.prefixLength}, RocksDB {@code useFixedLengthPrefixExtractor}
 * @param rateLimit    bytes per second flushes and compactions may write on both engines (bloomkv
 *                     {@code Options.rateLimiter}, RocksDB {@code RateLimiter}); 0 = unlimited
 */
public record EngineSettings(
        boolean filters,
        double bitsPerKey,
        String filterKind,
        int blockSize,
        long cacheSize,
        long writeBufferSize,
        boolean sync,
        String compression,
        boolean directReads,
        boolean mmapReads,
        boolean ownDefaults,
        int prefixLength,
        long rateLimit,
        FilterBudgetSpec filterBudget) {

    public EngineSettings {
        filterBudget = filterBudget == null ? FilterBudgetSpec.NONE : filterBudget;
        if (prefixLength < 0) {
            throw new IllegalArgumentException("prefixLength must be >= 0, got " + prefixLength);
        }
        if (rateLimit < 0) {
            throw new IllegalArgumentException("rateLimit must be >= 0, got " + rateLimit);
        }
    }

    /** Without a rate limit. */
    public EngineSettings(
            boolean filters,
            double bitsPerKey,
            String filterKind,
            int blockSize,
            long cacheSize,
            long writeBufferSize,
            boolean sync,
            String compression,
            boolean directReads,
            boolean mmapReads,
            boolean ownDefaults,
            int prefixLength) {
        this(
                filters,
                bitsPerKey,
                filterKind,
                blockSize,
                cacheSize,
                writeBufferSize,
                sync,
                compression,
                directReads,
                mmapReads,
                ownDefaults,
                prefixLength,
                0,
                FilterBudgetSpec.NONE);
    }

    /** The same settings with bloomkv's filter memory budget (RocksDB ignores it). */
    public EngineSettings withFilterBudget(FilterBudgetSpec budget) {
        return new EngineSettings(
                filters,
                bitsPerKey,
                filterKind,
                blockSize,
                cacheSize,
                writeBufferSize,
                sync,
                compression,
                directReads,
                mmapReads,
                ownDefaults,
                prefixLength,
                rateLimit,
                budget);
    }

    /** The same settings with flushes and compactions limited to {@code bytesPerSecond} (0 = unlimited). */
    public EngineSettings withRateLimit(long bytesPerSecond) {
        return new EngineSettings(
                filters,
                bitsPerKey,
                filterKind,
                blockSize,
                cacheSize,
                writeBufferSize,
                sync,
                compression,
                directReads,
                mmapReads,
                ownDefaults,
                prefixLength,
                bytesPerSecond,
                filterBudget);
    }

    /** Without a prefix extractor. */
    public EngineSettings(
            boolean filters,
            double bitsPerKey,
            String filterKind,
            int blockSize,
            long cacheSize,
            long writeBufferSize,
            boolean sync,
            String compression,
            boolean directReads,
            boolean mmapReads,
            boolean ownDefaults) {
        this(
                filters,
                bitsPerKey,
                filterKind,
                blockSize,
                cacheSize,
                writeBufferSize,
                sync,
                compression,
                directReads,
                mmapReads,
                ownDefaults,
                0);
    }

    /** The same settings with a fixed-length prefix extractor of {@code bytes} (0 = none). */
    public EngineSettings withPrefixLength(int bytes) {
        return new EngineSettings(
                filters,
                bitsPerKey,
                filterKind,
                blockSize,
                cacheSize,
                writeBufferSize,
                sync,
                compression,
                directReads,
                mmapReads,
                ownDefaults,
                bytes,
                rateLimit,
                filterBudget);
    }

    /** Matched settings. */
    public EngineSettings(
            boolean filters,
            double bitsPerKey,
            String filterKind,
            int blockSize,
            long cacheSize,
            long writeBufferSize,
            boolean sync,
            String compression,
            boolean directReads) {
        this(
                filters,
                bitsPerKey,
                filterKind,
                blockSize,
                cacheSize,
                writeBufferSize,
                sync,
                compression,
                directReads,
                false,
                false);
    }

    /** Uncompressed tables read through the page cache with pread. */
    public EngineSettings(
            boolean filters,
            double bitsPerKey,
            String filterKind,
            int blockSize,
            long cacheSize,
            long writeBufferSize,
            boolean sync) {
        this(filters, bitsPerKey, filterKind, blockSize, cacheSize, writeBufferSize, sync, "none", false);
    }
}

package io.bloomkv.kafka;

import io.bloomkv.engine.SharedBlockCache;
import io.bloomkv.engine.WriteBufferManager;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The application configs (the {@code StreamsConfig} properties) the bloomkv stores read at init.
 *
 * <pre>{@code
 * props.put(BloomKvConfig.BLOCK_CACHE_BYTES_CONFIG, 256L << 20); // one 256 MiB block cache for every bloomkv store
 * props.put(BloomKvConfig.WRITE_BUFFER_BYTES_CONFIG, 64L << 20); // one 64 MiB memtable budget for every bloomkv store
 * }</pre>
 */
public final class BloomKvConfig {
    /**
     * Bytes of one block cache shared by every bloomkv store of the application (all its tasks and
     * threads in this JVM), instead of one cache per store: the memory bound does not grow with the
     * number of partitions. Unset: each store has the block cache of its {@code Options}
     * ({@code blockCacheSize}, 32 MiB by default). A store opened with {@code Options.blockCache(...)}
     * keeps that cache. With the shared cache the stores read their tables with {@code pread}
     * ({@code Options.useMmapReads(false)}), so that their blocks go through it: mapped tables of uncompressed
     * blocks skip the block cache.
     */
    public static final String BLOCK_CACHE_BYTES_CONFIG = "bloomkv.block.cache.bytes";

    /**
     * Bytes of one memtable budget shared by every bloomkv store of the application in this JVM (the
     * {@code WriteBufferManager}, see {@link WriteBufferManager}): every database of every store (one per store and
     * partition; the segments of a window or session store are key ranges of its one database) charges its memtables to it, and a write freezes its database's
     * memtable early when the budget is exceeded, so memtable memory does not grow with partitions times segments.
     * Unset: each store's memtable (a window or session store has one for all its segments) is bounded by its
     * {@code Options.writeBufferSize}. A store opened with
     * {@code Options.writeBufferManager(...)} keeps that budget.
     */
    public static final String WRITE_BUFFER_BYTES_CONFIG = "bloomkv.write.buffer.bytes";

    private static final Map<String, SharedBlockCache> CACHES = new ConcurrentHashMap<>();
    private static final Map<String, WriteBufferManager> WRITE_BUFFERS = new ConcurrentHashMap<>();

    private BloomKvConfig() {}

    /**
     * The shared block cache of {@code applicationId} for the configured size, or null when
     * {@link #BLOCK_CACHE_BYTES_CONFIG} is not set. One cache per (application, size) in this JVM.
     */
    static SharedBlockCache sharedBlockCache(String applicationId, Map<String, Object> appConfigs) {
        long bytes = bytesConfig(appConfigs, BLOCK_CACHE_BYTES_CONFIG);
        if (bytes < 0) {
            return null;
        }
        return CACHES.computeIfAbsent(applicationId + "/" + bytes, k -> new SharedBlockCache(bytes));
    }

    /**
     * The shared write-buffer budget of {@code applicationId} for the configured size, or null when
     * {@link #WRITE_BUFFER_BYTES_CONFIG} is not set. One budget per (application, size) in this JVM.
     */
    static WriteBufferManager sharedWriteBufferManager(String applicationId, Map<String, Object> appConfigs) {
        long bytes = bytesConfig(appConfigs, WRITE_BUFFER_BYTES_CONFIG);
        if (bytes < 0) {
            return null;
        }
        return WRITE_BUFFERS.computeIfAbsent(applicationId + "/" + bytes, k -> new WriteBufferManager(bytes));
    }

    /** The positive byte count of {@code name}, or -1 when unset. */
    private static long bytesConfig(Map<String, Object> appConfigs, String name) {
        Object v = appConfigs.get(name);
        if (v == null) {
            return -1;
        }
        long bytes;
        try {
            bytes = v instanceof Number n
                    ? n.longValue()
                    : Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            throw new org.apache.kafka.common.config.ConfigException(name, v, "not a number of bytes");
        }
        if (bytes <= 0) {
            throw new org.apache.kafka.common.config.ConfigException(name, v, "must be > 0");
        }
        return bytes;
    }
}

package io.bloomkv.kafka;

import io.bloomkv.engine.SharedBlockCache;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The application configs (the {@code StreamsConfig} properties) the bloomkv stores read at init.
 *
 * <pre>{@code
 * props.put(BloomKvConfig.BLOCK_CACHE_BYTES_CONFIG, 256L << 20); // one 256 MiB block cache for every bloomkv store
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

    private static final Map<String, SharedBlockCache> CACHES = new ConcurrentHashMap<>();

    private BloomKvConfig() {}

    /**
     * The shared block cache of {@code applicationId} for the configured size, or null when
     * {@link #BLOCK_CACHE_BYTES_CONFIG} is not set. One cache per (application, size) in this JVM.
     */
    static SharedBlockCache sharedBlockCache(String applicationId, Map<String, Object> appConfigs) {
        Object v = appConfigs.get(BLOCK_CACHE_BYTES_CONFIG);
        if (v == null) {
            return null;
        }
        long bytes;
        try {
            bytes = v instanceof Number n ? n.longValue() : Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            throw new org.apache.kafka.common.config.ConfigException(BLOCK_CACHE_BYTES_CONFIG, v, "not a number of bytes");
        }
        if (bytes <= 0) {
            throw new org.apache.kafka.common.config.ConfigException(BLOCK_CACHE_BYTES_CONFIG, v, "must be > 0");
        }
        return CACHES.computeIfAbsent(applicationId + "/" + bytes, k -> new SharedBlockCache(bytes));
    }
}

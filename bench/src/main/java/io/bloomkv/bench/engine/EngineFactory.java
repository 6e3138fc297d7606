package io.bloomkv.bench.engine;

import io.bloomkv.bench.BenchConfig;
import java.io.IOException;
import java.nio.file.Path;

/** Opens the engine of an {@link EngineSpec} with a run's settings. */
public final class EngineFactory {
    private EngineFactory() {}

    public static EngineSettings settings(EngineSpec spec, BenchConfig cfg) {
        return new EngineSettings(
                        spec.filters(),
                        cfg.bitsPerKey(),
                        cfg.filterKind(),
                        cfg.blockSize(),
                        cfg.cacheSize(),
                        cfg.writeBufferSize(),
                        cfg.sync(),
                        cfg.compression(),
                        cfg.direct(),
                        cfg.mmapReads().maps(spec.engine()),
                        cfg.ownDefaults(),
                        0)
                .withRateLimit(cfg.rateLimit())
                .withFilterBudget(FilterBudgetSpec.parse(cfg.filterBudget()));
    }

    /** Opens (creating) a fresh database of {@code spec.engine()} in {@code dir}. */
    public static BenchEngine open(EngineSpec spec, Path dir, BenchConfig cfg) throws IOException {
        return open(spec.engine(), dir, settings(spec, cfg));
    }

    public static BenchEngine open(String engine, Path dir, EngineSettings settings) throws IOException {
        return switch (engine) {
            case "bloomkv" -> BloomKvEngine.open(dir, settings);
            case "rocksdb" -> RocksDbEngine.open(dir, settings);
            default -> throw new IllegalArgumentException("unknown engine '" + engine + "'");
        };
    }
}

package io.bloomkv.bench.engine;

import java.util.Locale;

/**
 * The bench's {@code --mmap-reads}: which engines read their tables through memory mappings (bloomkv
 * {@code Options.useMmapReads}, RocksDB {@code allow_mmap_reads}); the others read with {@code pread}. Per engine so that
 * one run can compare each engine in its own read mode: bloomkv's default is mapped, RocksDB's is {@code pread} (and its
 * partitioned filters are loaded through its block cache either way, so mapping buys it little under a filter budget).
 */
public enum MmapReads {
    /** {@code pread} on both engines (the bench's default, RocksDB's default). */
    NONE("none"),
    /** bloomkv mapped, RocksDB {@code pread}: each engine's own default read mode. */
    BLOOMKV("bloomkv"),
    /** RocksDB mapped, bloomkv {@code pread}. */
    ROCKSDB("rocksdb"),
    /** Both engines mapped (plain {@code --mmap-reads}). */
    BOTH("both");

    private final String flagName;

    MmapReads(String flagName) {
        this.flagName = flagName;
    }

    /** The value as {@code --mmap-reads=} takes it. */
    public String flagName() {
        return flagName;
    }

    /** Whether {@code engine} ("bloomkv" or "rocksdb") reads its tables through mappings. */
    public boolean maps(String engine) {
        return switch (this) {
            case NONE -> false;
            case BOTH -> true;
            case BLOOMKV -> "bloomkv".equals(engine);
            case ROCKSDB -> "rocksdb".equals(engine);
        };
    }

    /** Parses bloomkv, rocksdb, both or none (case and surrounding blanks ignored). */
    public static MmapReads parse(String s) {
        String t = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
        for (MmapReads m : values()) {
            if (m.flagName.equals(t)) {
                return m;
            }
        }
        throw new IllegalArgumentException(
                "--mmap-reads: expected bloomkv, rocksdb, both or none (plain --mmap-reads = both), got '" + s + "'");
    }

    @Override
    public String toString() {
        return flagName;
    }
}

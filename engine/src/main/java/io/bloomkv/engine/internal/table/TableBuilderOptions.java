package io.bloomkv.engine.internal.table;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Compression;
import java.util.Objects;

/**
 * How a {@link TableWriter} lays out a table. Immutable; the fluent setters return a modified copy:
 * {@code TableBuilderOptions.defaults().blockSize(8192).bitsPerKey(0)}.
 */
public final class TableBuilderOptions {
    private final int blockSize;
    private final int restartInterval;
    private final FilterKind filterKind;
    private final double bitsPerKey;
    private final Compression compression;
    private final int prefixLength;
    /** Bits per key of the table's range filter (bloom RangeFilter); 0 = none. Set after construction by its copy-setter. */
    private double rangeFilterBitsPerKey;
    /** Target bytes of one point-filter partition; 0 = a whole filter. Set by its copy-setter, carried by the others. */
    private int filterPartitionBytes;
    /** Seconds since the epoch the table is written at (property bloomkv.creation.time); 0 = not recorded. */
    private long creationTime;

    private TableBuilderOptions(int blockSize, int restartInterval, FilterKind filterKind, double bitsPerKey) {
        this(blockSize, restartInterval, filterKind, bitsPerKey, Compression.NONE, 0);
    }

    private TableBuilderOptions(
            int blockSize,
            int restartInterval,
            FilterKind filterKind,
            double bitsPerKey,
            Compression compression,
            int prefixLength) {
        if (blockSize < 64) {
            throw new IllegalArgumentException("block size must be >= 64 bytes: " + blockSize);
        }
        if (restartInterval < 1) {
            throw new IllegalArgumentException("restart interval must be >= 1: " + restartInterval);
        }
        if (!(bitsPerKey >= 0) || Double.isInfinite(bitsPerKey)) {
            throw new IllegalArgumentException("bits per key must be finite and >= 0: " + bitsPerKey);
        }
        this.blockSize = blockSize;
        this.restartInterval = restartInterval;
        this.filterKind = Objects.requireNonNull(filterKind, "filterKind");
        this.bitsPerKey = bitsPerKey;
        this.compression = Objects.requireNonNull(compression, "compression");
        if (prefixLength < 0) {
            throw new IllegalArgumentException("prefix length must be >= 0: " + prefixLength);
        }
        this.prefixLength = prefixLength;
    }

    /** 4 KiB blocks, a restart point every 16 keys, BLOCKED filters at 10 bits per key, no compression. */
    public static TableBuilderOptions defaults() {
        return new TableBuilderOptions(4096, 16, FilterKind.BLOCKED, 10);
    }

    /** Target size of a data block before its trailer (a block ends after the entry that reaches it). */
    public int blockSize() {
        return blockSize;
    }

    public TableBuilderOptions blockSize(int bytes) {
        return carry(
                new TableBuilderOptions(bytes, restartInterval, filterKind, bitsPerKey, compression, prefixLength));
    }

    /** Keys between restart points in data blocks. */
    public int restartInterval() {
        return restartInterval;
    }

    public TableBuilderOptions restartInterval(int keys) {
        return carry(new TableBuilderOptions(blockSize, keys, filterKind, bitsPerKey, compression, prefixLength));
    }

    public FilterKind filterKind() {
        return filterKind;
    }

    public TableBuilderOptions filterKind(FilterKind kind) {
        return carry(new TableBuilderOptions(blockSize, restartInterval, kind, bitsPerKey, compression, prefixLength));
    }

    /** Filter bits per distinct user key (counters per key for COUNTING); 0 = the table has no filter. */
    public double bitsPerKey() {
        return bitsPerKey;
    }

    public TableBuilderOptions bitsPerKey(double bits) {
        return carry(new TableBuilderOptions(blockSize, restartInterval, filterKind, bits, compression, prefixLength));
    }

    /**
     * How data and index blocks are compressed (a block is stored as-is when compression saves less
     * than 1/8 of it). Default {@link Compression#NONE}.
     */
    public Compression compression() {
        return compression;
    }

    public TableBuilderOptions compression(Compression c) {
        return carry(new TableBuilderOptions(blockSize, restartInterval, filterKind, bitsPerKey, c, prefixLength));
    }

    /**
     * Length of the fixed-length prefix whose hashes the filter also holds (0 = whole keys only): every user key of
     * at least this many bytes adds the hash of its first {@code prefixLength} bytes, so a prefix seek can ask the
     * filter whether any key with a prefix is in the table.
     */
    public int prefixLength() {
        return prefixLength;
    }

    public TableBuilderOptions prefixLength(int bytes) {
        return carry(new TableBuilderOptions(blockSize, restartInterval, filterKind, bitsPerKey, compression, bytes));
    }

    /** Bits per key of the table's range filter (engine/FORMAT.md "Range filter block"); 0 = none. */
    public double rangeFilterBitsPerKey() {
        return rangeFilterBitsPerKey;
    }

    public TableBuilderOptions rangeFilterBitsPerKey(double bits) {
        if (!(bits == 0 || (bits >= 2 && bits <= 60))) {
            throw new IllegalArgumentException("range filter bits per key must be 0 or in [2, 60]: " + bits);
        }
        TableBuilderOptions o = carry(
                new TableBuilderOptions(blockSize, restartInterval, filterKind, bitsPerKey, compression, prefixLength));
        o.rangeFilterBitsPerKey = bits;
        o.creationTime = creationTime;
        return o;
    }

    /** When the table is written, in seconds since the epoch (Options.periodicCompaction measures age from it). */
    public long creationTime() {
        return creationTime;
    }

    public TableBuilderOptions creationTime(long secondsSinceEpoch) {
        if (secondsSinceEpoch < 0) {
            throw new IllegalArgumentException("creation time must be >= 0: " + secondsSinceEpoch);
        }
        TableBuilderOptions o = carry(
                new TableBuilderOptions(blockSize, restartInterval, filterKind, bitsPerKey, compression, prefixLength));
        o.creationTime = secondsSinceEpoch;
        return o;
    }

    /**
     * Target bytes of one partition of the point filter (engine/FORMAT.md "Partitioned filter"): a table whose filter
     * would be larger than one partition is written with its filter cut into partitions of about this size plus a
     * top-level index; 0 (the default) writes a whole filter block.
     */
    public int filterPartitionBytes() {
        return filterPartitionBytes;
    }

    public TableBuilderOptions filterPartitionBytes(int bytes) {
        if (bytes != 0
                && (bytes < PartitionedFilter.MIN_PARTITION_BYTES || bytes > PartitionedFilter.MAX_PARTITION_BYTES)) {
            throw new IllegalArgumentException(
                    "filter partition bytes must be 0 or in [" + PartitionedFilter.MIN_PARTITION_BYTES + ", "
                            + PartitionedFilter.MAX_PARTITION_BYTES + "]: " + bytes);
        }
        TableBuilderOptions o = carry(
                new TableBuilderOptions(blockSize, restartInterval, filterKind, bitsPerKey, compression, prefixLength));
        o.filterPartitionBytes = bytes;
        return o;
    }

    private TableBuilderOptions carry(TableBuilderOptions o) {
        o.rangeFilterBitsPerKey = rangeFilterBitsPerKey;
        o.filterPartitionBytes = filterPartitionBytes;
        o.creationTime = creationTime;
        return o;
    }

    public boolean hasFilter() {
        return bitsPerKey > 0;
    }

    @Override
    public String toString() {
        return "TableBuilderOptions{blockSize=" + blockSize + ", restartInterval=" + restartInterval + ", filterKind="
                + filterKind + ", bitsPerKey=" + bitsPerKey + ", compression=" + compression + ", prefixLength="
                + prefixLength + ", rangeFilterBitsPerKey=" + rangeFilterBitsPerKey + ", filterPartitionBytes="
                + filterPartitionBytes + "}";
    }
}

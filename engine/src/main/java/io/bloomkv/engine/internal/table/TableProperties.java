package io.bloomkv.engine.internal.table;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.util.Coding;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Facts about one table, stored in its properties block (engine/FORMAT.md, "Properties block"),
 * plus {@link #fileSize()} and {@link #formatVersion()}, which come from the file and its footer.
 * Immutable; the key arrays are copied on access.
 */
public final class TableProperties {
    // Property names: on-disk constants (engine/FORMAT.md).
    static final String COMPRESSION = "bloomkv.compression";
    static final String DATA_BLOCKS = "bloomkv.data.blocks";
    static final String DATA_BLOCKS_COMPRESSED = "bloomkv.data.blocks.compressed";
    static final String DATA_UNCOMPRESSED_SIZE = "bloomkv.data.uncompressed.size";
    static final String DATA_SIZE = "bloomkv.data.size";
    static final String DELETIONS = "bloomkv.deletions";
    static final String ENTRIES = "bloomkv.entries";
    static final String FILTER_BITS_PER_KEY = "bloomkv.filter.bits.per.key";
    static final String FILTER_KEYS = "bloomkv.filter.keys";
    static final String FILTER_KIND = "bloomkv.filter.kind";
    /** Optional (absent = 0): the fixed prefix length whose prefixes the filter also holds. */
    static final String FILTER_PREFIX_LENGTH = "bloomkv.filter.prefix.length";
    /** Optional (absent = 0): distinct prefixes the filter holds besides the keys. */
    static final String FILTER_PREFIXES = "bloomkv.filter.prefixes";

    static final String FILTER_SIZE = "bloomkv.filter.size";
    /** Partitioned filter (engine/FORMAT.md "Partitioned filter"): the top-level index block and the partition count. */
    static final String FILTER_PARTITIONS = "bloomkv.filter.partitions";

    static final String FILTER_PARTITIONS_INDEX = "bloomkv.filter.partitions.index";
    /** Optional (absent: no range filter): the range filter block's handle and bits per key (engine/FORMAT.md). */
    static final String RANGE_FILTER_OFFSET = "bloomkv.range.filter.offset";

    static final String RANGE_FILTER_SIZE = "bloomkv.range.filter.size";
    static final String RANGE_FILTER_BITS_PER_KEY = "bloomkv.range.filter.bits.per.key";
    static final String INDEX_SIZE = "bloomkv.index.size";
    static final String LARGEST_KEY = "bloomkv.key.largest";
    /** Optional (absent = 0; written only when non-zero): range tombstones in the range-deletion block. */
    static final String RANGE_DELETIONS = "bloomkv.range.deletions";
    /** Optional (present exactly when {@link #RANGE_DELETIONS} is): the range-deletion block's handle. */
    static final String RANGE_DELETIONS_BLOCK = "bloomkv.range.deletions.block";
    /** Optional (absent = 0; written only when non-zero): merge operands among the entries. */
    static final String MERGE_OPERANDS = "bloomkv.merge.operands";

    static final String SMALLEST_KEY = "bloomkv.key.smallest";
    /** Optional (absent = 0, written only when non-zero): seconds since the epoch the table was written at. */
    static final String CREATION_TIME = "bloomkv.creation.time";

    static final String RAW_KEY_SIZE = "bloomkv.raw.key.size";
    static final String RAW_VALUE_SIZE = "bloomkv.raw.value.size";
    static final String LARGEST_SEQ = "bloomkv.seq.largest";
    static final String SMALLEST_SEQ = "bloomkv.seq.smallest";

    private final long entries;
    private final long deletions;
    private final long dataBlocks;
    private final long dataSize;
    private final long indexSize;
    private final long rawKeyBytes;
    private final long rawValueBytes;
    private final byte[] smallestKey;
    private final byte[] largestKey;
    private final long smallestSeq;
    private final long largestSeq;
    private final FilterKind filterKind;
    private final double bitsPerKey;
    private final int prefixLength;
    private final long filterPrefixes;
    private final long filterBytes;
    private final long filterKeys;
    private final long fileSize;
    private final int formatVersion;
    private final Compression compression;
    private final long dataUncompressedSize;
    private final long dataBlocksCompressed;
    private final BlockHandle rangeFilter;
    private final double rangeFilterBitsPerKey;
    private final BlockHandle filterPartitionsIndex;
    private final long filterPartitions;
    private final long mergeOperands;
    private final long creationTime;
    private final long rangeDeletions;
    private final BlockHandle rangeDeletionsBlock;

    private TableProperties(Builder b) {
        entries = b.entries;
        deletions = b.deletions;
        dataBlocks = b.dataBlocks;
        dataSize = b.dataSize;
        indexSize = b.indexSize;
        rawKeyBytes = b.rawKeyBytes;
        rawValueBytes = b.rawValueBytes;
        smallestKey = b.smallestKey.clone();
        largestKey = b.largestKey.clone();
        smallestSeq = b.smallestSeq;
        largestSeq = b.largestSeq;
        filterKind = b.filterKind;
        bitsPerKey = b.bitsPerKey;
        prefixLength = b.prefixLength;
        filterPrefixes = b.filterPrefixes;
        filterBytes = b.filterBytes;
        filterKeys = b.filterKeys;
        fileSize = b.fileSize;
        formatVersion = b.formatVersion;
        compression = b.compression;
        dataUncompressedSize = b.dataUncompressedSize;
        dataBlocksCompressed = b.dataBlocksCompressed;
        rangeFilter = b.rangeFilter;
        rangeFilterBitsPerKey = b.rangeFilterBitsPerKey;
        filterPartitionsIndex = b.filterPartitionsIndex;
        filterPartitions = b.filterPartitions;
        mergeOperands = b.mergeOperands;
        creationTime = b.creationTime;
        rangeDeletions = b.rangeDeletions;
        rangeDeletionsBlock = b.rangeDeletionsBlock;
    }

    /** The range filter block's handle, or null when the table has none. */
    public BlockHandle rangeFilter() {
        return rangeFilter;
    }

    /**
     * The top-level index block of the table's partitioned point filter (engine/FORMAT.md "Partitioned filter"), or
     * null when the filter is whole (the footer's filter block) or absent.
     */
    public BlockHandle filterPartitionsIndex() {
        return filterPartitionsIndex;
    }

    /** Partitions of the partitioned point filter (0 when the filter is whole or absent). */
    public long filterPartitions() {
        return filterPartitions;
    }

    /** Bits per key the range filter was built at (0 without one). */
    public double rangeFilterBitsPerKey() {
        return rangeFilterBitsPerKey;
    }

    /** Range tombstones the table holds (in its range-deletion block). */
    public long rangeDeletions() {
        return rangeDeletions;
    }

    /** The range-deletion block, or null when the table has none. */
    public BlockHandle rangeDeletionsBlock() {
        return rangeDeletionsBlock;
    }

    /**
     * Seconds since the epoch the table was written at (RocksDB's {@code file_creation_time}); 0 when not recorded
     * (tables written before the property, external files). Options.periodicCompaction measures a table's age from it.
     */
    public long creationTime() {
        return creationTime;
    }

    /** Merge operands among {@link #entries()} (a database holding any needs a merge operator). */
    public long mergeOperands() {
        return mergeOperands;
    }

    /** Entries (puts and tombstones). */
    public long entries() {
        return entries;
    }

    /** Tombstones among {@link #entries()}. */
    public long deletions() {
        return deletions;
    }

    public long dataBlocks() {
        return dataBlocks;
    }

    /** Bytes of all data blocks, trailers included. */
    public long dataSize() {
        return dataSize;
    }

    /** The compression the table's data and index blocks were written with ({@link Compression#NONE} for tables older than compression). */
    public Compression compression() {
        return compression;
    }

    /** Bytes of all data blocks before compression, trailers included (equals {@link #dataSize()} without compression). */
    public long dataUncompressedSize() {
        return dataUncompressedSize;
    }

    /** Data blocks stored compressed (the others did not shrink by 1/8 and are stored as-is). */
    public long dataBlocksCompressed() {
        return dataBlocksCompressed;
    }

    /** Bytes of the index block as stored (compressed or not), without trailer. */
    public long indexSize() {
        return indexSize;
    }

    /** Sum of the internal key lengths as added. */
    public long rawKeyBytes() {
        return rawKeyBytes;
    }

    public long rawValueBytes() {
        return rawValueBytes;
    }

    /** Smallest internal key. */
    public byte[] smallestKey() {
        return smallestKey.clone();
    }

    /** Largest internal key. */
    public byte[] largestKey() {
        return largestKey.clone();
    }

    public byte[] smallestUserKey() {
        return InternalKey.userKey(smallestKey);
    }

    public byte[] largestUserKey() {
        return InternalKey.userKey(largestKey);
    }

    public long smallestSeq() {
        return smallestSeq;
    }

    public long largestSeq() {
        return largestSeq;
    }

    /** The kind of the table's filter, or null when the table was written without one (or with a kind this build does not know). */
    public FilterKind filterKind() {
        return filterKind;
    }

    /** Bits per key the filter was built with (0 = no filter). */
    public double bitsPerKey() {
        return bitsPerKey;
    }

    /** The prefix length whose prefixes the filter holds besides the whole keys; 0 = whole keys only. */
    public int prefixLength() {
        return prefixLength;
    }

    /** Distinct prefixes the filter holds (0 without a prefix length). */
    public long filterPrefixes() {
        return filterPrefixes;
    }

    /** Bytes of the serialized filter block, without trailer (0 = no filter). */
    public long filterBytes() {
        return filterBytes;
    }

    /** Distinct user keys added to the filter. */
    public long filterKeys() {
        return filterKeys;
    }

    public long fileSize() {
        return fileSize;
    }

    public int formatVersion() {
        return formatVersion;
    }

    /** The table's key range contains {@code userKey} (by user key). */
    public boolean userKeyInRange(byte[] userKey) {
        return InternalKey.compareUserKey(smallestKey, userKey) <= 0
                && InternalKey.compareUserKey(largestKey, userKey) >= 0;
    }

    /** Every property as stored, by name (for dump tools); values are in their on-disk encoding. */
    Map<String, byte[]> encodeMap() {
        Map<String, byte[]> m = new TreeMap<>();
        m.put(COMPRESSION, varint(compression.code()));
        m.put(DATA_BLOCKS, varint(dataBlocks));
        m.put(DATA_BLOCKS_COMPRESSED, varint(dataBlocksCompressed));
        m.put(DATA_UNCOMPRESSED_SIZE, varint(dataUncompressedSize));
        m.put(DATA_SIZE, varint(dataSize));
        m.put(DELETIONS, varint(deletions));
        m.put(ENTRIES, varint(entries));
        m.put(FILTER_BITS_PER_KEY, fixed64(Double.doubleToLongBits(bitsPerKey)));
        m.put(FILTER_KEYS, varint(filterKeys));
        m.put(FILTER_KIND, varint(filterKind == null ? TableFormat.NO_FILTER_CODE : filterKind.code()));
        m.put(FILTER_SIZE, varint(filterBytes));
        if (prefixLength > 0) {
            m.put(FILTER_PREFIX_LENGTH, varint(prefixLength));
            m.put(FILTER_PREFIXES, varint(filterPrefixes));
        }
        if (rangeFilter != null) {
            m.put(RANGE_FILTER_OFFSET, varint(rangeFilter.offset()));
            m.put(RANGE_FILTER_SIZE, varint(rangeFilter.size()));
            m.put(RANGE_FILTER_BITS_PER_KEY, fixed64(Double.doubleToLongBits(rangeFilterBitsPerKey)));
        }
        if (filterPartitionsIndex != null) {
            m.put(FILTER_PARTITIONS, varint(filterPartitions));
            m.put(FILTER_PARTITIONS_INDEX, filterPartitionsIndex.encode());
        }
        m.put(INDEX_SIZE, varint(indexSize));
        m.put(LARGEST_KEY, largestKey.clone());
        if (mergeOperands > 0) {
            m.put(MERGE_OPERANDS, varint(mergeOperands));
        }
        if (creationTime > 0) {
            m.put(CREATION_TIME, varint(creationTime));
        }
        if (rangeDeletions > 0) {
            m.put(RANGE_DELETIONS, varint(rangeDeletions));
            m.put(RANGE_DELETIONS_BLOCK, rangeDeletionsBlock.encode());
        }
        m.put(SMALLEST_KEY, smallestKey.clone());
        m.put(RAW_KEY_SIZE, varint(rawKeyBytes));
        m.put(RAW_VALUE_SIZE, varint(rawValueBytes));
        m.put(LARGEST_SEQ, varint(largestSeq));
        m.put(SMALLEST_SEQ, varint(smallestSeq));
        return m;
    }

    /** The properties block contents (keys are the ASCII names, sorted). */
    byte[] encodeBlock() {
        BlockBuilder b = new BlockBuilder(TableFormat.META_RESTART_INTERVAL);
        for (Map.Entry<String, byte[]> e : encodeMap().entrySet()) {
            b.add(e.getKey().getBytes(StandardCharsets.US_ASCII), e.getValue());
        }
        return b.finish();
    }

    /** Reads every name/value pair of a properties block. */
    static Map<String, byte[]> readRaw(Block block) {
        Map<String, byte[]> raw = new LinkedHashMap<>();
        BlockIterator it = block.iterator(java.util.Arrays::compareUnsigned);
        for (it.seekToFirst(); it.valid(); it.next()) {
            raw.put(new String(it.key(), StandardCharsets.US_ASCII), it.value());
        }
        return Collections.unmodifiableMap(raw);
    }

    /** Decodes a properties block; a missing or malformed property is corruption at the block's offset. */
    static TableProperties decode(
            Map<String, byte[]> raw, long fileSize, int formatVersion, Path file, long blockOffset) {
        Decoder d = new Decoder(raw, file, blockOffset);
        Builder b = new Builder();
        b.entries = d.varint(ENTRIES);
        b.deletions = d.varint(DELETIONS);
        b.dataBlocks = d.varint(DATA_BLOCKS);
        b.dataSize = d.varint(DATA_SIZE);
        b.indexSize = d.varint(INDEX_SIZE);
        b.rawKeyBytes = d.varint(RAW_KEY_SIZE);
        b.rawValueBytes = d.varint(RAW_VALUE_SIZE);
        b.smallestKey = d.bytes(SMALLEST_KEY);
        b.largestKey = d.bytes(LARGEST_KEY);
        b.smallestSeq = d.varint(SMALLEST_SEQ);
        b.largestSeq = d.varint(LARGEST_SEQ);
        long code = d.varint(FILTER_KIND);
        b.filterKind = code == TableFormat.NO_FILTER_CODE ? null : kindOrNull((int) code);
        byte[] bits = d.bytes(FILTER_BITS_PER_KEY);
        if (bits.length != 8) {
            throw new CorruptionException("property " + FILTER_BITS_PER_KEY + " is not 8 bytes", file, blockOffset);
        }
        b.bitsPerKey = Double.longBitsToDouble(Coding.getFixed64(bits, 0));
        b.filterBytes = d.varint(FILTER_SIZE);
        b.filterKeys = d.varint(FILTER_KEYS);
        if (raw.containsKey(FILTER_PREFIX_LENGTH)) {
            long p = d.varint(FILTER_PREFIX_LENGTH);
            if (p > Integer.MAX_VALUE) {
                throw new CorruptionException(
                        "property " + FILTER_PREFIX_LENGTH + " is out of range: " + p, file, blockOffset);
            }
            b.prefixLength = (int) p;
            b.filterPrefixes = raw.containsKey(FILTER_PREFIXES) ? d.varint(FILTER_PREFIXES) : 0;
        }
        // Written since block compression; a table without them predates it and is uncompressed.
        long compressionCode = raw.containsKey(COMPRESSION) ? d.varint(COMPRESSION) : Compression.NONE.code();
        try {
            b.compression = Compression.fromCode((int) Math.min(compressionCode, Integer.MAX_VALUE));
        } catch (IllegalArgumentException e) {
            throw new CorruptionException(
                    "property " + COMPRESSION + " names unknown compression " + compressionCode, file, blockOffset);
        }
        b.dataUncompressedSize =
                raw.containsKey(DATA_UNCOMPRESSED_SIZE) ? d.varint(DATA_UNCOMPRESSED_SIZE) : b.dataSize;
        b.dataBlocksCompressed = raw.containsKey(DATA_BLOCKS_COMPRESSED) ? d.varint(DATA_BLOCKS_COMPRESSED) : 0;
        if (raw.containsKey(RANGE_FILTER_OFFSET) || raw.containsKey(RANGE_FILTER_SIZE)) {
            long off = d.varint(RANGE_FILTER_OFFSET);
            long size = d.varint(RANGE_FILTER_SIZE);
            byte[] rb = d.bytes(RANGE_FILTER_BITS_PER_KEY);
            if (rb.length != 8 || size == 0 || off > fileSize || size > fileSize - off) {
                throw new CorruptionException(
                        "range filter properties out of range: " + off + "+" + size, file, blockOffset);
            }
            b.rangeFilter = new BlockHandle(off, size);
            b.rangeFilterBitsPerKey = Double.longBitsToDouble(Coding.getFixed64(rb, 0));
        }
        if (raw.containsKey(FILTER_PARTITIONS) || raw.containsKey(FILTER_PARTITIONS_INDEX)) {
            long n = d.varint(FILTER_PARTITIONS);
            byte[] h = d.bytes(FILTER_PARTITIONS_INDEX);
            Coding.Reader r = new Coding.Reader(h, 0, h.length);
            long off = r.varint64();
            long size = r.varint64();
            if (!r.ok
                    || r.pos != h.length
                    || n <= 0
                    || n > Integer.MAX_VALUE
                    || off < 0
                    || size <= 0
                    || off > fileSize
                    || size > fileSize - off) {
                throw new CorruptionException(
                        "partitioned filter properties out of range: " + n + " partitions, index " + off + "+" + size,
                        file,
                        blockOffset);
            }
            b.filterPartitionsIndex = new BlockHandle(off, size);
            b.filterPartitions = n;
        }
        b.mergeOperands = raw.containsKey(MERGE_OPERANDS) ? d.varint(MERGE_OPERANDS) : 0;
        b.creationTime = raw.containsKey(CREATION_TIME) ? d.varint(CREATION_TIME) : 0;
        b.rangeDeletions = raw.containsKey(RANGE_DELETIONS) ? d.varint(RANGE_DELETIONS) : 0;
        if (b.rangeDeletions > 0) {
            byte[] h = d.bytes(RANGE_DELETIONS_BLOCK);
            Coding.Reader r = new Coding.Reader(h, 0, h.length);
            long off = r.varint64();
            long size = r.varint64();
            if (!r.ok || r.pos != h.length || off < 0 || size <= 0 || off > fileSize || size > fileSize) {
                throw new CorruptionException(
                        "property " + RANGE_DELETIONS_BLOCK + " is not a block handle", file, blockOffset);
            }
            b.rangeDeletionsBlock = new BlockHandle(off, size);
        }
        if (b.smallestKey.length < InternalKey.TRAILER_SIZE || b.largestKey.length < InternalKey.TRAILER_SIZE) {
            throw new CorruptionException("property key range holds a key shorter than 8 bytes", file, blockOffset);
        }
        b.fileSize = fileSize;
        b.formatVersion = formatVersion;
        return new TableProperties(b);
    }

    private static FilterKind kindOrNull(int code) {
        try {
            return FilterKind.fromCode(code);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static byte[] varint(long v) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(10);
        Coding.putVarint64(out, v);
        return out.toByteArray();
    }

    private static byte[] fixed64(long v) {
        byte[] b = new byte[8];
        Coding.putFixed64(b, 0, v);
        return b;
    }

    private static final class Decoder {
        private final Map<String, byte[]> raw;
        private final Path file;
        private final long offset;

        Decoder(Map<String, byte[]> raw, Path file, long offset) {
            this.raw = raw;
            this.file = file;
            this.offset = offset;
        }

        byte[] bytes(String name) {
            byte[] v = raw.get(name);
            if (v == null) {
                throw new CorruptionException("properties block lacks " + name, file, offset);
            }
            return v;
        }

        long varint(String name) {
            byte[] v = bytes(name);
            Coding.Reader r = new Coding.Reader(v, 0, v.length);
            long x = r.varint64();
            if (!r.ok || r.pos != v.length || x < 0) {
                throw new CorruptionException("property " + name + " is not a varint64", file, offset);
            }
            return x;
        }
    }

    @Override
    public String toString() {
        return "TableProperties{entries=" + entries + ", deletions=" + deletions + ", dataBlocks=" + dataBlocks
                + ", fileSize=" + fileSize + ", compression=" + compression + ", seq=[" + smallestSeq + ", "
                + largestSeq + "], filter=" + filterKind
                + "@" + bitsPerKey + " (" + filterBytes + " B, " + filterKeys + " keys)}";
    }

    /** Mutable accumulator used by {@link TableWriter} and the decoder. */
    static final class Builder {
        long entries;
        long deletions;
        long dataBlocks;
        long dataSize;
        long indexSize;
        long rawKeyBytes;
        long rawValueBytes;
        byte[] smallestKey;
        byte[] largestKey;
        long smallestSeq = Long.MAX_VALUE;
        long largestSeq = Long.MIN_VALUE;
        FilterKind filterKind;
        double bitsPerKey;
        long filterBytes;
        long filterKeys;
        int prefixLength;
        long filterPrefixes;
        long fileSize;
        int formatVersion = TableFormat.FORMAT_VERSION;
        Compression compression = Compression.NONE;
        long dataUncompressedSize;
        long dataBlocksCompressed;
        BlockHandle rangeFilter;
        double rangeFilterBitsPerKey;
        BlockHandle filterPartitionsIndex;
        long filterPartitions;
        long mergeOperands;
        long creationTime;
        long rangeDeletions;
        BlockHandle rangeDeletionsBlock;

        TableProperties build() {
            return new TableProperties(this);
        }
    }
}

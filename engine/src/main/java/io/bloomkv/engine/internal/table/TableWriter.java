package io.bloomkv.engine.internal.table;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.Filters;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.bloom.RangeFilter;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.util.Coding;
import io.bloomkv.engine.internal.util.Crc32c;
import java.io.Closeable;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Writes one table file (engine/FORMAT.md, "Table files"): data blocks, then the filter block, the
 * index block, the properties block and the footer. Entries must be added in strictly increasing
 * {@link InternalKey#COMPARATOR} order. The filter is built over the table's distinct USER keys at
 * {@link #finish()} by {@code Filters.build} (so static kinds such as RIBBON work), sized for the exact number of them ({@code expectedKeys} is only a hint for the
 * buffer of hashes). Not thread-safe.
 *
 * <p>{@link #close()} closes the file; a table closed before {@link #finish()} is incomplete and
 * the caller deletes it.
 */
public final class TableWriter implements Closeable {
    /** Distinct user keys one table's filter can hold (the largest Java array of their hashes). */
    static final int MAX_FILTER_KEYS = Integer.MAX_VALUE - 8;

    private final WritableFile file;
    private final TableBuilderOptions opts;
    private final BlockBuilder dataBlock;
    private final BlockBuilder indexBlock = new BlockBuilder(TableFormat.META_RESTART_INTERVAL);
    private final TableProperties.Builder props = new TableProperties.Builder();
    private final byte[] trailer = new byte[TableFormat.BLOCK_TRAILER_SIZE];
    /** Reused output buffer of the block compressor (grown on demand). */
    private byte[] compressed = new byte[0];

    private long[] userKeyHashes;
    private int hashCount;
    private long offset;
    private byte[] lastKey;
    /**
     * Whether {@link #lastKey} is a buffer of {@link #addLent}'s own, which the next {@code addLent} may refill: then
     * nothing but {@link #lastKey} and the data block's last key refers to it.
     */
    private boolean lastKeyRecyclable;
    /** A buffer of {@link #addLent}'s no longer referred to (the key before {@link #lastKey}), or null. */
    private byte[] spareKey;
    /**
     * Set once {@link #addLent} has been called: the keys it keeps are refilled, so the index separator and the
     * largest key are copied where they are kept.
     */
    private boolean lentKeys;
    /** The last prefix whose hash went into the filter (prefix filters only). */
    private byte[] lastPrefix;

    private boolean finished;
    private boolean closed;
    /** Collects the distinct user keys for the range filter, or null without one. */
    private RangeFilter.Builder rangeFilter;

    private final java.util.List<RangeTombstone> rangeTombstones = new java.util.ArrayList<>();

    public TableWriter(WritableFile file, TableBuilderOptions opts, long expectedKeys) {
        this.file = Objects.requireNonNull(file, "file");
        this.opts = Objects.requireNonNull(opts, "opts");
        this.dataBlock = new BlockBuilder(opts.restartInterval());
        // sized for the expected keys only when a filter will hold their hashes
        this.userKeyHashes = new long[opts.hasFilter() ? (int) Math.max(16, Math.min(expectedKeys, 1 << 20)) : 16];
        this.offset = file.size();
        props.creationTime = opts.creationTime();
        if (opts.rangeFilterBitsPerKey() > 0) {
            this.rangeFilter = RangeFilter.builder(opts.rangeFilterBitsPerKey());
        }
    }

    /**
     * Adds an entry.
     *
     * @throws IllegalArgumentException if {@code internalKey} is not a valid internal key or does not
     *     sort strictly after the previous one
     */
    public void add(byte[] internalKey, byte[] value) throws IOException {
        ensureWritable();
        checkLength(internalKey);
        addOwned(internalKey.clone(), value);
    }

    /**
     * {@link #add} without copying the key: the writer keeps {@code internalKey} (as the block's and the table's
     * last key, the index separator and the smallest key), so the caller must never modify it afterwards. For a
     * caller that builds a fresh array per key anyway (TableFileWriter: one array per key instead of three).
     */
    public void addOwned(byte[] internalKey, byte[] value) throws IOException {
        ensureWritable();
        checkLength(internalKey);
        long trailer = InternalKey.trailer(internalKey); // decoded once: the type and the sequence below
        // One comparison of the user keys decides both the order and whether the filter gets a new key; only equal
        // user keys compare their trailers (newer sequence first).
        boolean newUserKey = true;
        if (lastKey != null) {
            int c = InternalKey.compareUserKeys(lastKey, internalKey);
            newUserKey = c != 0;
            if (c > 0 || (c == 0 && Long.compareUnsigned(trailer, InternalKey.trailer(lastKey)) >= 0)) {
                throw new IllegalArgumentException(
                        "keys out of order: " + Arrays.toString(internalKey) + " does not sort after the previous key");
            }
        }
        append(internalKey, value, trailer, newUserKey, -1);
        lastKeyRecyclable = false; // addLent sets it again for its own buffers
    }

    /**
     * {@link #add} of a key and value the caller lends for the call only: it may refill both arrays afterwards (a
     * flush passes the memtable iterator's lent key and value). The key is copied into one of two buffers the writer
     * alternates between while keys keep their length, so a run of keys of one length allocates no array per entry;
     * the value is copied into the data block at once.
     */
    public void addLent(byte[] internalKey, byte[] value) throws IOException {
        ensureWritable();
        checkLength(internalKey);
        lentKeys = true;
        byte[] own =
                spareKey != null && spareKey.length == internalKey.length ? spareKey : new byte[internalKey.length];
        spareKey = null;
        System.arraycopy(internalKey, 0, own, 0, internalKey.length);
        byte[] previous = lastKey;
        boolean previousRecyclable = lastKeyRecyclable;
        boolean first = props.smallestKey == null;
        addOwned(own, value);
        // the table's smallest key keeps the first buffer: never refilled
        lastKeyRecyclable = !first;
        if (previousRecyclable) {
            spareKey = previous; // the data block now refers to own; the index got a copy of a block's last key
        }
    }

    /**
     * {@link #addOwned} for a caller that has already checked the order: the user key of {@code internalKey} is
     * strictly greater than the previous entry's (or this is the first entry), and {@code sharedPrefix} is the length
     * of the two user keys' common prefix when both are longer than it (so the internal keys differ at that byte too),
     * else -1. The entry's bytes are those {@link #addOwned} writes; the key is compared once instead of three times
     * (the caller's check, this writer's, the block's prefix compression). For TableFileWriter, whose keys are fresh
     * arrays, each a new user key.
     */
    public void addOwnedInOrder(byte[] internalKey, byte[] value, int sharedPrefix) throws IOException {
        ensureWritable();
        checkLength(internalKey);
        append(internalKey, value, InternalKey.trailer(internalKey), true, sharedPrefix);
        lastKeyRecyclable = false;
    }

    /** Adds an entry whose order is checked; {@code sharedPrefix} as {@link #addOwnedInOrder} says, or -1. */
    private void append(byte[] internalKey, byte[] value, long trailer, boolean newUserKey, int sharedPrefix)
            throws IOException {
        ValueType type = ValueType.fromCode((int) (trailer & 0xff));
        if (newUserKey && opts.hasFilter()) {
            if (hashCount == userKeyHashes.length) {
                if (hashCount >= MAX_FILTER_KEYS) {
                    throw new IllegalStateException("a table's filter holds at most " + MAX_FILTER_KEYS
                            + " distinct user keys; finish this table and start another: " + file.path());
                }
                userKeyHashes = Arrays.copyOf(userKeyHashes, (int) Math.min(2L * hashCount, MAX_FILTER_KEYS));
            }
            userKeyHashes[hashCount++] = Hashing.hash64(internalKey, 0, internalKey.length - InternalKey.TRAILER_SIZE);
            addPrefixHash(internalKey);
        }
        if (newUserKey) {
            props.filterKeys++;
            if (rangeFilter != null) {
                rangeFilter.add(internalKey, 0, internalKey.length - InternalKey.TRAILER_SIZE);
            }
        }
        if (props.smallestKey == null) {
            props.smallestKey = internalKey;
        }
        long seq = trailer >>> 8;
        props.smallestSeq = Math.min(props.smallestSeq, seq);
        props.largestSeq = Math.max(props.largestSeq, seq);
        props.entries++;
        if (type == ValueType.DELETE) {
            props.deletions++;
        } else if (type == ValueType.MERGE) {
            props.mergeOperands++;
        }
        props.rawKeyBytes += internalKey.length;
        props.rawValueBytes += value.length;
        lastKey = internalKey;
        dataBlock.add(internalKey, value, sharedPrefix);
        if (dataBlock.currentSizeEstimate() >= opts.blockSize()) {
            flushDataBlock();
        }
    }

    private static void checkLength(byte[] internalKey) {
        if (internalKey.length < InternalKey.TRAILER_SIZE) {
            throw new IllegalArgumentException("internal key shorter than " + InternalKey.TRAILER_SIZE + " bytes");
        }
    }

    /**
     * With a prefix length p, the first user key of each run of keys sharing their first p bytes also adds the hash of
     * those p bytes (keys are sorted, so equal prefixes are adjacent); keys shorter than p add none.
     */
    private void addPrefixHash(byte[] internalKey) {
        int p = opts.prefixLength();
        int userLength = internalKey.length - InternalKey.TRAILER_SIZE;
        if (p == 0 || userLength < p) {
            return;
        }
        if (lastPrefix != null && Arrays.equals(lastPrefix, 0, p, internalKey, 0, p)) {
            return;
        }
        lastPrefix = Arrays.copyOf(internalKey, p);
        if (hashCount == userKeyHashes.length) {
            if (hashCount >= MAX_FILTER_KEYS) {
                throw new IllegalStateException("a table's filter holds at most " + MAX_FILTER_KEYS
                        + " keys and prefixes; finish this table and start another: " + file.path());
            }
            userKeyHashes = Arrays.copyOf(userKeyHashes, (int) Math.min(2L * hashCount, MAX_FILTER_KEYS));
        }
        userKeyHashes[hashCount++] = Hashing.hash64(internalKey, 0, p);
        props.filterPrefixes++;
    }

    /**
     * Adds a range tombstone to the table's range-deletion block (engine/FORMAT.md, "Range deletion block"), any time
     * before {@link #finish()}; the table's key range and sequence range grow to include it. Tombstones of one table
     * must differ in (begin, sequence).
     */
    public void addRangeTombstone(RangeTombstone t) {
        ensureWritable();
        if (java.util.Arrays.compareUnsigned(t.begin(), t.end()) >= 0) {
            throw new IllegalArgumentException("empty range tombstone " + t);
        }
        rangeTombstones.add(t);
    }

    /** Range tombstones added so far. */
    public int rangeTombstoneCount() {
        return rangeTombstones.size();
    }

    /** Entries added so far. */
    public long entries() {
        return props.entries;
    }

    /** Bytes the file would have if finished now (without the filter). */
    public long estimatedFileSize() {
        return offset + dataBlock.currentSizeEstimate() + indexBlock.currentSizeEstimate() + TableFormat.FOOTER_SIZE;
    }

    /**
     * Writes the last data block, the filter, index and properties blocks and the footer, then flushes
     * and syncs the file (it stays open until {@link #close()}).
     *
     * @throws IllegalStateException if no entry was added, or when called twice
     */
    public TableProperties finish() throws IOException {
        ensureWritable();
        if (props.entries == 0 && rangeTombstones.isEmpty()) {
            throw new IllegalStateException("a table needs at least one entry or range tombstone");
        }
        finished = true;
        if (!dataBlock.isEmpty()) {
            flushDataBlock();
        }
        props.largestKey = lentKeys && lastKeyRecyclable ? lastKey.clone() : lastKey;
        // Range-deletion block (before the filter: the data area ends where the filter starts, see IndexSearch).
        if (!rangeTombstones.isEmpty()) {
            writeRangeDeletionBlock();
        }
        if (file instanceof WriteBehindFile behind) {
            // The data area is complete: the writer thread syncs it while this thread builds the filter, so the
            // sync at the end covers only the filter, index, properties and footer.
            behind.startSync();
        }
        // Filter block.
        BlockHandle filterHandle;
        int keysPerPartition = opts.filterPartitionBytes() > 0
                ? PartitionedFilter.keysPerPartition(opts.filterPartitionBytes(), opts.bitsPerKey())
                : Integer.MAX_VALUE;
        if (opts.hasFilter() && hashCount > keysPerPartition) {
            // Partitioned filter (engine/FORMAT.md "Partitioned filter"): the partitions where the filter block would
            // be, then the top-level index; the footer's filter handle is empty and points where the partitions start
            // (the data area still ends there), so a reader that does not know partitions reads the table unfiltered.
            long first = offset;
            PartitionedFilter.Built built = PartitionedFilter.build(
                    opts.filterKind(), userKeyHashes, hashCount, opts.bitsPerKey(), keysPerPartition);
            long[] sizes = new long[built.partitions().size()];
            long total = 0;
            for (int i = 0; i < sizes.length; i++) {
                byte[] part = built.partitions().get(i);
                sizes[i] = writeBlock(part, Compression.NONE).size();
                total += part.length;
            }
            props.filterPartitionsIndex =
                    writeBlock(PartitionedFilter.encodeIndex(first, built.lastHashes(), sizes), Compression.NONE);
            props.filterPartitions = sizes.length;
            filterHandle = new BlockHandle(first, 0);
            props.filterKind = opts.filterKind();
            props.bitsPerKey = opts.bitsPerKey();
            props.prefixLength = opts.prefixLength();
            props.filterBytes = total;
        } else if (opts.hasFilter() && hashCount > 0) {
            byte[] serialized;
            // Built from the buffer's first hashCount hashes in place: no copy of the hashes (80 MB at 10M keys).
            try (Filter f = Filters.build(opts.filterKind(), userKeyHashes, hashCount, opts.bitsPerKey())) {
                serialized = f.toByteArray();
            }
            filterHandle = writeBlock(serialized, Compression.NONE); // filter bits are random: never compressed
            props.filterKind = opts.filterKind();
            props.bitsPerKey = opts.bitsPerKey();
            props.prefixLength = opts.prefixLength();
            props.filterBytes = serialized.length;
        } else {
            filterHandle = new BlockHandle(offset, 0);
        }
        userKeyHashes = null;
        if (rangeFilter != null) {
            // Range filter block: after the filter block, before the index (engine/FORMAT.md "Range filter block").
            byte[] serialized;
            try (RangeFilter rf = rangeFilter.build()) {
                serialized = rf.toByteArray();
            }
            rangeFilter = null;
            props.rangeFilter = writeBlock(serialized, Compression.NONE);
            props.rangeFilterBitsPerKey = opts.rangeFilterBitsPerKey();
        }
        BlockHandle indexHandle = writeBlock(indexBlock.finish(), opts.compression());
        props.indexSize = indexHandle.size();
        props.compression = opts.compression();
        TableProperties withoutSize = props.build();
        BlockHandle propsHandle = writeBlock(withoutSize.encodeBlock(), Compression.NONE);
        byte[] footer = new Footer(filterHandle, indexHandle, propsHandle, TableFormat.FORMAT_VERSION).encode();
        file.append(footer);
        offset += footer.length;
        file.sync();
        props.fileSize = offset;
        return props.build();
    }

    /**
     * Writes the range tombstones as one block of internal keys {@code begin | (sequence << 8 | 0x0F)} to their
     * {@code end}s, in internal-key order, uncompressed, and widens the table's key and sequence ranges to cover them.
     */
    private void writeRangeDeletionBlock() throws IOException {
        List<RangeTombstone> ts = new java.util.ArrayList<>(rangeTombstones);
        ts.sort((a, b) -> {
            int c = java.util.Arrays.compareUnsigned(a.begin(), b.begin());
            return c != 0 ? c : Long.compare(b.sequence(), a.sequence());
        });
        BlockBuilder block = new BlockBuilder(TableFormat.META_RESTART_INTERVAL);
        byte[] previous = null;
        for (RangeTombstone t : ts) {
            byte[] key = rangeDeletionKey(t.begin(), t.sequence());
            if (previous != null && Arrays.equals(previous, key)) {
                throw new IllegalArgumentException("two range tombstones with the same begin and sequence: " + t);
            }
            previous = key;
            block.add(key, t.end());
            byte[] low = InternalKey.encode(t.begin(), t.sequence(), ValueType.DELETE);
            byte[] high = InternalKey.encode(t.largestCoveredBound(), 0, ValueType.DELETE);
            if (props.smallestKey == null || InternalKey.compare(low, props.smallestKey) < 0) {
                props.smallestKey = low;
            }
            if (props.largestKey == null || InternalKey.compare(high, props.largestKey) > 0) {
                props.largestKey = high;
            }
            props.smallestSeq = Math.min(props.smallestSeq, t.sequence());
            props.largestSeq = Math.max(props.largestSeq, t.sequence());
        }
        props.rangeDeletionsBlock = writeBlock(block.finish(), Compression.NONE);
        props.rangeDeletions = ts.size();
    }

    /** The internal key of a range tombstone in the range-deletion block: {@code begin | u64le(sequence << 8 | 0x0F)}. */
    static byte[] rangeDeletionKey(byte[] begin, long sequence) {
        byte[] key = Arrays.copyOf(begin, begin.length + InternalKey.TRAILER_SIZE);
        Coding.putFixed64(key, begin.length, (sequence << 8) | RangeTombstone.TYPE_CODE);
        return key;
    }

    /** Closes the file (flushing what was written; a table not {@link #finish() finished} is incomplete). Idempotent. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        finished = true;
        file.close();
    }

    private void flushDataBlock() throws IOException {
        int length = dataBlock.finishInPlace(); // written from the builder's buffer: no copy of every data block
        BlockHandle h = writeBlock(dataBlock.contents(), length, opts.compression());
        props.dataBlocks++;
        props.dataSize += h.size() + TableFormat.BLOCK_TRAILER_SIZE;
        props.dataUncompressedSize += length + TableFormat.BLOCK_TRAILER_SIZE;
        if (h.size() < length) {
            props.dataBlocksCompressed++;
        }
        // The separator is the block's last key: >= every key of the block, < every key of the next.
        byte[] separator = dataBlock.lastKey();
        // the index builder keeps a reference to its last key (BlockBuilder's contract: the next key is compressed
        // against it unless at a restart): never a buffer addLent refills
        indexBlock.add(lentKeys ? separator.clone() : separator, h.encode());
        dataBlock.reset();
    }

    /**
     * Writes a block, compressed with {@code c} when that saves at least 1/8 of its bytes (RocksDB's
     * rule; otherwise, or for {@link Compression#NONE}, as-is), followed by its trailer.
     */
    private BlockHandle writeBlock(byte[] contents, Compression c) throws IOException {
        return writeBlock(contents, contents.length, c);
    }

    /** {@link #writeBlock(byte[], Compression)} of the block {@code contents[0, length)}. */
    private BlockHandle writeBlock(byte[] contents, int length, Compression c) throws IOException {
        byte[] stored = contents;
        int storedLength = length;
        int type = TableFormat.NO_COMPRESSION;
        if (c != Compression.NONE && length <= TableFormat.MAX_UNCOMPRESSED_BLOCK_SIZE) {
            int max = BlockCodec.maxStoredLength(c, length);
            if (compressed.length < max) {
                compressed = new byte[max];
            }
            int n = BlockCodec.compress(c, contents, length, compressed);
            if (n < length - (length >>> TableFormat.MIN_SAVING_SHIFT)) {
                stored = compressed;
                storedLength = n;
                type = c.code();
            }
        }
        BlockHandle h = new BlockHandle(offset, storedLength);
        trailer[0] = (byte) type;
        Coding.putFixed32(trailer, 1, blockChecksum(stored, 0, storedLength, type));
        file.append(stored, 0, storedLength);
        file.append(trailer);
        offset += storedLength + TableFormat.BLOCK_TRAILER_SIZE;
        return h;
    }

    /** Masked CRC32C of the block contents followed by the compression type byte. */
    static int blockChecksum(byte[] b, int off, int len, int compressionType) {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(b, off, len);
        c.update(compressionType);
        return Crc32c.mask((int) c.getValue());
    }

    private void ensureWritable() {
        if (finished || closed) {
            throw new IllegalStateException("table writer is " + (closed ? "closed" : "finished") + ": " + file.path());
        }
    }
}

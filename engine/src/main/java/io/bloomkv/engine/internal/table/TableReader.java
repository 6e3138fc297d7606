package io.bloomkv.engine.internal.table;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Filters;
import io.bloomkv.bloom.RangeFilter;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import io.bloomkv.engine.internal.util.Coding;
import io.bloomkv.engine.internal.util.RefCount;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An open table file. {@link #open} reads the footer, the index and properties blocks (kept on the
 * heap) and the filter, which is copied into off-heap memory ({@link Filters#read}) and stays there
 * until the table's last reference is released.
 *
 * <p>Read path: one probe per table and read, {@link #get(PointRead)} (the engine's Version calls it once per
 * candidate table, as LevelDB's {@code Version::Get} calls {@code TableCache::Get}): the filter, and only if the
 * filter answers "might contain" the index and one data block (block cache, else a positional, mapped or
 * direct read). {@link #get(byte[], long, long)} checks the key range (from the properties) first. A filter
 * block that is corrupt or of an unknown format fails open: the table is read as if it had no filter
 * ({@link #filterBroken()}); a false negative is never possible.
 *
 * <p>Errors: damaged bytes in a data block, the index, the properties or the footer raise
 * {@link CorruptionException} naming the file and the block's offset, never a wrong value. I/O
 * errors during {@link #get} and iteration surface as {@link UncheckedIOException} (the methods
 * are unchecked so iterators can be merged); {@link #open} throws {@link IOException}.
 *
 * <p>Reference counting: the opener holds one reference; {@link #retain()}/{@link #release()} add
 * and drop others; {@link #close()} drops the opener's (once). At zero the filter's off-heap memory
 * and the file are released, exactly once, and the table's cached blocks are evicted. Any use of a
 * released table throws {@link IllegalStateException}. Thread-safe; {@link #get} pins the table for
 * its duration, so even a get racing with the last release either completes or throws
 * {@link IllegalStateException}, never touches freed memory.
 */
public final class TableReader implements AutoCloseable {

    /** An entry found by {@link #get}: a value ({@code PUT}) or a tombstone ({@code DELETE}, value null). */
    public record Entry(ValueType type, long sequence, byte[] value) {}

    /** One index entry: the separator key (>= the block's last key, < the next block's first) and the block. */
    public record IndexEntry(byte[] separator, BlockHandle handle) {}

    /**
     * A block that failed {@link #verifyChecksums()}. {@code kind} is "data", "filter", "index", "properties" or
     * "range deletion".
     */
    public record BadBlock(String kind, long offset, long size, String problem) {}

    private static final AtomicLong LIVE_TABLES = new AtomicLong();
    private static final AtomicLong LIVE_FILTER_BYTES = new AtomicLong();

    private final Path path;
    private final long fileNumber;
    private final ReadableFile file;
    private final long fileSize;
    private final Footer footer;
    private final Block index;
    /** Fast point search of {@link #index}, or null (then the block's own search is used). */
    private final IndexSearch indexSearch;

    private final TableProperties properties;
    private final Map<String, byte[]> rawProperties;
    private final Filter filter;
    private final long filterMemory;
    private final String filterProblem;
    /** The table's range filter (bloom RangeFilter, off-heap), or null: none written, or it failed to load. */
    private final RangeFilter rangeFilter;

    private final String rangeFilterProblem;
    /** Whether bounded positionings ask {@link #rangeFilter} (every reader shares it; see its class comment). */
    private final RangeProbeGate rangeProbeGate = new RangeProbeGate();

    private final BlockCache cache;
    private final ReadCounters counters;
    private final RefCount refs;
    private final AtomicBoolean openerReleased = new AtomicBoolean();
    /** The range-deletion block, fragmented (read at open and kept on the heap, as RocksDB caches it). */
    private final RangeTombstoneList rangeTombstones;
    /**
     * The filter memory budget this table's point filter is charged to, or null (then {@link #filter} is resident for
     * the table's life, as without a budget). With a budget {@link #filter} is null and the filter is either pinned
     * ({@link #pinned}, by the version's residency pass) or loaded on demand through the budget's cache.
     */
    private final FilterMemory budget;

    private final long budgetId;
    /** Bytes a budgeted filter is charged: its serialized size (the off-heap body plus a few header bytes). */
    private final long budgetCharge;
    /** Range filter bytes reserved in {@link #budget} as pinned memory at open. */
    private final long rangeReserved;

    private volatile FilterMemory.Loaded pinned;
    /**
     * The table's partitioned point filter (engine/FORMAT.md "Partitioned filter"), or null: the filter is whole (the
     * footer's filter block, {@link #filter} or the budget's whole-filter path above) or absent. When set, every probe
     * goes through it.
     */
    private final PartitionedFilterReader partitions;
    /** Why a budgeted filter could not be loaded (checksum, format), or null: the table is then read without it. */
    private volatile String budgetProblem;

    private TableReader(
            Path path,
            long fileNumber,
            ReadableFile file,
            long fileSize,
            Footer footer,
            Block index,
            TableProperties properties,
            Map<String, byte[]> rawProperties,
            Filter filter,
            String filterProblem,
            RangeFilter rangeFilter,
            String rangeFilterProblem,
            BlockCache cache,
            ReadCounters counters,
            RangeTombstoneList rangeTombstones,
            FilterMemory budget,
            long rangeReserved,
            PartitionedFilterReader partitions) {
        this.path = path;
        this.partitions = partitions;
        this.rangeTombstones = rangeTombstones;
        this.budget = budget;
        this.budgetId = budget == null ? 0 : FilterMemory.newTableId();
        this.budgetCharge =
                budget != null && footer.hasFilter() ? footer.filter().size() : 0;
        this.rangeReserved = rangeReserved;
        this.refs = new RefCount("table " + path);
        this.fileNumber = fileNumber;
        this.file = file;
        this.fileSize = fileSize;
        this.footer = footer;
        this.index = index;
        this.indexSearch = indexSearchOf(index, footer.filter().offset()); // data blocks precede the filter
        this.properties = properties;
        this.rawProperties = rawProperties;
        this.filter = filter;
        this.filterMemory = (filter == null ? 0 : filter.sizeInBytes())
                + (rangeFilter == null ? 0 : rangeFilter.sizeInBytes())
                + (partitions == null ? 0 : partitions.residentBytes());
        this.filterProblem = filterProblem;
        this.rangeFilter = rangeFilter;
        this.rangeFilterProblem = rangeFilterProblem;
        this.cache = cache;
        this.counters = counters;
        LIVE_TABLES.incrementAndGet();
        LIVE_FILTER_BYTES.addAndGet(filterMemory);
    }

    /**
     * Opens table {@code path}; {@code fileNumber} keys its blocks in {@code cacheOrNull}. Reads by
     * {@link #open} itself are not counted in {@code counters} (which may be null).
     *
     * @throws CorruptionException if the footer, index or properties block is damaged
     */
    public static TableReader open(
            FileSystem fs, Path path, long fileNumber, BlockCache cacheOrNull, ReadCounters counters)
            throws IOException {
        return open(fs, path, fileNumber, cacheOrNull, counters, TableReadMode.PREAD);
    }

    /** As the six-argument open without a filter memory budget (the filter stays resident). */
    public static TableReader open(
            FileSystem fs,
            Path path,
            long fileNumber,
            BlockCache cacheOrNull,
            ReadCounters counters,
            TableReadMode mode)
            throws IOException {
        return open(fs, path, fileNumber, cacheOrNull, counters, mode, null);
    }

    /**
     * As {@link #open(FileSystem, Path, long, BlockCache, ReadCounters)}, reading the file as {@code mode} says:
     * {@link TableReadMode#DIRECT} opens it with {@link FileSystem#newDirectReadableFile} (O_DIRECT: every block read
     * that misses the cache is a device read); {@link TableReadMode#MMAP} with {@link FileSystem#newMappedReadableFile},
     * or {@link FileSystem#newReadableFile} where the file cannot be mapped. A mapped table whose blocks are
     * uncompressed does not use {@code cacheOrNull}: its blocks are copied out of the mapping at each access. The
     * filter is copied into off-heap memory here in every mode, unless {@code budgetOrNull} is given: then the point
     * filter is not read here but pinned by {@link #pin} or loaded on demand through the budget's cache (its checksum
     * checked at each load), and the range filter is loaded only when its bytes fit the budget's pin allowance.
     */
    public static TableReader open(
            FileSystem fs,
            Path path,
            long fileNumber,
            BlockCache cacheOrNull,
            ReadCounters counters,
            TableReadMode mode,
            FilterMemory budgetOrNull)
            throws IOException {
        ReadableFile mappedFile = mode == TableReadMode.MMAP ? mappedOrNull(fs, path) : null;
        ReadableFile file = mappedFile != null
                ? mappedFile
                : mode == TableReadMode.DIRECT ? fs.newDirectReadableFile(path) : fs.newReadableFile(path);
        Filter filter = null;
        RangeFilter rangeFilter = null;
        long rangeReserved = 0;
        PartitionedFilterReader partitions = null;
        try {
            long size = file.size();
            if (size < TableFormat.FOOTER_SIZE) {
                throw new CorruptionException("file of " + size + " bytes is too short to be a table", path, 0);
            }
            byte[] fb = new byte[TableFormat.FOOTER_SIZE];
            file.readFully(size - TableFormat.FOOTER_SIZE, fb, 0, fb.length);
            Footer footer = Footer.decode(fb, path, size);
            Block index = readBlock(file, size, path, footer.index(), "index");
            Block propsBlock = readBlock(file, size, path, footer.properties(), "properties");
            Map<String, byte[]> raw = TableProperties.readRaw(propsBlock);
            TableProperties props = TableProperties.decode(
                    raw, size, footer.formatVersion(), path, footer.properties().offset());
            String problem = null;
            if (props.filterPartitionsIndex() != null && !footer.hasFilter()) {
                partitions = PartitionedFilterReader.open(file, size, path, props, budgetOrNull);
            }
            if (footer.hasFilter() && budgetOrNull == null) {
                try {
                    byte[] fbytes = readVerified(file, size, path, footer.filter(), "filter", false);
                    filter = Filters.read(fbytes, 0, (int) footer.filter().size());
                } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
                    // Errors are treated as potential matches: the table is read without a filter.
                    problem = e.getMessage();
                    filter = null;
                }
            }
            String rangeProblem = null;
            long rangeCharge =
                    props.rangeFilter() == null ? 0 : props.rangeFilter().size();
            boolean rangeFits = budgetOrNull == null || (rangeCharge > 0 && budgetOrNull.tryReservePin(rangeCharge));
            if (budgetOrNull != null && rangeFits) {
                rangeReserved = rangeCharge;
            }
            // Over a budget's pin allowance the range filter is not loaded: every range "might contain" (RocksDB does
            // not cache its prefix filters separately either; they share the one filter budget).
            if (props.rangeFilter() != null && rangeFits) {
                try {
                    byte[] rbytes = readVerified(file, size, path, props.rangeFilter(), "range filter", false);
                    rangeFilter = RangeFilter.read(
                            rbytes, 0, (int) props.rangeFilter().size());
                } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
                    // As the point filter: a range filter that cannot be loaded is absent, every range "might contain".
                    rangeProblem = e.getMessage();
                    rangeFilter = null;
                }
            }
            // A mapped table of uncompressed blocks skips the block cache: the mapping is its cache (LevelDB does not
            // cache blocks read from a mapping either). A block copied out of the page cache costs less than a cache
            // insert that evicts another (docs/operations.md, "Mapped reads").
            // A table written with compression whose data blocks all stayed raw (none shrank by 1/8: incompressible
            // values) reads as an uncompressed one: its blocks too are copied straight out of the mapping.
            BlockCache cache =
                    mappedFile != null && (props.compression() == Compression.NONE || props.dataBlocksCompressed() == 0)
                            ? null
                            : cacheOrNull;
            RangeTombstoneList tombstones = props.rangeDeletionsBlock() == null
                    ? RangeTombstoneList.EMPTY
                    : readRangeTombstones(file, size, path, props);
            return new TableReader(
                    path,
                    fileNumber,
                    file,
                    size,
                    footer,
                    index,
                    props,
                    raw,
                    filter,
                    problem,
                    rangeFilter,
                    rangeProblem,
                    cache,
                    counters == null ? new ReadCounters() : counters,
                    tombstones,
                    budgetOrNull,
                    rangeReserved,
                    partitions);
        } catch (IOException | RuntimeException | Error e) {
            if (partitions != null) {
                partitions.close();
            }
            if (rangeReserved > 0) {
                budgetOrNull.unreservePin(rangeReserved);
            }
            if (filter != null) {
                filter.close();
            }
            if (rangeFilter != null) {
                rangeFilter.close();
            }
            try {
                file.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Reads and checks the range-deletion block (engine/FORMAT.md, "Range deletion block"): every key an internal key
     * of type 0x0F, in strictly increasing order, each range non-empty, as many as the properties say.
     */
    private static RangeTombstoneList readRangeTombstones(
            ReadableFile file, long size, Path path, TableProperties props) throws IOException {
        BlockHandle h = props.rangeDeletionsBlock();
        return decodeRangeTombstones(
                readBlock(file, size, path, h, "range deletion"), props.rangeDeletions(), path, h.offset());
    }

    /**
     * Decodes a range-deletion block's contents (fuzzed by RangeDeletionFuzzTest). {@code expected} is the count the
     * properties give. @throws CorruptionException naming {@code path} and {@code offset} for any violation
     */
    static RangeTombstoneList decodeRangeTombstones(Block block, long expected, Path path, long offset) {
        List<RangeTombstone> ts = new ArrayList<>();
        BlockIterator it = block.iterator(InternalKey.COMPARATOR);
        byte[] previous = null;
        for (it.seekToFirst(); it.valid(); it.next()) {
            byte[] key = it.key();
            if (key.length < InternalKey.TRAILER_SIZE + 1) {
                throw new CorruptionException(
                        "range deletion key shorter than its trailer plus one byte", path, offset);
            }
            long trailer = InternalKey.trailer(key);
            if ((trailer & 0xFF) != RangeTombstone.TYPE_CODE) {
                throw new CorruptionException("range deletion key of type " + (trailer & 0xFF), path, offset);
            }
            if (previous != null && InternalKey.compare(previous, key) >= 0) {
                throw new CorruptionException("range deletion keys out of order", path, offset);
            }
            previous = key;
            byte[] begin = InternalKey.userKey(key);
            byte[] end = it.value();
            if (java.util.Arrays.compareUnsigned(begin, end) >= 0) {
                throw new CorruptionException("range deletion with begin >= end", path, offset);
            }
            ts.add(new RangeTombstone(begin, end, trailer >>> 8));
            if (ts.size() > expected) {
                break;
            }
        }
        if (ts.size() != expected) {
            throw new CorruptionException(
                    "range deletion block holds " + (ts.size() > expected ? "more than " : "") + ts.size()
                            + " tombstones, properties say " + expected,
                    path,
                    offset);
        }
        return RangeTombstoneList.of(ts);
    }

    /** The range tombstones of the table, fragmented (empty for most tables). No I/O. */
    public RangeTombstoneList rangeTombstones() {
        return rangeTombstones;
    }

    /** The file mapped, or null where it cannot be (no support, the mapping limit): it is then read with {@code pread}. */
    private static ReadableFile mappedOrNull(FileSystem fs, Path path) {
        try {
            return fs.newMappedReadableFile(path);
        } catch (IOException notMapped) {
            return null;
        }
    }

    /**
     * Reads a block and its trailer into one array and checks the trailer: the checksum (which covers
     * the stored, possibly compressed, bytes and the type byte) and the compression type, which must
     * be {@link TableFormat#NO_COMPRESSION} unless {@code mayBeCompressed}. Returns that array: the
     * stored contents are its first {@code h.size()} bytes, followed by the trailer.
     */
    static byte[] readVerified(
            ReadableFile file, long size, Path path, BlockHandle h, String kind, boolean mayBeCompressed)
            throws IOException {
        checkHandle(size, path, h, kind);
        return readVerified(
                file, size, path, h, kind, mayBeCompressed, new byte[(int) h.size() + TableFormat.BLOCK_TRAILER_SIZE]);
    }

    /**
     * {@link #readVerified(ReadableFile, long, Path, BlockHandle, String, boolean)} into {@code buf}, at least
     * {@code h.size()} + trailer bytes (a buffer the caller reuses); returns it.
     */
    static byte[] readVerified(
            ReadableFile file, long size, Path path, BlockHandle h, String kind, boolean mayBeCompressed, byte[] buf)
            throws IOException {
        checkHandle(size, path, h, kind);
        int n = (int) h.size();
        if (buf.length < n + TableFormat.BLOCK_TRAILER_SIZE) {
            throw new IllegalArgumentException("buffer of " + buf.length + " bytes for a block of " + n);
        }
        try {
            file.readFully(h.offset(), buf, 0, n + TableFormat.BLOCK_TRAILER_SIZE);
        } catch (EOFException e) {
            throw new CorruptionException(kind + " block runs past the end of the file", path, h.offset(), e);
        }
        return verifyTrailer(buf, path, h, kind, mayBeCompressed);
    }

    /** A {@link CorruptionException} unless block {@code h} and its trailer lie before the footer of a file of {@code size}. */
    private static void checkHandle(long size, Path path, BlockHandle h, String kind) {
        if (h.size() > Integer.MAX_VALUE - TableFormat.BLOCK_TRAILER_SIZE
                || h.offset() > size - TableFormat.FOOTER_SIZE - h.size() - TableFormat.BLOCK_TRAILER_SIZE) {
            throw new CorruptionException(kind + " block handle " + h + " lies outside the table", path, h.offset());
        }
    }

    /** Checks the trailer of a block read with its trailer into {@code buf} (see {@link #readVerified}); returns buf. */
    private static byte[] verifyTrailer(byte[] buf, Path path, BlockHandle h, String kind, boolean mayBeCompressed) {
        int n = (int) h.size();
        int type = buf[n] & 0xff;
        int stored = Coding.getFixed32(buf, n + 1);
        if (stored != TableWriter.blockChecksum(buf, 0, n, type)) {
            throw new CorruptionException(kind + " block checksum mismatch", path, h.offset());
        }
        if (type != TableFormat.NO_COMPRESSION
                && !(mayBeCompressed && (type == Compression.LZ4.code() || type == Compression.ZSTD.code()))) {
            throw new CorruptionException(kind + " block has unknown compression type " + type, path, h.offset());
        }
        return buf;
    }

    /**
     * Reads and verifies the block {@code h} ({@link #readVerified}), decompresses it if its trailer
     * says so, and parses it (an uncompressed block's contents are not copied again).
     */
    private static Block readBlock(ReadableFile file, long size, Path path, BlockHandle h, String kind)
            throws IOException {
        return decodeBlock(readVerified(file, size, path, h, kind, true), path, h, kind);
    }

    /** Parses a block read by {@link #readVerified}, decompressing it first if its trailer says so. */
    private static Block decodeBlock(byte[] buf, Path path, BlockHandle h, String kind) {
        int n = (int) h.size();
        int type = buf[n] & 0xff;
        if (type == TableFormat.NO_COMPRESSION) {
            return new Block(buf, n, path, h.offset());
        }
        byte[] contents = BlockCodec.decompress(type, buf, n, path, h.offset(), kind);
        return new Block(contents, contents.length, path, h.offset());
    }

    /**
     * The newest entry of {@code userKey} with sequence {@code <= snapshotSeq}, or null when the table
     * holds none. {@code userKeyHash} is {@code Hashing.hash64(userKey)}. Counts in the
     * {@link ReadCounters}: nothing when the key is outside the table's key range; otherwise
     * {@code filterChecks} and {@code filterUseful} (negative: no block read) or {@code filterPositive}
     * (and {@code filterTruePositive} when the table holds any entry of {@code userKey}); without a
     * usable filter, {@code tablesReadWithoutFilter}; then {@code dataBlockAccesses}, cache hits or
     * misses and {@code blockReads}/{@code blockReadBytes} for blocks read from the file. For a caller
     * that holds no reference (tools, tests); the engine's reads use {@link #get(PointRead)}.
     */
    public Entry get(byte[] userKey, long userKeyHash, long snapshotSeq) {
        // Pinned for the call: a release racing with this get cannot free the off-heap filter under the
        // probe (a read of unmapped memory would crash the JVM); after the last release this throws
        // IllegalStateException instead.
        retain();
        try {
            if (!properties.userKeyInRange(userKey)) {
                return null;
            }
            PointRead read = PointRead.newest(userKey, userKeyHash, snapshotSeq);
            probe(read, false);
            read.recordProbes();
            return read.entry();
        } finally {
            release();
        }
    }

    /**
     * The table's one point-read step (LevelDB's {@code Table::InternalGet} behind {@code TableCache::Get}, RocksDB's
     * {@code BlockBasedTable::Get}): asks the filter with {@code read.hash()}; unless it rules the key out, searches
     * the index and reads the data block(s) holding the key (block cache, else the file: mapped, positional or
     * direct, as the table was opened), feeding {@code read} the key's entries visible at its snapshot, newest first,
     * until it is done. Returns {@link PointRead#isDone()}: false when the table holds nothing more for the read (the
     * filter ruled the key out, or its entries ran out).
     *
     * <p>Counting: the filter's answer is tallied in {@code read} (the caller adds the tally to the counters once per
     * read, {@link PointRead#recordProbes()}); a table without a usable filter counts {@code tablesReadWithoutFilter};
     * a table whose filter let the key through and that holds an entry of it counts {@code filterTruePositive}; block
     * reads count as in {@link #get(byte[], long, long)}. The filter is tested without its early exit
     * ({@code Filter.mightContainTouched}): the caller may have touched its line first ({@link #touchFilter}).
     *
     * <p>Holding contract: the caller holds a reference to this table for the whole call (the engine's Version retains
     * its tables for its lifetime) and has checked that the key lies in the table's [smallest, largest] user-key range,
     * which saves two atomic updates of the shared reference count and two key comparisons per table per read. Range
     * tombstones are the caller's ({@link #rangeTombstones()}): they span tables.
     */
    public boolean get(PointRead read) {
        return probe(read, true);
    }

    /** {@link #get(PointRead)}; {@code touched}: test the filter without its early exit (see {@link #touchFilter}). */
    private boolean probe(PointRead read, boolean touched) {
        int ruledOut = budget != null || partitions != null
                ? budgetedProbe(read.hash(), touched)
                : residentProbe(read.hash(), touched);
        if (ruledOut < 0) {
            counters.tablesReadWithoutFilter.increment();
        } else {
            read.probed(counters, ruledOut == 1);
            if (ruledOut == 1) {
                return false;
            }
        }
        return search(read, ruledOut == 0);
    }

    /** The resident filter's answer: 1 when it rules the hash out, 0 when it may hold it, -1 without a usable filter. */
    private int residentProbe(long hash, boolean touched) {
        Filter f = filter;
        if (f == null) {
            return -1;
        }
        return (touched ? f.mightContainTouched(hash) : f.mightContain(hash)) ? 0 : 1;
    }

    /**
     * The filter's answer for a hash, without counting and without reading a block: 1 when it rules the hash out, 0
     * when it may hold it, -1 without a usable filter (partitioned, budgeted or resident: the probe a get makes, so a
     * budgeted filter or partition not in memory is loaded through the budget as for a get). For this package's tests;
     * same holding contract as {@link #get(PointRead)}.
     */
    int filterAnswer(long hash) {
        return budget != null || partitions != null ? budgetedProbe(hash, false) : residentProbe(hash, false);
    }

    /**
     * {@link #filterAnswer} from memory only ({@code Db.keyMayExist}, RocksDB's {@code kBlockCacheTier}): the same
     * answer where the filter is resident, pinned or in the budget's cache; -1 (not probed: the table may hold the key)
     * where a get would first load it through the budget (a file read), and where it is known unusable. A cached
     * filter is looked up without recording an access ({@link FilterMemory#peek}), so these probes do not change what
     * the budget keeps. Same holding contract as {@link #get(PointRead)}.
     */
    int residentFilterAnswer(long hash) {
        if (partitions != null) {
            return partitions.probeResident(hash);
        }
        if (budget == null) {
            return residentProbe(hash, false);
        }
        if (!footer.hasFilter() || budgetProblem != null) {
            return -1;
        }
        FilterMemory.Loaded p = pinned;
        return FilterMemory.Loaded.probeAndRelease(p != null && p.tryRetain() ? p : budget.peek(budgetId, -1), hash);
    }

    /**
     * {@link #get(PointRead)} without reading the file (RocksDB's {@code kBlockCacheTier} read, for
     * {@code Db.keyMayExist}): the filter is asked with the hash a get uses, from memory only
     * ({@link #residentFilterAnswer}: a budgeted filter or partition not in memory is not loaded, and lets the key
     * through); when it rules the key out the table holds nothing for the read (false). Otherwise
     * the index (on the heap) is searched and the data blocks holding the key are taken from the block cache only,
     * feeding {@code read} the key's visible entries newest first, as {@link #get(PointRead)} does, until it is done;
     * the first block the cache lacks (or any block, when the table has no cache: a mapped table of uncompressed blocks
     * skips it) ends the read as incomplete ({@link PointRead#incomplete()}). {@code read} is a
     * {@link PointRead#collecting} one. Counts nothing: no filter statistic (the probe's true or false positive is not
     * known without the block), no block access; a cache hit counts in the cache's own eviction order only. Same
     * holding contract as {@link #get(PointRead)}. Returns {@link PointRead#isDone()}.
     */
    public boolean getCached(PointRead read) {
        if (residentFilterAnswer(read.hash()) == 1) {
            return false;
        }
        if (cache == null) {
            read.incomplete();
            return true;
        }
        byte[] userKey = read.userKey();
        long snapshotSeq = read.snapshot();
        long seekTrailer = InternalKey.packTrailer(InternalKey.MAX_SEQUENCE, ValueType.FOR_SEEK);
        // The block walk of search(), with the cache as its only source and without its counting.
        IndexSearch search = indexSearch;
        BlockIterator idx = null;
        int entry = 0;
        if (search != null) {
            entry = search.find(userKey, userKey.length, seekTrailer);
        } else {
            idx = index.iterator(InternalKey.COMPARATOR);
            idx.seekInternal(userKey, userKey.length, seekTrailer);
        }
        boolean first = true;
        while (search != null ? entry < search.entries() : idx.valid()) {
            BlockHandle h = search != null ? indexHandle(search, entry) : handleOf(idx);
            Block block = cache.get(fileNumber, h.offset());
            if (block == null) {
                read.incomplete();
                return true;
            }
            BlockIterator it = block.iterator(InternalKey.COMPARATOR);
            if (first) {
                it.seekInternal(userKey, userKey.length, seekTrailer);
                first = false;
            } else {
                it.seekToFirst();
            }
            for (; it.valid(); it.next()) {
                if (it.keyLength() < InternalKey.TRAILER_SIZE) {
                    throw new CorruptionException("internal key shorter than its trailer", path, block.offset());
                }
                if (it.compareCurrentUserKey(userKey) != 0) {
                    return false;
                }
                long trailer = it.currentTrailer();
                long seq = trailer >>> 8;
                if (seq <= snapshotSeq) {
                    ValueType type = typeOf((int) (trailer & 0xff), block);
                    if (read.add(type, seq, type == ValueType.DELETE ? null : it.value())) {
                        return true;
                    }
                }
            }
            if (search != null) {
                entry++;
            } else {
                idx.next();
            }
        }
        return false;
    }

    /**
     * Loads the first word of the filter line(s) {@link #get(PointRead)} would read for this hash and returns it
     * (0 without a resident filter, or a partitioned one's partition in place or resident), so a read asking several tables starts all their filters' cache misses before it
     * tests any (a prefetch: no answer, nothing counted). Same holding contract as {@link #get(PointRead)}.
     */
    public long touchFilter(long userKeyHash) {
        if (partitions != null) {
            return partitions.touch(userKeyHash);
        }
        Filter f = filter;
        return f == null ? 0 : f.touch(userKeyHash);
    }

    /** Counts a table a get passed because a newer range tombstone covers the key. */
    public void recordRangeTombstoneSkip() {
        counters.rangeTombstoneSkips.increment();
    }

    /** Counts this table dropped by a compaction without being read (range tombstones cover it). */
    public void recordDroppedByRangeDeletion() {
        counters.tablesDroppedByRangeDeletion.increment();
    }

    /**
     * {@link #get(PointRead)} for a batch of keys (Db.multiGet): the newest entry visible at {@code snapshotSeq} of
     * each key {@code userKeys[keys[j]]}, j &lt; {@code count}, whose hash is {@code hashes[j]}. The filter tests the
     * whole batch first ({@code Filter.mightContainAll}: it touches every key's line before testing, so the loads
     * overlap); then the keys it let through are searched in the given order (in key order, keys sharing a data block
     * read it back to back, the second from the block cache). A key found gets {@code out[k]} and {@code resolved[k]}
     * true. The filter probes count as that many gets; {@code passed} is scratch of at least {@code count}. Same
     * holding contract as {@link #get(PointRead)}.
     */
    public void getAll(
            byte[][] userKeys,
            int[] keys,
            long[] hashes,
            int count,
            long snapshotSeq,
            boolean[] passed,
            Entry[] out,
            boolean[] resolved) {
        if (count == 0) {
            return;
        }
        boolean filtered = true;
        int positives = -1;
        if (partitions != null) {
            // One partition per hash: probed one by one (a batch's keys fall in different partitions).
            int without = 0;
            positives = 0;
            for (int i = 0; i < count; i++) {
                int may = partitions.probe(hashes[i], false);
                passed[i] = may != 1;
                if (passed[i]) {
                    positives++;
                }
                if (may < 0) {
                    without++;
                }
            }
            counters.recordProbes(count - without, count - positives);
            counters.tablesReadWithoutFilter.add(without);
            filtered = without == 0;
        } else if (budget != null) {
            FilterMemory.Loaded l = acquireBudgeted();
            if (l != null) {
                try {
                    positives = l.filter().mightContainAll(hashes, count, passed);
                } finally {
                    l.release();
                }
            }
        } else if (filter != null) {
            positives = filter.mightContainAll(hashes, count, passed);
        }
        if (partitions != null) {
            // counted per partition above
        } else if (positives >= 0) {
            counters.recordProbes(count, count - positives);
        } else {
            java.util.Arrays.fill(passed, 0, count, true);
            counters.tablesReadWithoutFilter.add(count);
            filtered = false;
            positives = count;
        }
        if (positives == 0) {
            return;
        }
        for (int j = 0; j < count; j++) {
            if (passed[j]) {
                int k = keys[j];
                PointRead read = PointRead.newest(userKeys[k], hashes[j], snapshotSeq);
                if (search(read, filtered)) {
                    out[k] = read.entry();
                    resolved[k] = true;
                }
            }
        }
    }

    /**
     * The block step of {@link #get(PointRead)}: index, then the data block(s) holding the read's key, feeding it the
     * key's visible entries newest first until it is done. {@code filtered}: the filter let the key through, so the
     * table holding an entry of the key counts {@code filterTruePositive}.
     */
    private boolean search(PointRead read, boolean filtered) {
        byte[] userKey = read.userKey();
        long snapshotSeq = read.snapshot();
        // Seek target: userKey || (MAX_SEQUENCE, FOR_SEEK), the first internal key of userKey; compared in place.
        long seekTrailer = InternalKey.packTrailer(InternalKey.MAX_SEQUENCE, ValueType.FOR_SEEK);
        // With the index's fast search the index entries are walked by number and their handles read from its dense
        // array (IndexSearch.handle); otherwise with the index block's own iterator.
        IndexSearch search = indexSearch;
        BlockIterator idx = null;
        int entry = 0;
        if (search != null) {
            entry = search.find(userKey, userKey.length, seekTrailer);
        } else {
            idx = index.iterator(InternalKey.COMPARATOR);
            idx.seekInternal(userKey, userKey.length, seekTrailer);
        }
        boolean sawUserKey = false;
        boolean first = true;
        // This thread's buffers for blocks the cache does not keep, taken at the first such block (ReadScratch: the
        // block built over them is searched and dropped before the next block of this read is read).
        ReadScratch scratch = null;
        boolean scratchTaken = false;
        try {
            while (search != null ? entry < search.entries() : idx.valid()) {
                BlockHandle h = search != null ? indexHandle(search, entry) : handleOf(idx);
                Block block = cachedPointBlock(h);
                if (block == null) {
                    if (!scratchTaken) {
                        scratch = ReadScratch.acquire();
                        scratchTaken = true;
                    }
                    block = readPointBlock(h, scratch);
                }
                BlockIterator it = block.iterator(InternalKey.COMPARATOR);
                if (first) {
                    it.seekInternal(userKey, userKey.length, seekTrailer);
                    first = false;
                } else {
                    it.seekToFirst();
                }
                for (; it.valid(); it.next()) {
                    if (it.keyLength() < InternalKey.TRAILER_SIZE) {
                        throw new CorruptionException("internal key shorter than its trailer", path, block.offset());
                    }
                    if (it.compareCurrentUserKey(userKey) != 0) {
                        return false;
                    }
                    if (!sawUserKey) {
                        sawUserKey = true;
                        if (filtered) {
                            counters.filterTruePositive.increment();
                        }
                    }
                    long trailer = it.currentTrailer();
                    long seq = trailer >>> 8;
                    if (seq <= snapshotSeq) {
                        ValueType type = typeOf((int) (trailer & 0xff), block);
                        if (read.add(type, seq, type == ValueType.DELETE ? null : it.value())) {
                            return true;
                        }
                    }
                }
                if (search != null) {
                    entry++;
                } else {
                    idx.next();
                }
            }
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (scratch != null) {
                scratch.release();
            }
        }
    }

    /**
     * The block cache's copy of data block {@code h} for a point read, or null when the table has no cache or the
     * cache misses. Counts the access ({@code dataBlockAccesses}) and the cache's answer.
     */
    private Block cachedPointBlock(BlockHandle h) {
        counters.dataBlockAccesses.increment();
        if (cache == null) {
            return null;
        }
        Block b = cache.get(fileNumber, h.offset());
        if (b != null) {
            counters.blockCacheHits.increment();
        } else {
            counters.blockCacheMisses.increment();
        }
        return b;
    }

    /**
     * Data block {@code h} read from the file for a point read, its trailer checked as {@link #readVerified} checks it
     * (checksum and compression type) at every read: kept by the block cache when the cache admits it
     * ({@link BlockCache#admit}, asked before the block is built), else read, decompressed and parsed in
     * {@code scratch}'s buffers (when not null), so a block used once allocates nothing. Counted in {@code blockReads}
     * and {@code blockReadBytes} once its checksum passed, before it is parsed.
     */
    private Block readPointBlock(BlockHandle h, ReadScratch scratch) throws IOException {
        checkHandle(fileSize, path, h, "data");
        int n = (int) h.size();
        int total = n + TableFormat.BLOCK_TRAILER_SIZE;
        byte[] buf = scratch == null ? null : scratch.stored(total);
        boolean owned = buf == null;
        if (owned) {
            buf = new byte[total];
        }
        try {
            file.readFully(h.offset(), buf, 0, total);
        } catch (EOFException e) {
            throw new CorruptionException("data block runs past the end of the file", path, h.offset(), e);
        }
        verifyTrailer(buf, path, h, "data", true);
        counters.blockReads.increment();
        counters.blockReadBytes.add(total);
        int type = buf[n] & 0xff;
        if (type == TableFormat.NO_COMPRESSION) {
            if (cache != null && cache.admit(fileNumber, h.offset(), n)) {
                Block b = new Block(owned ? buf : java.util.Arrays.copyOf(buf, n), n, path, h.offset());
                cache.putAdmitted(fileNumber, h.offset(), b);
                return b;
            }
            return new Block(buf, n, path, h.offset());
        }
        int len = BlockCodec.uncompressedLength(buf, n, path, h.offset(), "data");
        boolean keep = cache != null && cache.admit(fileNumber, h.offset(), len);
        byte[] out = keep || scratch == null ? null : scratch.contents(len);
        if (out == null) {
            out = new byte[len];
        }
        BlockCodec.decompressInto(type, buf, n, out, len, path, h.offset(), "data");
        Block b = new Block(out, len, path, h.offset());
        if (keep) {
            cache.putAdmitted(fileNumber, h.offset(), b);
        }
        return b;
    }

    /**
     * The block handle of index entry {@code i}, from {@code search}'s dense array (checked against the data area
     * when it was packed); an entry whose handle did not pack is decoded (and its damage reported) by handleOf.
     */
    private BlockHandle indexHandle(IndexSearch search, int i) {
        long packed = search.handle(i);
        if (packed == IndexSearch.NOT_PACKED) {
            BlockIterator it = index.iterator(InternalKey.COMPARATOR);
            it.seekToRestartPoint(i);
            return handleOf(it);
        }
        return new BlockHandle(IndexSearch.offsetOf(packed), IndexSearch.sizeOf(packed));
    }

    /**
     * Approximate bytes of this file holding user keys in [{@code lo}, {@code hi}) (null: open), RocksDB's
     * {@code BlockBasedTable::ApproximateSize}: the data between the offsets of the index entries {@code lo} and
     * {@code hi} seek to (the data area's end for a key past the last block), as a share of the data area applied to
     * the whole file, so filter, index and properties are pro-rated by data size and the whole range gives
     * {@link #fileSize()}. Only the index is searched (it is held in memory): no block is read, nothing is counted. A
     * boundary key inside a block counts that block from its start: the answer is off by at most a block per bound.
     */
    public long approximateSize(byte[] lo, byte[] hi) {
        ensureLive();
        long dataEnd = footer.filter().offset(); // data blocks precede the filter (or where it would be)
        if (dataEnd <= 0) {
            return fileSize; // no data blocks (range tombstones only): the range is taken to hold the file
        }
        long start = lo == null ? 0 : dataOffsetOf(lo, dataEnd);
        long end = hi == null ? dataEnd : dataOffsetOf(hi, dataEnd);
        if (end <= start) {
            return 0;
        }
        return (long) ((double) (end - start) / dataEnd * fileSize);
    }

    /** Where the data block holding the first entry of {@code userKey} or after it starts; {@code dataEnd} if none. */
    private long dataOffsetOf(byte[] userKey, long dataEnd) {
        long trailer = InternalKey.packTrailer(InternalKey.MAX_SEQUENCE, ValueType.FOR_SEEK);
        IndexSearch search = indexSearch;
        if (search != null) {
            int i = search.find(userKey, userKey.length, trailer);
            return i == search.entries()
                    ? dataEnd
                    : Math.min(dataEnd, indexHandle(search, i).offset());
        }
        BlockIterator idx = index.iterator(InternalKey.COMPARATOR);
        idx.seekInternal(userKey, userKey.length, trailer);
        return idx.valid() ? Math.min(dataEnd, handleOf(idx).offset()) : dataEnd;
    }

    /** True when {@code userKey} lies within the table's [smallest, largest] user keys (no I/O, no counters). */
    public boolean mayContainUserKeyRange(byte[] userKey) {
        return properties.userKeyInRange(userKey);
    }

    /** True when the table's user-key range intersects [{@code from}, {@code to}] (null = unbounded). */
    public boolean overlaps(byte[] fromUserKey, byte[] toUserKey) {
        byte[] small = properties.smallestUserKey();
        byte[] large = properties.largestUserKey();
        return (fromUserKey == null || java.util.Arrays.compareUnsigned(large, fromUserKey) >= 0)
                && (toUserKey == null || java.util.Arrays.compareUnsigned(small, toUserKey) <= 0);
    }

    /**
     * An iterator over every entry of the table, in internal key order. It holds a reference to the
     * table until it is closed.
     */
    public InternalIterator iterator() {
        retain();
        return new TableIterator(this);
    }

    // ----- accessors for the db and the dump tool

    public TableProperties properties() {
        ensureLive();
        return properties;
    }

    /** The stored properties by name, in their on-disk encoding (engine/FORMAT.md, "Properties block"). */
    public Map<String, byte[]> rawProperties() {
        return rawProperties;
    }

    public Footer footer() {
        return footer;
    }

    public Path path() {
        return path;
    }

    public long fileNumber() {
        return fileNumber;
    }

    public long fileSize() {
        return fileSize;
    }

    /** Every entry of the index block, in order. */
    public List<IndexEntry> indexEntries() {
        ensureLive();
        List<IndexEntry> out = new ArrayList<>();
        BlockIterator it = index.iterator(InternalKey.COMPARATOR);
        for (it.seekToFirst(); it.valid(); it.next()) {
            out.add(new IndexEntry(it.key(), handleOf(it)));
        }
        return out;
    }

    /**
     * False only when this table certainly holds no user key starting with a {@code prefixLength}-byte prefix whose
     * {@code Hashing.hash64} is {@code prefixHash}: its filter was written with this same prefix length (table
     * property {@code bloomkv.filter.prefix.length}) and answers no. A table without a usable filter, or whose filter
     * holds another prefix length (or none), answers true (fails open). A probe counts in {@link ReadCounters} as a
     * filter check, useful or positive (never a true positive: that would need the table read). Same holding contract as
     * {@link #get(PointRead)}.
     */
    public boolean mayContainPrefixRetained(int prefixLength, long prefixHash) {
        if ((budget != null || partitions != null) && prefixLength > 0 && properties.prefixLength() == prefixLength) {
            int may = budgetedProbe(prefixHash, false);
            if (may >= 0) {
                counters.recordProbes(1, may);
            }
            return may != 1;
        }
        if (filter == null || prefixLength <= 0 || properties.prefixLength() != prefixLength) {
            return true;
        }
        boolean may = filter.mightContain(prefixHash);
        counters.recordProbes(1, may ? 0 : 1);
        return may;
    }

    /**
     * False only when this table certainly holds no user key in [lo, hi] (inclusive; a null bound is open): its range
     * filter says so. Without a usable range filter, true. Counts {@code rangeFilterChecks} and, when false,
     * {@code rangeFilterUseful} in {@link ReadCounters}. The caller holds a reference (the table is not released
     * during the call), as for {@link #get(PointRead)}.
     */
    public boolean rangeMayContainRetained(byte[] lo, byte[] hi) {
        return rangeMayContainRetained(lo, lo == null ? 0 : lo.length, hi, hi == null ? 0 : hi.length);
    }

    /**
     * As {@link #rangeMayContainRetained(byte[], byte[])} for the bounds {@code lo[0, loLength)} and
     * {@code hi[0, hiLength)} (an internal key's user part, not copied); a null array is open on that side.
     */
    public boolean rangeMayContainRetained(byte[] lo, int loLength, byte[] hi, int hiLength) {
        return rangeMayContainRetained(lo, loLength, hi, hiLength, true);
    }

    /**
     * As {@link #rangeMayContainRetained(byte[], int, byte[], int)} for [lo, hi] when {@code hiInclusive}, for [lo, hi)
     * when not (an iterator's exclusive upper bound: a key equal to hi does not count,
     * {@link RangeFilter#mightContainRange(byte[], int, byte[], int, boolean)}).
     */
    public boolean rangeMayContainRetained(byte[] lo, int loLength, byte[] hi, int hiLength, boolean hiInclusive) {
        RangeFilter rf = rangeFilter;
        if (rf == null) {
            return true;
        }
        boolean may = rf.mightContainRange(lo, loLength, hi, hiLength, hiInclusive);
        rangeProbeGate.record(!may);
        counters.rangeFilterChecks.increment();
        if (!may) {
            counters.rangeFilterUseful.increment();
        }
        return may;
    }

    /**
     * True when this table has a range filter and a bounded positioning should ask it now
     * ({@link #rangeMayContainRetained}); false when the table has none, or when its recent probes have almost all
     * answered "may hold" ({@link RangeProbeGate}): the positioning then reads the table as if it had no range filter,
     * which is always correct, and spares a probe that would most likely save nothing.
     */
    public boolean rangeProbeWorthwhile() {
        return rangeFilter != null && rangeProbeGate.shouldProbe();
    }

    /** Counts a range the range filter let through but the table did not hold a key of (seen by the iterator). */
    public void recordRangeFalsePositive() {
        counters.rangeFilterFalsePositives.increment();
    }

    /** True when the table has a usable range filter. */
    public boolean hasRangeFilter() {
        return rangeFilter != null;
    }

    /**
     * Why the range filter could not be loaded (its checksum or its decoder's checks failed), or null: no range filter,
     * a usable one, or one left unloaded because a filter memory budget had no room for it.
     */
    public String rangeFilterProblem() {
        return rangeFilterProblem;
    }

    /** Off-heap bytes of this table's filters, point and range (0 if none or broken). */
    public long filterMemoryBytes() {
        if (budget == null) {
            return filterMemory;
        }
        // charged to the budget now: pinned, or in its cache
        if (partitions != null) {
            return filterMemory + partitions.chargedBytes();
        }
        return filterMemory + (pinned != null || budget.isCached(budgetId) ? budgetCharge : 0);
    }

    /** True when the table has a filter block that is usable (with a budget: not known to be unusable). */
    public boolean hasFilter() {
        if (partitions != null) {
            return partitions.usable();
        }
        return budget == null ? filter != null : footer.hasFilter() && budgetProblem == null;
    }

    /**
     * Whether a get reads this table without a point filter now: none was written, it is unusable (failed its checksum
     * or format check, or a partitioned filter's top-level index did), or, under a filter memory budget, a whole filter
     * neither pinned nor cached is larger than the budget's cache may hold now, so gets do not load it (see
     * {@code FilterMemory.acquire}). A partitioned filter with a usable top-level index counts as a filter: only the keys
     * hashed to a broken partition pass it. What {@code bloomkv.num-tables-without-filter} counts; not for the read path.
     */
    public boolean readWithoutFilter() {
        if (!hasFilter()) {
            return true;
        }
        if (budget == null || partitions != null) {
            return false;
        }
        return pinned == null && !budget.isCached(budgetId) && budgetCharge > budget.cacheCapacityBytes();
    }

    /** True when the table has a filter block that could not be loaded (the table is read without it). */
    public boolean filterBroken() {
        return filterProblem() != null;
    }

    /** Why the filter could not be loaded, or null. */
    public String filterProblem() {
        if (partitions != null) {
            return partitions.problem();
        }
        return budget == null ? filterProblem : budgetProblem;
    }

    /** Whether the filter is pinned in its budget (false without a budget: then it is simply resident). */
    public boolean filterPinned() {
        return pinned != null || partitions != null && partitions.pinned();
    }

    /**
     * Whether gets probe the partitioned filter in place in the table's mapping (a budget, a mapped file, the filter
     * not pinned): no partition is copied or cached for them.
     */
    public boolean filterProbesInPlace() {
        return partitions != null && partitions.probesInPlace();
    }

    /**
     * Partitions of a budgeted partitioned filter that probes reach as one run of equal partitions (pinned: all or
     * none; mapped: those verified with the run's geometry), 0 otherwise. For tests and the dump tool.
     */
    int filterPartitionsInRun() {
        return partitions == null ? 0 : partitions.partitionsInRun();
    }

    /** The serialized size of the point filter (0 without one): what it is charged in a filter memory budget. */
    public long filterBlockSize() {
        if (partitions != null) {
            return partitions.pinBytes();
        }
        return footer.hasFilter() ? footer.filter().size() : 0;
    }

    /**
     * The pinned copy of the table's partitioned filter with one more reference (null when none is pinned), for a
     * {@code Version} naming the table to hold until its release: gets probe a pinned copy without a reference of their
     * own, so every Version through which a get may read it holds it (see {@code PartitionedFilterReader.Pinned}).
     */
    public FilterMemory.Hold retainPinnedFilter() {
        return partitions == null ? null : partitions.retainPinned();
    }

    /**
     * With a budget: pins the filter (loads it and keeps it for the table's life) when {@code pin} and the budget's pin
     * allowance has room, or unpins it (later gets load it through the cache) when not {@code pin}. Returns whether it
     * is pinned afterwards. Without a budget or a filter, nothing to do (false). Called by one residency pass at a time.
     */
    public synchronized boolean pin(boolean pin) {
        if (partitions != null) {
            return refs.get() > 0 && partitions.pin(pin);
        }
        if (budget == null || !footer.hasFilter() || budgetProblem != null || refs.get() <= 0) {
            return false;
        }
        FilterMemory.Loaded p = pinned;
        if (!pin) {
            if (p != null) {
                pinned = null;
                p.release();
                budget.unreservePin(budgetCharge);
            }
            return false;
        }
        if (p != null) {
            return true;
        }
        if (!budget.tryReservePin(budgetCharge)) {
            return false;
        }
        FilterMemory.Loaded loaded = loadBudgeted();
        if (loaded == null) {
            budget.unreservePin(budgetCharge);
            return false;
        }
        budget.evict(budgetId); // no second copy in the cache
        pinned = loaded;
        return true;
    }

    /**
     * One probe through the budget: 1 when the filter rules the hash out, 0 when it may contain it, -1 without a usable
     * filter (not written, or failed its checksum: fail open).
     */
    private int budgetedProbe(long hash, boolean touched) {
        if (partitions != null) {
            return partitions.probe(hash, touched);
        }
        FilterMemory.Loaded l = acquireBudgeted();
        if (l == null) {
            return -1;
        }
        try {
            return l.filter().mightContain(hash) ? 0 : 1;
        } finally {
            l.release();
        }
    }

    /** The budgeted filter retained for one probe (release it), pinned or through the cache; null when unusable. */
    private FilterMemory.Loaded acquireBudgeted() {
        if (!footer.hasFilter() || budgetProblem != null) {
            return null;
        }
        FilterMemory.Loaded p = pinned;
        if (p != null && p.tryRetain()) {
            return p;
        }
        return budget.acquire(budgetId, budgetCharge, this::loadBudgeted);
    }

    /**
     * Reads, verifies and loads the filter block into off-heap memory, one reference held. A block that fails its
     * checksum or format check is reported ({@link #filterProblem()}, {@code tablesReadWithoutFilter}) and never loaded
     * again: the table is read without it, as a corrupt resident filter is. An I/O error fails this one probe open.
     */
    private FilterMemory.Loaded loadBudgeted() {
        try {
            byte[] fbytes = readVerified(file, fileSize, path, footer.filter(), "filter", false);
            Filter f = Filters.read(fbytes, 0, (int) footer.filter().size());
            return new FilterMemory.Loaded(f, budgetCharge);
        } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
            budgetProblem = e.getMessage();
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Kind of the loaded filter, or null. */
    public FilterKind filterKind() {
        PartitionedFilterReader.Summary s = filterSummary();
        return s == null ? null : s.kind();
    }

    /** Probes per key of the loaded filter (0 if none). */
    public int filterHashCount() {
        PartitionedFilterReader.Summary s = filterSummary();
        return s == null ? 0 : s.hashCount();
    }

    /** Bits (counters for COUNTING) of the loaded filter (0 if none). */
    public long filterBitSize() {
        PartitionedFilterReader.Summary s = filterSummary();
        return s == null ? 0 : s.bitSize();
    }

    /** Keys the loaded filter holds (0 if none). */
    public long filterKeyCount() {
        PartitionedFilterReader.Summary s = filterSummary();
        return s == null ? 0 : s.keyCount();
    }

    /** Share of the loaded filter's bits that are set (0 if none). */
    public double filterFractionOfBitsSet() {
        PartitionedFilterReader.Summary s = filterSummary();
        return s == null ? 0 : s.fractionOfBitsSet();
    }

    /**
     * The false-positive rate the filter's formula predicts for its keys (1 if no usable filter). A blocked filter's
     * formula sums a Poisson series of exact per-block rates: computed once per table, with the rest of
     * {@link #filterSummary()}.
     */
    public double filterExpectedFpp() {
        PartitionedFilterReader.Summary s = filterSummary();
        return s == null ? 1.0 : s.expectedFpp();
    }

    /**
     * The facts of the table's filter, computed at the first call and then kept (the table and its filter are
     * immutable); null without a usable filter, and then not remembered (an I/O error may pass). Db.tables() asks six
     * facts of every table. Under a budget a filter that is neither pinned nor cached is read from the file for this
     * once and freed at once, not loaded through the budget's cache: looking at the tables must not change what the
     * budget holds, or evict a filter gets are using.
     */
    private PartitionedFilterReader.Summary filterSummary() {
        PartitionedFilterReader.Summary s = summary;
        if (s != null) {
            return s;
        }
        retain(); // pins the table: the filter's off-heap bits, or the file its blocks are read from
        try {
            if (partitions != null) {
                s = partitions.summary();
            } else if (budget == null) {
                s = filter == null ? null : summarize(filter);
            } else {
                s = budgetedSummary();
            }
        } finally {
            release();
        }
        if (s != null) {
            summary = s; // a racing second computation gives the same
        }
        return s;
    }

    /** {@link #filterSummary()} once computed, or null. */
    private volatile PartitionedFilterReader.Summary summary;

    /** The summary of a budgeted whole filter: the pinned or cached one, else one read for this call alone. */
    private PartitionedFilterReader.Summary budgetedSummary() {
        if (!footer.hasFilter() || budgetProblem != null) {
            return null;
        }
        FilterMemory.Loaded p = pinned;
        FilterMemory.Loaded l = p != null && p.tryRetain() ? p : budget.peek(budgetId, -1);
        if (l == null) {
            l = loadBudgeted(); // held by this call only: its release frees it
        }
        if (l == null) {
            return null;
        }
        try {
            return summarize(l.filter());
        } finally {
            l.release();
        }
    }

    private static PartitionedFilterReader.Summary summarize(Filter f) {
        return new PartitionedFilterReader.Summary(
                f.kind(), f.hashCount(), f.bitSize(), f.keyCount(), f.expectedFpp(), f.fractionOfBitsSet());
    }

    /**
     * Reads every block of the table and checks its trailer checksum and structure. Returns the bad
     * blocks (empty when the table is sound). Not counted in {@link ReadCounters}.
     */
    public List<BadBlock> verifyChecksums() throws IOException {
        ensureLive();
        long size = fileSize;
        List<BadBlock> bad = new ArrayList<>();
        List<BlockHandle> data = new ArrayList<>();
        try {
            BlockIterator it = index.iterator(InternalKey.COMPARATOR);
            for (it.seekToFirst(); it.valid(); it.next()) {
                data.add(handleOf(it));
            }
        } catch (CorruptionException e) {
            bad.add(new BadBlock(
                    "index", footer.index().offset(), footer.index().size(), e.getMessage()));
        }
        for (BlockHandle h : data) {
            try {
                Block b = readBlock(file, size, path, h, "data");
                BlockIterator bi = b.iterator(InternalKey.COMPARATOR);
                for (bi.seekToFirst(); bi.valid(); bi.next()) {
                    if (bi.keyRef().length < InternalKey.TRAILER_SIZE) {
                        throw new CorruptionException("internal key shorter than its trailer", path, h.offset());
                    }
                }
            } catch (CorruptionException e) {
                bad.add(new BadBlock("data", h.offset(), h.size(), e.getMessage()));
            }
        }
        if (footer.hasFilter()) {
            try {
                byte[] fbytes = readVerified(file, size, path, footer.filter(), "filter", false);
                Filters.read(fbytes, 0, (int) footer.filter().size()).close();
            } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
                bad.add(new BadBlock(
                        "filter", footer.filter().offset(), footer.filter().size(), e.getMessage()));
            }
        }
        if (properties.filterPartitionsIndex() != null) {
            BlockHandle h = properties.filterPartitionsIndex();
            try {
                byte[] b = readVerified(file, size, path, h, "filter partition index", false);
                PartitionedFilter.decodeIndex(b, (int) h.size(), properties.filterPartitions(), h.offset(), path);
            } catch (CorruptionException e) {
                bad.add(new BadBlock("filter", h.offset(), h.size(), e.getMessage()));
            }
            if (partitions != null) {
                partitions.verify(bad);
            }
        }
        if (properties.rangeFilter() != null) {
            // Read and decoded as the open does, whether or not the open loaded it (a filter budget may leave it out).
            BlockHandle h = properties.rangeFilter();
            try {
                byte[] rbytes = readVerified(file, size, path, h, "range filter", false);
                RangeFilter.read(rbytes, 0, (int) h.size()).close();
            } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
                bad.add(new BadBlock("range filter", h.offset(), h.size(), e.getMessage()));
            }
        }
        if (properties.rangeDeletionsBlock() != null) {
            BlockHandle h = properties.rangeDeletionsBlock();
            try {
                readRangeTombstones(file, size, path, properties);
            } catch (CorruptionException e) {
                bad.add(new BadBlock("range deletion", h.offset(), h.size(), e.getMessage()));
            }
        }
        for (String kind : new String[] {"index", "properties"}) {
            BlockHandle h = kind.equals("index") ? footer.index() : footer.properties();
            try {
                readBlock(file, size, path, h, kind);
            } catch (CorruptionException e) {
                bad.add(new BadBlock(kind, h.offset(), h.size(), e.getMessage()));
            }
        }
        if (data.size() != properties.dataBlocks() && bad.isEmpty()) {
            bad.add(new BadBlock(
                    "index",
                    footer.index().offset(),
                    footer.index().size(),
                    "index names " + data.size() + " data blocks, properties say " + properties.dataBlocks()));
        }
        return bad;
    }

    // ----- reference counting

    /** Adds a reference. @throws IllegalStateException if the table was already released */
    public void retain() {
        if (!refs.tryRetain()) {
            throw new IllegalStateException("table " + path + " is released");
        }
    }

    /** Drops a reference; the last one frees the filter memory and closes the file. */
    public void release() {
        if (refs.release()) {
            free();
        }
    }

    /** Drops the opener's reference (only once; later calls do nothing). */
    @Override
    public void close() {
        if (openerReleased.compareAndSet(false, true)) {
            release();
        }
    }

    /** References held now (0 once released). */
    public int refCount() {
        return Math.max(0, refs.get());
    }

    /** Tables opened and not yet released, in this JVM. */
    public static long liveTables() {
        return LIVE_TABLES.get();
    }

    /** Off-heap filter bytes held by tables not yet released, in this JVM. */
    public static long liveFilterBytes() {
        return LIVE_FILTER_BYTES.get();
    }

    private void free() {
        LIVE_TABLES.decrementAndGet();
        LIVE_FILTER_BYTES.addAndGet(-filterMemory);
        try {
            if (filter != null) {
                filter.close();
            }
            if (partitions != null) {
                synchronized (this) {
                    partitions.close();
                }
            }
            if (budget != null) {
                synchronized (this) {
                    FilterMemory.Loaded p = pinned;
                    if (p != null) {
                        pinned = null;
                        p.release();
                        budget.unreservePin(budgetCharge);
                    }
                }
                budget.evict(budgetId);
                if (rangeReserved > 0) {
                    budget.unreservePin(rangeReserved);
                }
            }
            if (rangeFilter != null) {
                rangeFilter.close();
            }
        } finally {
            if (cache != null) {
                cache.evictFile(fileNumber);
            }
            try {
                file.close();
            } catch (IOException e) {
                // Not reported: closing a file only read loses nothing, and its descriptor is released
                // either way (close(2)); the last release may run on any reader's thread, which must not
                // see an I/O error of a table it merely stopped using (found by FaultSweepTest).
            }
        }
    }

    void ensureLive() {
        if (refs.get() <= 0) {
            throw new IllegalStateException("table " + path + " is released");
        }
    }

    private Filter liveFilter() {
        ensureLive();
        return filter;
    }

    // ----- block access shared with TableIterator

    Block indexBlock() {
        return index;
    }

    /** Positions {@code idx} (an iterator of the index block) at the first entry >= {@code userKey[0, userLen) || trailer}. */
    void seekIndex(BlockIterator idx, byte[] userKey, int userLen, long trailer) {
        if (indexSearch != null) {
            idx.seekToRestartPoint(indexSearch.find(userKey, userLen, trailer));
        } else {
            idx.seekInternal(userKey, userLen, trailer);
        }
    }

    /** The index's fast search, or null when its layout does not allow one or it is malformed (gets then report the damage). */
    private static IndexSearch indexSearchOf(Block index, long dataEnd) {
        try {
            return IndexSearch.of(index, dataEnd);
        } catch (CorruptionException e) {
            return null;
        }
    }

    BlockHandle handleOf(BlockIterator indexIt) {
        BlockHandle h = BlockHandle.decode(indexIt.valueArray(), indexIt.valueOffset(), indexIt.valueLength());
        if (h == null) {
            throw new CorruptionException(
                    "malformed block handle in the index", path, footer.index().offset());
        }
        if (h.end() > footer.filter().offset()) { // data blocks precede the filter (or where it would be)
            throw new CorruptionException(
                    "index names a data block " + h + " beyond the data area",
                    path,
                    footer.index().offset());
        }
        return h;
    }

    /**
     * A data block read for a sequential pass over the table (compaction): from {@code readahead}'s window of the
     * file, and not put in the block cache (a compaction's blocks would push out the blocks gets use; RocksDB reads
     * compaction inputs with {@code fill_cache = false} too). Counted as a block read like {@link #dataBlock}.
     */
    Block sequentialDataBlock(BlockHandle h, Readahead readahead) throws IOException {
        checkHandle(fileSize, path, h, "data");
        byte[] stored = new byte[(int) h.size() + TableFormat.BLOCK_TRAILER_SIZE];
        readahead.read(h.offset(), stored);
        verifyTrailer(stored, path, h, "data", true);
        counters.blockReads.increment();
        counters.blockReadBytes.add(stored.length);
        return decodeBlock(stored, path, h, "data");
    }

    /**
     * An iterator over every entry of the table for one forward pass (compaction): data blocks are read from a window
     * of {@code readaheadBytes} of the file, one read per window instead of one per block, and bypass the block cache.
     * Under {@code useDirectReads} a per-block read is a device read, tens of microseconds against a page-cache copy,
     * so a compaction reading 4 KiB at a time falls behind the writes; RocksDB reads compaction inputs with a 2 MiB
     * {@code compaction_readahead_size} for the same reason. Seeks and backward steps work as in {@link #iterator()}.
     */
    public InternalIterator compactionIterator(int readaheadBytes) {
        retain();
        return new TableIterator(this, new Readahead(file, fileSize - TableFormat.FOOTER_SIZE, readaheadBytes));
    }

    /** A data block from the cache or the file; {@code pointRead} counts it in dataBlockAccesses. */
    Block dataBlock(BlockHandle h, boolean pointRead) throws IOException {
        if (pointRead) {
            counters.dataBlockAccesses.increment();
        }
        if (cache != null) {
            Block b = cache.get(fileNumber, h.offset());
            if (b != null) {
                counters.blockCacheHits.increment();
                return b;
            }
            counters.blockCacheMisses.increment();
        }
        byte[] stored = readVerified(file, fileSize, path, h, "data", true);
        counters.blockReads.increment(); // counted before parsing: a block that fails to parse was still read
        counters.blockReadBytes.add(h.size() + TableFormat.BLOCK_TRAILER_SIZE);
        Block b = decodeBlock(stored, path, h, "data");
        if (cache != null) {
            cache.put(fileNumber, h.offset(), b);
        }
        return b;
    }

    private ValueType typeOf(int typeCode, Block block) {
        try {
            return ValueType.fromCode(typeCode);
        } catch (IllegalArgumentException e) {
            throw new CorruptionException("unknown value type in an internal key", path, block.offset(), e);
        }
    }

    @Override
    public String toString() {
        return "TableReader{" + path + ", #" + fileNumber + ", refs=" + refs.get() + "}";
    }
}

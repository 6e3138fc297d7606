package io.bloomkv.engine.internal.table;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Filters;
import io.bloomkv.bloom.InPlaceFilters;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.ReadableFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The point filter of a table written partitioned (engine/FORMAT.md "Partitioned filter"; format in
 * {@link PartitionedFilter}), as its {@link TableReader} consults it. Three ways to hold it:
 * <ul>
 *   <li>resident (no filter memory budget): every partition loaded off-heap at open and kept for the table's life, as a
 *       whole filter is;</li>
 *   <li>budgeted: only the top-level index is resident (charged to the budget as pinned memory at open); a probe loads
 *       the one partition its hash falls in through the budget's cache, a few KiB, so a table too big for the cache
 *       share is still filtered (RocksDB: {@code partition_filters} with {@code cache_index_and_filter_blocks});</li>
 *   <li>budgeted and pinned ({@link #pin}, chosen by the version's residency pass for level 0 and the upper levels):
 *       every partition loaded and charged as pinned memory.</li>
 *   <li>budgeted, not pinned, and the table read through a mapping ({@link ReadableFile#mappedAddress()}, the default
 *       {@code Options.useMmapReads}): a probe reads the partition where it lies in the mapping, without copying it and
 *       without the cache (LevelDB reads a mapped table's blocks the same way; RocksDB hands out blocks pointing into
 *       a mapping with {@code allow_mmap_reads}). Each partition's block checksum and filter checksum are verified at
 *       its first probe after the table opened, then a bit of {@link #verified} says so; the top-level index and these
 *       bits are the filter memory charged (the pages are the operating system's page cache, shared and reclaimable,
 *       as a mapped table's data blocks are). A probe of a verified partition is a header parse and one cache line:
 *       no system call, no allocation off the heap, no lock.</li>
 * </ul>
 *
 * <p>Failing open: a top-level index that fails its checksum or checks leaves the table without a usable filter
 * ({@link #usable()} false, {@link #problem()} says why); a partition that fails its checksum or format check is
 * reported ({@link #problem()}, {@code TableInfo.filterProblem}) and never loaded again, and each probe falling into it
 * answers "no filter" (the caller reads the table and counts {@code tablesReadWithoutFilter}). An I/O error while loading
 * a partition fails that one probe open. A false negative is never possible.
 *
 * <p>Thread-safe. Lifetime: owned by its table; {@link #close()} is called once by the table's last release.
 */
final class PartitionedFilterReader {
    private final ReadableFile file;
    private final long fileSize;
    private final Path path;
    /** The decoded top-level index, or null when it is unusable ({@link #problem}). */
    private final PartitionedFilter.Index index;
    /** Resident partitions (no budget), null entries for broken ones; null with a budget. */
    private final Filter[] resident;

    private final FilterMemory budget;
    private final long budgetId;
    /** Pin bytes reserved in {@link #budget} for the resident top-level index (0 without a budget or index). */
    private final long indexReserved;
    /** Problems of partitions found broken, by partition; a broken partition is not loaded again. */
    private final AtomicReferenceArray<String> broken;

    /** Budgeted and mapped: the partitions' region of the mapping, probed in place; else null. */
    private final InPlaceFilters inPlace;
    /** Offset in the file of {@link #inPlace}'s first byte (partition 0). */
    private final long inPlaceBase;
    /** With {@link #inPlace}: bit p set once partition p passed both checksums since the table opened. */
    private final AtomicLongArray verified;

    private volatile String problem;
    /** With a budget and pinned: every partition, one reference each held by this reader (null entries: broken). */
    private volatile FilterMemory.Loaded[] pinned;

    private PartitionedFilterReader(
            ReadableFile file,
            long fileSize,
            Path path,
            PartitionedFilter.Index index,
            Filter[] resident,
            FilterMemory budget,
            long budgetId,
            long indexReserved,
            String problem,
            InPlaceFilters inPlace) {
        this.file = file;
        this.fileSize = fileSize;
        this.path = path;
        this.index = index;
        this.resident = resident;
        this.budget = budget;
        this.budgetId = budgetId;
        this.indexReserved = indexReserved;
        this.broken = new AtomicReferenceArray<>(index == null ? 0 : index.count());
        this.problem = problem;
        this.inPlace = inPlace;
        this.inPlaceBase = inPlace == null ? 0 : index.offsets()[0];
        this.verified = inPlace == null ? null : new AtomicLongArray(verifiedWords(index.count()));
        if (resident != null) {
            for (int i = 0; i < resident.length; i++) {
                if (resident[i] == null) {
                    broken.set(i, "unloadable");
                }
            }
        }
    }

    /**
     * Opens the partitioned filter of a table whose properties name one. Without {@code budgetOrNull}, loads every
     * partition; with it, reads only the top-level index and reserves its memory as pinned (when the pin allowance has
     * no room, the table has no usable filter). Never throws for damaged filter bytes (they fail open); I/O errors
     * propagate, as for the table's other blocks at open.
     */
    static PartitionedFilterReader open(
            ReadableFile file, long fileSize, Path path, TableProperties props, FilterMemory budgetOrNull)
            throws IOException {
        long budgetId = budgetOrNull == null ? 0 : FilterMemory.newTableId();
        PartitionedFilter.Index index;
        try {
            BlockHandle h = props.filterPartitionsIndex();
            byte[] b = TableReader.readVerified(file, fileSize, path, h, "filter partition index", false);
            index = PartitionedFilter.decodeIndex(b, (int) h.size(), props.filterPartitions(), h.offset(), path);
        } catch (CorruptionException e) {
            return new PartitionedFilterReader(
                    file, fileSize, path, null, null, budgetOrNull, budgetId, 0, e.getMessage(), null);
        }
        if (budgetOrNull != null) {
            long mapped = file.mappedAddress();
            long charge = index.memoryBytes() + (mapped != 0 ? 8L * verifiedWords(index.count()) : 0);
            if (!budgetOrNull.tryReservePin(charge)) {
                // No room for even the top-level index: read without a filter (not a damage, so no problem reported).
                return new PartitionedFilterReader(
                        file, fileSize, path, null, null, budgetOrNull, budgetId, 0, null, null);
            }
            InPlaceFilters inPlace = null;
            if (mapped != 0) {
                // decodeIndex checked that the partitions lie end to end inside the file, before the index block
                int last = index.count() - 1;
                long from = index.offsets()[0];
                long to = index.offsets()[last] + index.sizes()[last] + TableFormat.BLOCK_TRAILER_SIZE;
                inPlace = InPlaceFilters.wrap(mapped + from, to - from);
            }
            return new PartitionedFilterReader(
                    file, fileSize, path, index, null, budgetOrNull, budgetId, charge, null, inPlace);
        }
        Filter[] parts = new Filter[index.count()];
        String problem = null;
        try {
            for (int i = 0; i < parts.length; i++) {
                try {
                    parts[i] = readPartition(file, fileSize, path, index, i);
                } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
                    if (problem == null) {
                        problem = "filter partition " + i + ": " + e.getMessage();
                    }
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            for (Filter f : parts) {
                if (f != null) {
                    f.close();
                }
            }
            throw e;
        }
        return new PartitionedFilterReader(file, fileSize, path, index, parts, null, budgetId, 0, problem, null);
    }

    /** Reads, verifies and loads partition {@code i} off-heap. */
    private static Filter readPartition(
            ReadableFile file, long fileSize, Path path, PartitionedFilter.Index index, int i) throws IOException {
        BlockHandle h = index.handle(i);
        byte[] b = TableReader.readVerified(file, fileSize, path, h, "filter partition", false);
        return Filters.read(b, 0, (int) h.size());
    }

    /** Whether probes can use the filter (its top-level index loaded). */
    boolean usable() {
        return index != null;
    }

    /** Why (part of) the filter is unusable, or null. */
    String problem() {
        return problem;
    }

    /** Partitions of the table's filter (0 when the top-level index is unusable). */
    int partitionCount() {
        return index == null ? 0 : index.count();
    }

    /** Bytes the partitions take loaded (their stored size): what pinning the filter charges. */
    long partitionBytes() {
        return index == null ? 0 : index.partitionBytes();
    }

    /** Off-heap bytes held for the table's life without a budget (every partition), 0 with one. */
    long residentBytes() {
        long s = 0;
        if (resident != null) {
            for (Filter f : resident) {
                if (f != null) {
                    s += f.sizeInBytes();
                }
            }
        }
        return s;
    }

    /** With a budget: bytes charged to it for this filter now (the index, pinned partitions, cached partitions). */
    long chargedBytes() {
        if (budget == null || index == null) {
            return 0;
        }
        long s = indexReserved;
        if (pinned != null) {
            return s + index.partitionBytes();
        }
        for (int i = 0; i < index.count(); i++) {
            if (budget.isCached(budgetId, i)) {
                s += index.sizes()[i];
            }
        }
        return s;
    }

    boolean pinned() {
        return pinned != null;
    }

    /**
     * One probe: 1 when the filter rules {@code hash} out, 0 when the table may hold it, -1 when no filter could be
     * probed (the index or the hash's partition is unusable, or an I/O error loading it): fail open.
     */
    int probe(long hash) {
        if (index == null) {
            return -1;
        }
        int p = index.partitionOf(hash);
        if (p < 0) {
            return 1; // above the largest hash of the table: no key has it
        }
        if (broken.get(p) != null) {
            return -1;
        }
        long mixed = PartitionedFilter.remix(hash);
        if (resident != null) {
            return resident[p].mightContain(mixed) ? 0 : 1;
        }
        if (inPlace != null && pinned == null) {
            if ((verified.get(p >>> 6) & (1L << p)) == 0 && !verifyInPlace(p)) {
                return -1;
            }
            return inPlace.view(index.offsets()[p] - inPlaceBase, index.sizes()[p])
                            .mightContain(mixed)
                    ? 0
                    : 1;
        }
        FilterMemory.Loaded l = acquire(p);
        if (l == null) {
            return -1;
        }
        try {
            return l.filter().mightContain(mixed) ? 0 : 1;
        } finally {
            l.release();
        }
    }

    private static int verifiedWords(int partitions) {
        return (partitions + 63) >>> 6;
    }

    /**
     * Checks partition {@code p} where it lies in the mapping: its block trailer (CRC32C, read through the file: a copy
     * out of the same mapping) and its filter header and checksum; sets its {@link #verified} bit, or records it broken
     * as {@link #load} does. False when it cannot be probed (broken, or an I/O error: this probe fails open).
     */
    private boolean verifyInPlace(int p) {
        BlockHandle h = index.handle(p);
        try {
            TableReader.readVerified(file, fileSize, path, h, "filter partition", false);
            inPlace.verify(h.offset() - inPlaceBase, h.size());
        } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
            String why = "filter partition " + p + ": " + e.getMessage();
            broken.compareAndSet(p, null, why);
            if (problem == null) {
                problem = why;
            }
            return false;
        } catch (IOException e) {
            return false;
        }
        long bit = 1L << p;
        int w = p >>> 6;
        long old;
        do {
            old = verified.get(w);
        } while ((old & bit) == 0 && !verified.compareAndSet(w, old, old | bit));
        return true;
    }

    /** Whether probes read the partitions in place from the table's mapping (budgeted, mapped, not pinned). */
    boolean probesInPlace() {
        return inPlace != null && pinned == null;
    }

    /** Partition {@code p} retained for one probe (release it): pinned, or through the budget's cache; null if unusable. */
    private FilterMemory.Loaded acquire(int p) {
        FilterMemory.Loaded[] pp = pinned;
        if (pp != null) {
            FilterMemory.Loaded l = pp[p];
            if (l != null && l.tryRetain()) {
                return l;
            }
            if (l == null) {
                return null;
            }
        }
        return budget.acquire(budgetId, p, index.sizes()[p], () -> load(p));
    }

    /**
     * Loads partition {@code p} (one reference held). A partition that fails its checksum or format check is recorded
     * ({@link #problem}) and never loaded again; an I/O error fails this one load (null).
     */
    private FilterMemory.Loaded load(int p) {
        try {
            return new FilterMemory.Loaded(readPartition(file, fileSize, path, index, p), index.sizes()[p]);
        } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
            String why = "filter partition " + p + ": " + e.getMessage();
            broken.compareAndSet(p, null, why);
            if (problem == null) {
                problem = why;
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * With a budget: pins every partition (charged as pinned memory) when {@code pin} and the pin allowance has room,
     * or unpins them when not. Returns whether the filter is pinned afterwards. Called by one residency pass at a time
     * (under the table's lock).
     */
    boolean pin(boolean pin) {
        if (budget == null || index == null) {
            return false;
        }
        FilterMemory.Loaded[] pp = pinned;
        if (!pin) {
            if (pp != null) {
                pinned = null;
                releaseAll(pp);
                budget.unreservePin(index.partitionBytes());
            }
            return false;
        }
        if (pp != null) {
            return true;
        }
        long charge = index.partitionBytes();
        if (!budget.tryReservePin(charge)) {
            return false;
        }
        FilterMemory.Loaded[] loaded = new FilterMemory.Loaded[index.count()];
        for (int i = 0; i < loaded.length; i++) {
            if (broken.get(i) == null) {
                loaded[i] = load(i);
            }
        }
        for (int i = 0; i < loaded.length; i++) {
            budget.evict(budgetId, i); // no second copy in the cache
        }
        pinned = loaded;
        return true;
    }

    private static void releaseAll(FilterMemory.Loaded[] pp) {
        for (FilterMemory.Loaded l : pp) {
            if (l != null) {
                l.release();
            }
        }
    }

    /** Facts of the whole filter, summed or weighted over its partitions (for TableInfo and the dump tool). */
    record Summary(
            FilterKind kind,
            int hashCount,
            long bitSize,
            long keyCount,
            double expectedFpp,
            double fractionOfBitsSet) {}

    /**
     * The {@link Summary} of the partitions that load (resident ones, or each read once from the file, not through the
     * cache, and freed at once); null when none does. Computed at the first call, then kept: Db.tables() asks six facts
     * of every table, which would otherwise read a budgeted table's whole filter six times.
     */
    Summary summary() {
        Summary s = summary;
        if (s == null && index != null) {
            s = computeSummary();
            summary = s; // the partitions never change: computed once (a racing second computation gives the same)
        }
        return s;
    }

    /** The summary of a table's filter, once computed (its partitions are immutable). */
    private volatile Summary summary;

    private Summary computeSummary() {
        FilterKind kind = null;
        int hashCount = 0;
        long bits = 0;
        long keys = 0;
        double fpSum = 0;
        double setBits = 0;
        for (int i = 0; i < index.count(); i++) {
            Filter f = resident != null ? resident[i] : null;
            boolean transient_ = false;
            if (resident == null && broken.get(i) == null) {
                try {
                    f = readPartition(file, fileSize, path, index, i);
                    transient_ = true;
                } catch (IOException | RuntimeException e) {
                    f = null;
                }
            }
            if (f == null) {
                continue;
            }
            try {
                if (kind == null) {
                    kind = f.kind();
                    hashCount = f.hashCount();
                }
                bits += f.bitSize();
                keys += f.keyCount();
                fpSum += f.expectedFpp() * f.keyCount();
                setBits += f.fractionOfBitsSet() * f.bitSize();
            } finally {
                if (transient_) {
                    f.close();
                }
            }
        }
        if (kind == null) {
            return null;
        }
        return new Summary(kind, hashCount, bits, keys, keys == 0 ? 1.0 : fpSum / keys, bits == 0 ? 0 : setBits / bits);
    }

    /** Checks every partition's checksum and format (verifyChecksums), adding what fails to {@code bad}. */
    void verify(List<TableReader.BadBlock> bad) throws IOException {
        if (index == null) {
            return;
        }
        for (int i = 0; i < index.count(); i++) {
            BlockHandle h = index.handle(i);
            try {
                readPartition(file, fileSize, path, index, i).close();
            } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
                bad.add(new TableReader.BadBlock("filter", h.offset(), h.size(), e.getMessage()));
            }
        }
    }

    /** Frees every partition held and returns the budget's reservations. Called once, by the table's last release. */
    void close() {
        if (resident != null) {
            for (Filter f : resident) {
                if (f != null) {
                    f.close();
                }
            }
        }
        if (budget != null && index != null) {
            pin(false);
            for (int i = 0; i < index.count(); i++) {
                budget.evict(budgetId, i);
            }
            if (indexReserved > 0) {
                budget.unreservePin(indexReserved);
            }
        }
        if (inPlace != null) {
            inPlace.close(); // before the table closes its file, which unmaps
        }
    }
}

package io.bloomkv.engine.internal.table;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Filters;
import io.bloomkv.bloom.InPlaceFilters;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.internal.util.RefCount;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.List;

/**
 * The point filter of a table written partitioned (engine/FORMAT.md "Partitioned filter"; format in
 * {@link PartitionedFilter}), as its {@link TableReader} consults it. Four ways to hold it:
 * <ul>
 *   <li>resident (no filter memory budget): every partition loaded off-heap at open and kept for the table's life, as a
 *       whole filter is;</li>
 *   <li>budgeted: only the top-level index and the partitions' descriptors are resident (charged to the budget as
 *       pinned memory at open); a probe loads the one partition its hash falls in through the budget's cache, a few
 *       KiB, so a table too big for the cache share is still filtered (RocksDB: {@code partition_filters} with
 *       {@code cache_index_and_filter_blocks});</li>
 *   <li>budgeted and pinned ({@link #pin}, chosen by the version's residency pass for level 0 and the upper levels):
 *       every partition copied into one off-heap allocation, each at a 64-byte boundary (a BLOCKED partition's blocks
 *       are then cache lines), charged as pinned memory;</li>
 *   <li>budgeted, not pinned, and the table read through a mapping ({@link ReadableFile#mappedAddress()}, the default
 *       {@code Options.useMmapReads}): a probe reads the partition where it lies in the mapping, without copying it and
 *       without the cache (LevelDB reads a mapped table's blocks the same way; RocksDB hands out blocks pointing into
 *       a mapping with {@code allow_mmap_reads}). Each partition's block checksum is verified at its first probe after
 *       the table opened, and its header parsed into its descriptor then; the pages are the operating system's page
 *       cache, shared and reclaimable, as a mapped table's data blocks are, not filter memory.</li>
 * </ul>
 *
 * <p>Descriptors ({@link #described}, {@link InPlaceFilters#describe}): with a budget, two longs per partition hold its
 * parsed header (kind, probes, size) once its bytes passed their checksum, so a probe of a pinned or mapped partition
 * parses nothing and allocates nothing: the top-level lookup, then the partition's cache line(s). Each partition's bytes
 * are checksummed once per load, by the table block's CRC32C (the filter's own CRC32C covers the same bytes and is not
 * computed again).
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
    private static final int D = InPlaceFilters.DESCRIPTOR_LONGS;
    /** Word 0 of the descriptor of a partition found broken: never a descriptor's (its kind byte would be 0xFF). */
    private static final long BROKEN = -1L;
    /** Pinned partitions start at multiples of this in their allocation: a cache line. */
    private static final int ALIGN = 64;

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    private final ReadableFile file;
    private final long fileSize;
    private final Path path;
    /** The decoded top-level index, or null when it is unusable ({@link #problem}). */
    private final PartitionedFilter.Index index;
    /** Resident partitions (no budget), null entries for broken ones; null with a budget. */
    private final Filter[] resident;

    private final FilterMemory budget;
    private final long budgetId;
    /** Pin bytes reserved in {@link #budget} for the top-level index and the descriptors (0 without a budget). */
    private final long indexReserved;
    /**
     * With a budget: {@link InPlaceFilters#DESCRIPTOR_LONGS} longs per partition, its descriptor once its bytes passed
     * their checksum (word 0 written last, with release semantics, read first with acquire), word 0 {@link #BROKEN}
     * when they failed, 0 before. A descriptor holds only the partition's geometry, so it serves the mapped bytes and
     * the pinned copy alike. Null without a budget.
     */
    private final long[] described;

    /**
     * Partitions of an index whose partitions cover equal hash ranges ({@link PartitionedFilter.Index#uniform}), so
     * a probe finds its partition with one multiplication and no load of the index; 0 for other indexes.
     */
    private final int uniformParts;

    /**
     * Budgeted and mapped, with every partition of one stored size: bit p set once partition p passed its checksum
     * and its descriptor equals {@link #inPlaceRun}'s, so probes of p go through the run (no descriptor, no offset
     * loaded). Null otherwise; partitions without their bit take the descriptor path.
     */
    private final long[] sameGeometry;
    /** The run of equal partitions over the mapping, made at the first partition verified in place; see above. */
    private volatile InPlaceFilters.Run inPlaceRun;

    /** Budgeted and mapped: the partitions' region of the mapping, probed in place; else null. */
    private final InPlaceFilters inPlace;
    /** Offset in the file of {@link #inPlace}'s first byte (partition 0). */
    private final long inPlaceBase;

    private volatile String problem;
    /** With a budget and pinned: the copy of every partition (see {@link Pinned}). */
    private volatile Pinned pinned;
    /** Bytes of this filter's unpinned copies still held by Versions (still charged: {@link #chargedBytes()}). */
    private final java.util.concurrent.atomic.AtomicLong retiredBytes = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Every partition of a pinned filter in one allocation. Probes read it without a reference of their own: the reader
     * holds one from {@link #pin} to unpin or close, and so does every live {@code Version} naming the table, from its
     * creation or from the residency pass that pinned the copy while it lived ({@link #retainPinned}), until its own
     * release. A get probes a table only through a Version it holds, so a copy unpinned while gets still read it is
     * freed (and its pin reservation returned) only when the last Version that existed when it was pinned, or was
     * created while it was, is released: no get can be reading it then, and it stays charged until it is freed.
     * RocksDB holds pinned filter blocks through cache handles its table readers own; bloomkv keeps the probe free of
     * a reference count's two atomic updates (level 0 and the upper levels, the pinned ones, are probed by every get)
     * and free to touch the copy before probing it.
     */
    private static final class Pinned implements FilterMemory.Hold {
        final InPlaceFilters memory;
        /** Offset of partition p in {@link #memory} (a multiple of {@link #ALIGN}). */
        final int[] offsets;
        /**
         * Every partition as one run at a fixed stride, when they all passed their checksums with one descriptor and
         * one stored size (tables written since partitions share a geometry); else null and probes use the
         * descriptors and offsets.
         */
        final InPlaceFilters.Run run;

        final long charge;
        final FilterMemory budget;
        final RefCount refs = new RefCount("pinned filter partitions");
        /** Set once, by the unpin, before the reader's reference is released: the charge is retired until freed. */
        private volatile boolean retired;
        /** The reader's count of retired bytes still allocated, which it reports with its charge. */
        private final java.util.concurrent.atomic.AtomicLong retiredOfReader;

        Pinned(
                InPlaceFilters memory,
                int[] offsets,
                InPlaceFilters.Run run,
                long charge,
                FilterMemory budget,
                java.util.concurrent.atomic.AtomicLong retiredOfReader) {
            this.memory = memory;
            this.offsets = offsets;
            this.run = run;
            this.charge = charge;
            this.budget = budget;
            this.retiredOfReader = retiredOfReader;
            FilterMemory.addLive(charge);
        }

        /** The reader's unpin: the copy may live on in Versions, its charge no longer counts as a pin (see FilterMemory). */
        void retire() {
            retired = true;
            retiredOfReader.addAndGet(charge);
            budget.retirePin(charge);
            release();
        }

        @Override
        public void release() {
            if (refs.release()) {
                memory.close();
                FilterMemory.addLive(-charge);
                if (retired) {
                    retiredOfReader.addAndGet(-charge);
                    budget.unreserveRetiredPin(charge);
                } else {
                    budget.unreservePin(charge);
                }
            }
        }
    }

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
        this.described = budget != null && index != null ? new long[D * index.count()] : null;
        this.problem = problem;
        this.inPlace = inPlace;
        this.inPlaceBase = inPlace == null ? 0 : index.offsets()[0];
        this.uniformParts = index != null && index.uniform() ? index.count() : 0;
        this.sameGeometry = inPlace != null && index.sameSizes() ? new long[bitmapLongs(index.count())] : null;
        if (budget != null && inPlace == null) {
            budget.registerReader(); // a reader loading through the cache keeps the slot pool; undone by close()
        }
    }

    /** A buffer per thread for partitions read from the file (a block and its trailer), grown as needed. */
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[8192]);

    private static byte[] scratch(int bytes) {
        byte[] b = SCRATCH.get();
        if (b.length < bytes) {
            b = new byte[Math.max(bytes, 2 * b.length)];
            SCRATCH.set(b);
        }
        return b;
    }

    /**
     * Opens the partitioned filter of a table whose properties name one. Without {@code budgetOrNull}, loads every
     * partition; with it, reads only the top-level index and reserves its memory and the descriptors' as pinned (when
     * the pin allowance has no room, the table has no usable filter). Never throws for damaged filter bytes (they fail
     * open); I/O errors propagate, as for the table's other blocks at open.
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
            long charge = index.memoryBytes()
                    + descriptorBytes(index.count())
                    + (mapped != 0 && index.sameSizes() ? 8L * bitmapLongs(index.count()) + 16 : 0);
            if (!budgetOrNull.tryReservePin(charge, mapped != 0)) {
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

    private static int bitmapLongs(int partitions) {
        return (partitions + 63) >>> 6;
    }

    /** The partition of {@code hash} (see {@link PartitionedFilter.Index#partitionOf}); the index is usable. */
    private int partitionOf(long hash) {
        int n = uniformParts;
        return n > 0 ? PartitionedFilter.uniformPartition(hash, n) : index.partitionOf(hash);
    }

    /** Whether partition {@code p} is probed in place through {@link #inPlaceRun} (see {@link #sameGeometry}). */
    private boolean inRun(int p) {
        long[] same = sameGeometry;
        return same != null && (((long) LONGS.getAcquire(same, p >>> 6) >>> p) & 1) != 0;
    }

    /**
     * Records that partition {@code p}, verified with descriptor {@code d}, lies in the mapping with the run's geometry
     * (making the run from the first partition described): its probes then take the run. A partition whose descriptor
     * differs (a partition with no key) keeps the descriptor path.
     */
    private void noteGeometry(int p, long[] d) {
        if (sameGeometry == null) {
            return;
        }
        InPlaceFilters.Run r = inPlaceRun;
        if (r == null) {
            synchronized (this) {
                r = inPlaceRun;
                if (r == null) {
                    try {
                        r = inPlace.run(
                                0, index.sizes()[0] + TableFormat.BLOCK_TRAILER_SIZE, index.count(), d[0], d[1]);
                    } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
                        return; // partitions not end to end at one stride: every probe keeps the descriptor path
                    }
                    inPlaceRun = r;
                }
            }
        }
        if (r.word0() == d[0] && r.word1() == d[1]) {
            LONGS.getAndBitwiseOrRelease(sameGeometry, p >>> 6, 1L << p); // after the run was published
        }
    }

    /** Heap bytes of the descriptors of {@code partitions} partitions (the array and its header). */
    private static long descriptorBytes(int partitions) {
        return 8L * D * partitions + 16;
    }

    /** Reads partition {@code i}, checks its block checksum (once) and loads it off-heap. */
    private static Filter readPartition(
            ReadableFile file, long fileSize, Path path, PartitionedFilter.Index index, int i) throws IOException {
        BlockHandle h = index.handle(i);
        byte[] b = TableReader.readVerified(file, fileSize, path, h, "filter partition", false);
        return Filters.readWithoutCrc(b, 0, (int) h.size());
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

    /**
     * What pinning the filter charges the budget: the partitions at 64-byte boundaries in one allocation and their
     * offsets in it (the stored sizes rounded up, plus 4 bytes a partition).
     */
    long pinBytes() {
        if (index == null) {
            return 0;
        }
        return pinnedLength(index) + 4L * index.count();
    }

    /** Bytes of the allocation holding every partition at 64-byte boundaries. */
    private static long pinnedLength(PartitionedFilter.Index index) {
        long s = 0;
        for (int size : index.sizes()) {
            s += roundUp(size);
        }
        return s;
    }

    private static long roundUp(long size) {
        return (size + ALIGN - 1) & -ALIGN;
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

    /**
     * With a budget: bytes charged to it for this filter now (the index and descriptors, the pinned copy or the cached
     * partitions, and unpinned copies Versions still hold).
     */
    long chargedBytes() {
        if (budget == null || index == null) {
            return 0;
        }
        long s = indexReserved + retiredBytes.get();
        Pinned pp = pinned;
        if (pp != null) {
            return s + pp.charge;
        }
        for (int i = 0; i < index.count(); i++) {
            s += budget.cachedCharge(budgetId, i);
        }
        return s;
    }

    boolean pinned() {
        return pinned != null;
    }

    /** Word 0 of partition {@code p}'s descriptor as published (0: not described yet; {@link #BROKEN}). */
    private long word0(int p) {
        return (long) LONGS.getAcquire(described, D * p);
    }

    /**
     * One probe: 1 when the filter rules {@code hash} out, 0 when the table may hold it, -1 when no filter could be
     * probed (the index or the hash's partition is unusable, or an I/O error loading it): fail open. With
     * {@code touched}, the caller has called {@link #touch} for the hash first, and the partition's bits are tested
     * without an early exit (the lines are in the cache).
     *
     * <p>Holding contract: the caller holds a Version naming the table (as every get, batch and iterator does), or no
     * residency pass runs concurrently (a table read on its own): a pinned copy is read without a reference.
     */
    int probe(long hash, boolean touched) {
        if (index == null) {
            return -1;
        }
        int p = partitionOf(hash);
        if (p < 0) {
            return 1; // above the largest hash of the table: no key has it
        }
        long mixed = PartitionedFilter.remix(hash);
        if (resident != null) {
            Filter f = resident[p];
            return f == null ? -1 : (touched ? f.mightContainTouched(mixed) : f.mightContain(mixed)) ? 0 : 1;
        }
        Pinned pp = pinned; // no reference taken: the Version the caller holds holds one (see Pinned)
        if (pp != null && pp.run != null) {
            return (touched ? pp.run.mightContainTouched(p, mixed) : pp.run.mightContain(p, mixed)) ? 0 : 1;
        }
        if (pp == null && inRun(p)) {
            InPlaceFilters.Run r = inPlaceRun; // published before the bit
            return (touched ? r.mightContainTouched(p, mixed) : r.mightContain(p, mixed)) ? 0 : 1;
        }
        if (pp != null) {
            long w0 = word0(p);
            if (w0 == BROKEN || w0 == 0) {
                return -1; // (0 never: pin describes every partition it does not find broken)
            }
            long w1 = described[D * p + 1];
            long at = pp.offsets[p];
            return (touched
                            ? pp.memory.mightContainTouched(at, w0, w1, mixed)
                            : pp.memory.mightContain(at, w0, w1, mixed))
                    ? 0
                    : 1;
        }
        if (inPlace != null) {
            long w0 = word0(p);
            if (w0 == 0) {
                w0 = verifyInPlace(p);
            }
            if (w0 == BROKEN || w0 == 0) {
                return -1;
            }
            long w1 = described[D * p + 1];
            long at = index.offsets()[p] - inPlaceBase;
            return (touched ? inPlace.mightContainTouched(at, w0, w1, mixed) : inPlace.mightContain(at, w0, w1, mixed))
                    ? 0
                    : 1;
        }
        if (word0(p) == BROKEN) {
            return -1;
        }
        FilterMemory.Loaded l = budget.acquire(budgetId, p, FilterMemory.slotBytes(index.sizes()[p]), () -> load(p));
        if (l == null) {
            return -1;
        }
        try {
            return l.mightContain(mixed) ? 0 : 1;
        } finally {
            l.release();
        }
    }

    /**
     * {@link #probe} from memory only ({@code Db.keyMayExist}, which reads no file): the same answer where the hash's
     * partition is resident, pinned, verified in the mapping or in the budget's cache (looked up without recording an
     * access, {@link FilterMemory#peek}); -1 (not probed: the table may hold the key) where the probe would first load
     * the partition into the cache or verify it in the mapping, both of which read the file. Same holding contract as
     * {@link #probe}.
     */
    int probeResident(long hash) {
        if (index == null || resident != null) {
            return probe(hash, false); // no usable index (-1), or every partition resident: nothing to read
        }
        int p = partitionOf(hash);
        if (p < 0) {
            return 1;
        }
        long mixed = PartitionedFilter.remix(hash);
        Pinned pp = pinned;
        if (pp != null && pp.run != null) {
            return pp.run.mightContain(p, mixed) ? 0 : 1;
        }
        if (pp == null && inRun(p)) {
            return inPlaceRun.mightContain(p, mixed) ? 0 : 1;
        }
        if (pp != null || inPlace != null) {
            long w0 = word0(p); // 0 in the mapping: not verified yet (verifying reads the file)
            if (w0 == BROKEN || w0 == 0) {
                return -1;
            }
            InPlaceFilters memory = pp != null ? pp.memory : inPlace;
            long at = pp != null ? pp.offsets[p] : index.offsets()[p] - inPlaceBase;
            return memory.mightContain(at, w0, described[D * p + 1], mixed) ? 0 : 1;
        }
        return FilterMemory.Loaded.probeAndRelease(word0(p) == BROKEN ? null : budget.peek(budgetId, p), mixed);
    }

    /**
     * Loads a word of each cache line the probe of {@code hash} will read first and returns it (the caller folds the
     * words into a value it keeps): a get touches the filters of all its candidate tables before probing any, so their
     * cache misses overlap. Touches resident, pinned and mapped partitions already described; not a partition of the
     * cache (0), which would cost a lookup. Same holding contract as {@link #probe}.
     */
    long touch(long hash) {
        if (index == null || (resident == null && pinned == null && inPlace == null)) {
            return 0;
        }
        int p = partitionOf(hash);
        if (p < 0) {
            return 0;
        }
        long mixed = PartitionedFilter.remix(hash);
        if (resident != null) {
            Filter f = resident[p];
            return f == null ? 0 : f.touch(mixed);
        }
        Pinned run = pinned;
        if (run != null && run.run != null) {
            return run.run.touch(p, mixed);
        }
        if (run == null && inRun(p)) {
            return inPlaceRun.touch(p, mixed);
        }
        long w0 = word0(p);
        if (w0 == 0 || w0 == BROKEN) {
            return 0;
        }
        Pinned pp = pinned;
        if (pp != null) {
            return pp.memory.touch(pp.offsets[p], w0, described[D * p + 1], mixed);
        }
        return inPlace.touch(index.offsets()[p] - inPlaceBase, w0, described[D * p + 1], mixed);
    }

    /**
     * The pinned copy with one more reference, for a Version naming the table (see {@link Pinned}), or null when the
     * filter is not pinned.
     */
    FilterMemory.Hold retainPinned() {
        Pinned pp = pinned;
        return pp != null && pp.refs.tryRetain() ? pp : null;
    }

    /**
     * Checks partition {@code p} where it lies in the mapping: its block trailer (CRC32C, read through the file: a copy
     * out of the same mapping) and its filter header, whose descriptor it publishes; or records it broken as
     * {@link #load} does. Returns the descriptor's word 0, {@link #BROKEN}, or 0 after an I/O error (this probe fails
     * open; the next one tries again).
     */
    private long verifyInPlace(int p) {
        BlockHandle h = index.handle(p);
        long[] d = new long[D];
        try {
            TableReader.readVerified(
                    file,
                    fileSize,
                    path,
                    h,
                    "filter partition",
                    false,
                    scratch((int) h.size() + TableFormat.BLOCK_TRAILER_SIZE));
            inPlace.describe(h.offset() - inPlaceBase, h.size(), d, 0);
        } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
            markBroken(p, e);
            return BROKEN;
        } catch (IOException e) {
            return 0;
        }
        publish(p, d);
        noteGeometry(p, d);
        return d[0];
    }

    /** Publishes partition {@code p}'s descriptor: word 1 first, then word 0 with release semantics. */
    private void publish(int p, long[] d) {
        described[D * p + 1] = d[1];
        LONGS.setRelease(described, D * p, d[0]);
    }

    /** Records partition {@code p} broken: it is never loaded again, and probes falling into it fail open. */
    private void markBroken(int p, Exception e) {
        String why = "filter partition " + p + ": " + e.getMessage();
        LONGS.setRelease(described, D * p, BROKEN);
        if (problem == null) {
            problem = why;
        }
    }

    /** Partitions probes reach through a run ({@link Pinned#run}, or {@link #sameGeometry}'s bits when not pinned). */
    int partitionsInRun() {
        Pinned pp = pinned;
        if (pp != null) {
            return pp.run == null ? 0 : pp.run.count();
        }
        int n = 0;
        if (sameGeometry != null) {
            for (int i = 0; i < sameGeometry.length; i++) {
                n += Long.bitCount((long) LONGS.getAcquire(sameGeometry, i));
            }
        }
        return n;
    }

    /** Whether probes read the partitions in place from the table's mapping (budgeted, mapped, not pinned). */
    boolean probesInPlace() {
        return inPlace != null && pinned == null;
    }

    /**
     * Loads partition {@code p} into the budget's cache (one reference held): read into this thread's buffer, its block
     * checksum checked once, copied into a recycled slot ({@link FilterMemory#takeSlot}) and its header parsed into the
     * entry's descriptor. A partition that fails its checksum or format check is recorded ({@link #problem}) and never
     * loaded again; an I/O error fails this one load (null).
     */
    private FilterMemory.Loaded load(int p) {
        BlockHandle h = index.handle(p);
        int n = index.sizes()[p];
        FilterMemory.Slot slot = null;
        try {
            byte[] b = TableReader.readVerified(
                    file, fileSize, path, h, "filter partition", false, scratch(n + TableFormat.BLOCK_TRAILER_SIZE));
            slot = budget.takeSlot(FilterMemory.slotBytes(n));
            slot.memory().write(0, b, 0, n);
            long[] d = new long[D];
            slot.memory().describe(0, n, d, 0);
            return new FilterMemory.Loaded(slot.memory(), d[0], d[1], slot.bytes(), budget);
        } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
            if (slot != null) {
                budget.recycle(slot.memory(), slot.bytes());
            }
            markBroken(p, e);
            return null;
        } catch (IOException e) {
            return null; // no slot taken yet: the read comes first
        }
    }

    /**
     * With a budget: pins every partition (charged as pinned memory, {@link #pinBytes()}) when {@code pin} and the pin
     * allowance has room, or unpins them when not. Returns whether the filter is pinned afterwards. Called by one
     * residency pass at a time (under the table's lock). A partition that fails its checksum is recorded broken (probes
     * falling into it fail open); an I/O error leaves the filter unpinned.
     */
    boolean pin(boolean pin) {
        if (budget == null || index == null) {
            return false;
        }
        Pinned pp = pinned;
        if (!pin) {
            if (pp != null) {
                pinned = null;
                pp.retire(); // freed now, or when the last Version holding it is released
            }
            return false;
        }
        if (pp != null) {
            return true;
        }
        long length = pinnedLength(index);
        long charge = pinBytes();
        if (length > Integer.MAX_VALUE || !budget.tryReservePin(charge, inPlace != null)) {
            return false;
        }
        InPlaceFilters memory = null;
        try {
            memory = InPlaceFilters.allocate(length);
            int[] offsets = new int[index.count()];
            long[] d = new long[D];
            long[] first = null; // the descriptor all partitions share, while they do
            boolean same = index.sameSizes();
            int at = 0;
            for (int p = 0; p < offsets.length; p++) {
                offsets[p] = at;
                if (word0(p) != BROKEN) {
                    BlockHandle h = index.handle(p);
                    try {
                        byte[] b = TableReader.readVerified(
                                file,
                                fileSize,
                                path,
                                h,
                                "filter partition",
                                false,
                                scratch((int) h.size() + TableFormat.BLOCK_TRAILER_SIZE));
                        memory.write(at, b, 0, (int) h.size());
                        memory.describe(at, h.size(), d, 0);
                        publish(p, d);
                        noteGeometry(p, d); // mapped: the same bytes, probed in place if ever unpinned
                        if (first == null) {
                            first = d.clone();
                        } else if (first[0] != d[0] || first[1] != d[1]) {
                            same = false;
                        }
                    } catch (CorruptionException | IllegalArgumentException | IndexOutOfBoundsException e) {
                        markBroken(p, e);
                        same = false;
                    }
                } else {
                    same = false;
                }
                at += (int) roundUp(index.sizes()[p]);
            }
            InPlaceFilters.Run run = same && first != null
                    ? memory.run(0, roundUp(index.sizes()[0]), index.count(), first[0], first[1])
                    : null;
            pinned = new Pinned(memory, offsets, run, charge, budget, retiredBytes);
        } catch (IOException e) {
            memory.close(); // allocate does not throw IOException: memory is set
            budget.unreservePin(charge);
            return false;
        } catch (RuntimeException | Error e) {
            if (memory != null) {
                memory.close();
            }
            budget.unreservePin(charge);
            throw e;
        }
        for (int i = 0; i < index.count(); i++) {
            budget.evict(budgetId, i); // no second copy in the cache
        }
        return true;
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
     * cache, and freed at once); null when none does. Computed on each call: TableReader keeps the result for the
     * table's life (TableReader#filterSummary).
     */
    Summary summary() {
        return index == null ? null : computeSummary();
    }

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
            if (resident == null && word0(i) != BROKEN) {
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

    /**
     * Checks every partition's checksums and format (verifyChecksums), adding what fails to {@code bad}: the block's
     * CRC32C and the filter's own, both, as a full check of the file should.
     */
    void verify(List<TableReader.BadBlock> bad) throws IOException {
        if (index == null) {
            return;
        }
        for (int i = 0; i < index.count(); i++) {
            BlockHandle h = index.handle(i);
            try {
                byte[] b = TableReader.readVerified(file, fileSize, path, h, "filter partition", false);
                Filters.read(b, 0, (int) h.size()).close();
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
        if (budget != null && inPlace == null) {
            budget.unregisterReader(); // after its partitions went back to the pool
        }
        if (inPlace != null) {
            inPlace.close(); // before the table closes its file, which unmaps
        }
    }
}

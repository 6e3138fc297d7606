package io.bloomkv.engine.internal.version;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.table.BlockCache;
import io.bloomkv.engine.internal.table.FilterMemory;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.table.TableReadMode;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The open {@link TableReader}s of one database, by file number. Every live table stays open (its
 * filter in off-heap memory) until it is evicted, which happens when no live {@link Version} names
 * it any more. The cache owns the opener's reference of each reader; each Version holds one more
 * reference of each of its tables, so a reader's memory is freed exactly once, when both are gone.
 */
public final class TableCache implements AutoCloseable {
    private final FileSystem fs;
    private final Path dir;
    private final BlockCache blockCache;
    private final ReadCounters counters;
    private final TableReadMode readMode;
    /** The filter memory budget the tables' filters are charged to, or null: every filter resident. */
    private final FilterMemory filterMemory;

    private final ConcurrentHashMap<Long, TableReader> open = new ConcurrentHashMap<>();
    private final AtomicLong opened = new AtomicLong();
    private final AtomicLong evicted = new AtomicLong();

    public TableCache(FileSystem fs, Path dir, BlockCache blockCacheOrNull, ReadCounters counters) {
        this(fs, dir, blockCacheOrNull, counters, TableReadMode.PREAD);
    }

    /** Tables are opened for {@code readMode}'s reads ({@link TableReader#open(FileSystem, Path, long, BlockCache, ReadCounters, TableReadMode)}). */
    public TableCache(
            FileSystem fs, Path dir, BlockCache blockCacheOrNull, ReadCounters counters, TableReadMode readMode) {
        this(fs, dir, blockCacheOrNull, counters, readMode, null);
    }

    /** As the five-argument constructor, the tables' filters charged to {@code filterMemoryOrNull}. */
    public TableCache(
            FileSystem fs,
            Path dir,
            BlockCache blockCacheOrNull,
            ReadCounters counters,
            TableReadMode readMode,
            FilterMemory filterMemoryOrNull) {
        this.filterMemory = filterMemoryOrNull;
        this.readMode = readMode;
        this.fs = fs;
        this.dir = dir;
        this.blockCache = blockCacheOrNull;
        this.counters = counters;
    }

    /** Opens table {@code number} unless it is open already; returns its reader. */
    public TableReader open(long number) throws IOException {
        TableReader r = open.get(number);
        if (r != null) {
            return r;
        }
        synchronized (this) {
            r = open.get(number);
            if (r == null) {
                r = TableReader.open(
                        fs, FileNames.tableFile(dir, number), number, blockCache, counters, readMode, filterMemory);
                open.put(number, r);
                opened.incrementAndGet();
            }
            return r;
        }
    }

    /** The reader of an open table. @throws IllegalStateException when it is not open */
    public TableReader get(long number) {
        TableReader r = open.get(number);
        if (r == null) {
            throw new IllegalStateException("table " + number + " is not open");
        }
        return r;
    }

    public boolean isOpen(long number) {
        return open.containsKey(number);
    }

    /** Drops the cache's reference of table {@code number} (no-op when not open). */
    public void evict(long number) {
        TableReader r = open.remove(number);
        if (r != null) {
            evicted.incrementAndGet();
            r.close();
        }
    }

    public List<Long> openNumbers() {
        return new ArrayList<>(open.keySet());
    }

    /** Readers opened so far. */
    public long openedCount() {
        return opened.get();
    }

    /** Readers evicted so far. */
    public long evictedCount() {
        return evicted.get();
    }

    /** The filter memory budget, or null. */
    public FilterMemory filterMemory() {
        return filterMemory;
    }

    /**
     * With a filter memory budget, decides which filters of the tables of {@code levels} (the Version about to be
     * installed) stay pinned: level 0 first, then each level
     * down, table by table, while this database's pins fit what the budget's pin allowance leaves it (the allowance less
     * the pins of other databases sharing the budget); the rest are loaded on demand through the budget's cache. The
     * deepest levels, the bulk of the filter memory and the least often probed per byte, are the ones cached (RocksDB:
     * {@code pin_l0_filter_and_index_blocks_in_cache}, {@code pin_top_level_index_and_filter}). Unpins before it pins,
     * so a table that moved down frees its room for the new upper tables (its copy is freed once no Version holds it,
     * see {@code TableReader#retainPinnedFilter}). Called before each Version is created and installed, under the
     * VersionSet's lock (one pass at a time per database), so the new Version holds exactly the copies pinned for it.
     * Returns the tables this pass pinned that were not pinned before.
     */
    public List<TableReader> planFilterResidency(List<List<FileMetaData>> levels) {
        if (filterMemory == null) {
            return List.of();
        }
        long mine = 0;
        for (List<FileMetaData> level : levels) {
            for (FileMetaData f : level) {
                TableReader r = get(f.number());
                if (r.filterPinned()) {
                    mine += r.filterBlockSize();
                }
            }
        }
        // A database reading through mappings may pin up to the whole budget: its unpinned partitions are probed in
        // place and leave the cache empty (FilterMemory.tryReservePin(long, boolean)).
        long room = filterMemory.pinAvailableBytes(readMode == TableReadMode.MMAP) + mine;
        List<TableReader> pin = new ArrayList<>();
        List<TableReader> unpin = new ArrayList<>();
        boolean full = false;
        for (List<FileMetaData> level : levels) {
            for (FileMetaData f : level) {
                TableReader r = get(f.number());
                long size = r.filterBlockSize();
                if (size == 0 || !r.hasFilter()) {
                    continue;
                }
                if (!full && size <= room) {
                    room -= size;
                    pin.add(r);
                } else {
                    full = true; // keep the pinned set a prefix of the levels
                    unpin.add(r);
                }
            }
        }
        for (TableReader r : unpin) {
            r.pin(false);
        }
        List<TableReader> pinned = new ArrayList<>();
        boolean complete = true;
        for (TableReader r : pin) {
            boolean was = r.filterPinned();
            if (r.pin(true)) {
                if (!was) {
                    pinned.add(r);
                }
            } else {
                complete = false;
            }
        }
        residencyComplete = complete;
        return pinned;
    }

    /** Whether the last residency pass pinned every table it chose (it may not while unpinned copies are held). */
    public boolean residencyComplete() {
        return residencyComplete;
    }

    /** Set by each residency pass (under the VersionSet's lock, as the passes). */
    private boolean residencyComplete = true;

    public Path directory() {
        return dir;
    }

    /** Evicts every table. */
    @Override
    public void close() {
        for (Long n : openNumbers()) {
            evict(n);
        }
    }
}

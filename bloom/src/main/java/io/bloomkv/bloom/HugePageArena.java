package io.bloomkv.bloom;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.openhft.posix.MAdviseFlag;
import net.openhft.posix.PosixAPI;

/**
 * Off-heap memory for filter bodies, on transparent huge pages where the kernel has them.
 *
 * <p>Why: a filter probe is one random cache line in a body of hundreds of kilobytes, and a database of 10M keys
 * has 12.5 MB of filters at 10 bits per key. On 4 KiB pages that is 3,000 pages, more than the second-level TLB
 * holds, so nearly every probe also misses the TLB, and under a hypervisor each miss is a two-dimensional page walk.
 * On 2 MiB pages the same bodies need a few TLB entries, and a random load is about one memory access instead of a
 * page walk plus one (bench/RESULTS.md keeps the measurement). RocksDB offers the same for its memtable arenas
 * ({@code memtable_huge_page_size}).
 *
 * <p>How: memory is mapped anonymously with {@code mmap}, aligned to 2 MiB, and advised with
 * {@code madvise(MADV_HUGEPAGE)} (the kernel's default THP mode, {@code madvise}, backs only advised memory with huge
 * pages). The system calls come from Chronicle's {@code net.openhft:posix}, which Chronicle Bytes already depends on,
 * so Java 17 needs no JNI of its own. Bodies of up to {@link #LARGE} bytes are carved first-fit from 8 MiB slabs;
 * larger bodies get their own 2 MiB-aligned mapping (whole huge pages, then 4 KiB pages for the tail). A slab whose
 * last body is freed is unmapped, except one kept empty so that a table opened after one closed does not map again.
 *
 * <p>Every allocation is recorded, so freeing an address twice, or one the arena never gave, is an
 * {@link IllegalStateException}: memory is released exactly once. Thread-safe (allocations happen when a table is
 * opened, not on the read path).
 *
 * <p>{@link #shared()} is the arena of the process, or null (bodies then come from {@code malloc} through Chronicle,
 * on 4 KiB pages) when the system property {@value #PROPERTY} is {@code false}, the OS is not Linux, native access
 * is off on Java 24+ ({@link JvmEnvironment}), or mapping fails.
 */
final class HugePageArena {
    /** System property that turns the arena off ({@code -Dbloomkv.filters.hugePages=false}). */
    static final String PROPERTY = "bloomkv.filters.hugePages";

    static final long HUGE_PAGE = 2L << 20;
    static final long SLAB = 8L << 20;
    /** Bodies above this get their own mapping. */
    static final long LARGE = SLAB / 4;

    static final long PAGE = 4096;
    private static final int ALIGN = OffHeapRegion.ALIGNMENT;
    // Linux mmap constants, the same on x86-64 and aarch64
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;

    private static final HugePageArena SHARED = open();

    /** The system calls the arena makes; the real ones, or a test's. */
    interface Pages {
        /** Maps {@code length} zeroed bytes read-write; returns the address, or -1 (or 0) on failure. */
        long map(long length);

        void unmap(long address, long length);

        /** Advises huge pages for the range; false if the kernel refused. */
        boolean adviseHuge(long address, long length);
    }

    private final Pages pages;
    private final List<Slab> slabs = new ArrayList<>();
    /** Address of each live allocation to its rounded size; large ones also in {@link #large}. */
    private final Map<Long, Long> live = new HashMap<>();

    private final Map<Long, Long> large = new HashMap<>();
    private long liveBytes;
    private long mappedBytes;
    private boolean advised = true;

    HugePageArena(Pages pages) {
        this.pages = pages;
    }

    /** The process's arena, or null where huge-page filter memory is off or unavailable (see class doc). */
    static HugePageArena shared() {
        return SHARED;
    }

    private static HugePageArena open() {
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))
                || !System.getProperty("os.name", "").startsWith("Linux")
                || !JvmEnvironment
                        .nativeAccessEnabled()) { // Java 24+ without native access: no JNI (see JvmEnvironment)
            return null;
        }
        try {
            HugePageArena arena = new HugePageArena(posixPages());
            arena.free(arena.allocate(ALIGN)); // maps the first slab: proves the calls work here
            return arena;
        } catch (RuntimeException | LinkageError | OutOfMemoryError e) {
            return null; // no usable mmap (e.g. no native access): malloc'd bodies instead
        }
    }

    /** The real system calls (for an arena of one's own; tests). */
    static Pages posixPages() {
        return new PosixPages(PosixAPI.posix());
    }

    /**
     * {@code length} bytes starting on a 64-byte boundary. The memory is not zeroed when it is reused.
     *
     * @throws OutOfMemoryError if the OS refuses the mapping
     */
    synchronized long allocate(long length) {
        if (length <= 0) {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        long size = roundUp(length, ALIGN);
        long address;
        if (size > LARGE) {
            long mapped = roundUp(size, PAGE);
            address = mapAligned(mapped);
            large.put(address, mapped);
        } else {
            address = -1;
            for (Slab s : slabs) {
                address = s.take(size);
                if (address >= 0) {
                    break;
                }
            }
            if (address < 0) {
                Slab s = new Slab(mapAligned(SLAB));
                slabs.add(s);
                address = s.take(size);
            }
        }
        live.put(address, size);
        liveBytes += size;
        return address;
    }

    /**
     * Gives back an allocation.
     *
     * @throws IllegalStateException if {@code address} is not a live allocation of this arena (freed twice, or never given)
     */
    synchronized void free(long address) {
        Long size = live.remove(address);
        if (size == null) {
            throw new IllegalStateException("not a live allocation: 0x" + Long.toHexString(address));
        }
        liveBytes -= size;
        Long mapped = large.remove(address);
        if (mapped != null) {
            unmap(address, mapped);
            return;
        }
        Slab owner = null;
        for (Slab s : slabs) {
            if (address >= s.base && address < s.base + SLAB) {
                owner = s;
                break;
            }
        }
        if (owner == null) {
            throw new IllegalStateException("live allocation outside every slab: 0x" + Long.toHexString(address));
        }
        owner.give(address, size);
        if (owner.used == 0) {
            releaseEmptySlabsBut(owner);
        }
    }

    /** Unmaps the empty slabs other than {@code keep}, so at most one empty slab stays mapped. */
    private void releaseEmptySlabsBut(Slab keep) {
        for (Iterator<Slab> it = slabs.iterator(); it.hasNext(); ) {
            Slab s = it.next();
            if (s != keep && s.used == 0) {
                it.remove();
                unmap(s.base, SLAB);
            }
        }
    }

    /** Bytes handed out and not yet freed (each rounded up to 64). */
    synchronized long liveBytes() {
        return liveBytes;
    }

    /** Bytes mapped: slabs, including one kept empty, and large allocations. */
    synchronized long mappedBytes() {
        return mappedBytes;
    }

    synchronized int slabCount() {
        return slabs.size();
    }

    /** False once the kernel refused {@code MADV_HUGEPAGE} (THP disabled): the memory then works on 4 KiB pages. */
    synchronized boolean hugePagesAdvised() {
        return advised;
    }

    private long mapAligned(long length) {
        long raw = pages.map(length + HUGE_PAGE);
        if (raw == -1 || raw == 0) {
            throw new OutOfMemoryError("mmap of " + (length + HUGE_PAGE) + " bytes for filters failed");
        }
        long aligned = roundUp(raw, HUGE_PAGE);
        if (aligned > raw) {
            pages.unmap(raw, aligned - raw);
        }
        long tail = raw + length + HUGE_PAGE - (aligned + length);
        if (tail > 0) {
            pages.unmap(aligned + length, tail);
        }
        if (!pages.adviseHuge(aligned, length)) {
            advised = false;
        }
        mappedBytes += length;
        return aligned;
    }

    private void unmap(long address, long length) {
        pages.unmap(address, length);
        mappedBytes -= length;
    }

    static long roundUp(long n, long to) {
        return (n + to - 1) / to * to;
    }

    /** One slab: its free ranges, offset to length, adjacent ones merged. */
    private static final class Slab {
        final long base;
        final TreeMap<Long, Long> free = new TreeMap<>();
        long used;

        Slab(long base) {
            this.base = base;
            free.put(0L, SLAB);
        }

        /** First fit; the address, or -1 when no free range is large enough. */
        long take(long size) {
            for (Map.Entry<Long, Long> e : free.entrySet()) {
                // key and length are read before the removal: TreeMap may reuse the removed node for its successor
                long off = e.getKey();
                long len = e.getValue();
                if (len >= size) {
                    free.remove(off);
                    if (len > size) {
                        free.put(off + size, len - size);
                    }
                    used += size;
                    return base + off;
                }
            }
            return -1;
        }

        void give(long address, long size) {
            long off = address - base;
            long len = size;
            Map.Entry<Long, Long> before = free.floorEntry(off);
            if (before != null && before.getKey() + before.getValue() > off) {
                throw new IllegalStateException("range freed twice at slab offset " + off);
            }
            if (before != null && before.getKey() + before.getValue() == off) {
                off = before.getKey();
                len += before.getValue();
                free.remove(before.getKey());
            }
            Long after = free.ceilingKey(off + len);
            if (after != null && after == off + len) {
                len += free.remove(after);
            }
            free.put(off, len);
            used -= size;
        }
    }

    /** The real system calls, through Chronicle's posix binding. */
    private static final class PosixPages implements Pages {
        private final PosixAPI posix;

        PosixPages(PosixAPI posix) {
            this.posix = posix;
        }

        @Override
        public long map(long length) {
            return posix.mmap(0, length, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0);
        }

        @Override
        public void unmap(long address, long length) {
            if (posix.munmap(address, length) != 0) {
                throw new IllegalStateException("munmap(0x" + Long.toHexString(address) + ", " + length + ") failed");
            }
        }

        @Override
        public boolean adviseHuge(long address, long length) {
            return posix.madvise(address, length, MAdviseFlag.MADV_HUGEPAGE) == 0;
        }
    }
}

package io.bloomkv.bloom;

import java.nio.MappedByteBuffer;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.bytes.PointerBytesStore;
import net.openhft.chronicle.core.UnsafeMemory;

/**
 * A bounds-checked window [base, base + length) of a Chronicle {@link BytesStore}. Chronicle's native
 * store performs no bounds checks, so every access goes through {@link #checkIndex} (a filter probe checks its
 * cache line once with {@link #checkRange}, then reads its words with {@link #readLongInRange}). The region holds its
 * store through a Chronicle {@link Bytes} handle, which Chronicle's reference tracing monitors (bare native
 * stores are not), so {@code AbstractReferenceCounted.assertReferencesReleased()} reports a leaked filter.
 * {@link #release()} gives every reference back exactly once; the caller guarantees it is called once and
 * nothing is accessed afterwards.
 */
final class OffHeapRegion {
    /** Blocks of the blocked layout are one cache line; allocated bodies start on this boundary. */
    static final int ALIGNMENT = 64;

    static {
        JvmEnvironment.ensureInitialized(); // before the first Chronicle class is initialised
    }

    private final Bytes<?> handle;
    private final boolean storeHasOwnReference;
    private final BytesStore<?, ?> store;
    private final long base;
    private final long length;
    /** Native address of byte 0 of the region (every region is native memory: allocated, arena or mapped). */
    private final long address;

    private final boolean readOnly;
    /** The arena the memory came from (freed to it on release), or null. */
    private final HugePageArena arena;

    private final long arenaAddress;

    /**
     * A window {@code [base, base + length)} of {@code parent} that owns nothing: it shares the parent's store and
     * address, and its {@link #release()} does nothing (the parent's owner releases the memory, after the last use of
     * every slice). For filters probed in place ({@link InPlaceFilters}).
     */
    private OffHeapRegion(OffHeapRegion parent, long base, long length) {
        if (base < 0 || length < 0 || base > parent.length - length) {
            throw new IndexOutOfBoundsException(
                    "slice [" + base + ", " + (base + length) + ") outside region of " + parent.length + " bytes");
        }
        this.handle = null;
        this.storeHasOwnReference = false;
        this.store = parent.store;
        this.base = parent.base + base;
        this.length = length;
        this.readOnly = true;
        this.arena = null;
        this.arenaAddress = 0;
        this.address = parent.address + base;
    }

    private OffHeapRegion(Bytes<?> handle, boolean storeHasOwnReference, long base, long length, boolean readOnly) {
        this(handle, storeHasOwnReference, base, length, readOnly, null, 0);
    }

    private OffHeapRegion(
            Bytes<?> handle,
            boolean storeHasOwnReference,
            long base,
            long length,
            boolean readOnly,
            HugePageArena arena,
            long arenaAddress) {
        BytesStore<?, ?> store = handle.bytesStore();
        if (base < 0 || length < 0 || base + length > store.realCapacity()) {
            throw new IllegalArgumentException("region [" + base + ", " + (base + length) + ") outside store of "
                    + store.realCapacity() + " bytes");
        }
        this.handle = handle;
        this.storeHasOwnReference = storeHasOwnReference;
        this.store = store;
        this.base = base;
        this.length = length;
        this.readOnly = readOnly;
        this.arena = arena;
        this.arenaAddress = arenaAddress;
        if (!store.isDirectMemory()) {
            throw new IllegalArgumentException("an off-heap region needs native memory");
        }
        this.address = store.addressForRead(base);
    }

    /**
     * Fresh zeroed native memory of {@code length} bytes starting on a 64-byte boundary: from the process's
     * {@link HugePageArena} (huge pages), or where that is off or unavailable, from {@code malloc} through Chronicle.
     */
    static OffHeapRegion allocate(long length) {
        return allocate(length, HugePageArena.shared());
    }

    /** As {@link #allocate(long)}, from {@code arena} (null: {@code malloc}). */
    static OffHeapRegion allocate(long length, HugePageArena arena) {
        if (length <= 0 || length % 8 != 0) {
            throw new IllegalArgumentException("length must be a positive multiple of 8: " + length);
        }
        if (arena != null) {
            return allocateIn(arena, length);
        }
        Bytes<Void> handle = Bytes.allocateDirect(length + ALIGNMENT);
        try {
            BytesStore<?, ?> store = handle.bytesStore();
            store.zeroOut(0, length + ALIGNMENT);
            long address = store.addressForRead(0);
            long base = (-address) & (ALIGNMENT - 1);
            return new OffHeapRegion(handle, false, base, length, false);
        } catch (RuntimeException | Error e) {
            handle.releaseLast();
            throw e;
        }
    }

    /**
     * The arena's memory is wrapped in a Chronicle pointer store of its own, held through a {@link Bytes} handle, so
     * Chronicle's reference tracing reports a leaked arena filter as it does a malloc'd one.
     */
    private static OffHeapRegion allocateIn(HugePageArena arena, long length) {
        long address = arena.allocate(length);
        PointerBytesStore store = null;
        Bytes<?> handle = null;
        try {
            store = new PointerBytesStore();
            store.set(address, length);
            store.zeroOut(0, length);
            handle = store.bytesForRead();
            return new OffHeapRegion(handle, true, 0, length, false, arena, address);
        } catch (RuntimeException | Error e) {
            if (handle != null) {
                handle.releaseLast();
            }
            if (store != null) {
                store.releaseLast();
            }
            arena.free(address);
            throw e;
        }
    }

    /**
     * A read-only view of {@code buffer[base, base+length)}. The buffer is wrapped, not copied; releasing the
     * region releases the wrapping store, which unmaps the buffer (Chronicle cleans a wrapped direct buffer
     * when its last reference goes).
     */
    static OffHeapRegion wrapMapped(MappedByteBuffer buffer, long base, long length) {
        BytesStore<?, ?> store = BytesStore.wrap(buffer);
        Bytes<?> handle = null;
        try {
            handle = store.bytesForRead();
            return new OffHeapRegion(handle, true, base, length, true);
        } catch (RuntimeException | Error e) {
            if (handle != null) {
                handle.releaseLast();
            }
            store.releaseLast();
            throw e;
        }
    }

    /**
     * A read-only view of native memory {@code [address, address + length)} that the caller owns and keeps readable
     * until after {@link #release()}: wrapped in a Chronicle pointer store held through a {@link Bytes} handle (so a
     * leaked view is reported like a leaked filter); releasing it frees nothing but the handle.
     */
    static OffHeapRegion wrapPointer(long address, long length) {
        if (address == 0 || length <= 0) {
            throw new IllegalArgumentException("bad native range: address " + address + ", length " + length);
        }
        PointerBytesStore store = new PointerBytesStore();
        Bytes<?> handle = null;
        try {
            store.set(address, length);
            handle = store.bytesForRead();
            return new OffHeapRegion(handle, true, 0, length, true);
        } catch (RuntimeException | Error e) {
            if (handle != null) {
                handle.releaseLast();
            }
            store.releaseLast();
            throw e;
        }
    }

    /** A read-only window of this region that owns nothing (see the slice constructor). */
    OffHeapRegion slice(long base, long length) {
        return new OffHeapRegion(this, base, length);
    }

    long length() {
        return length;
    }

    boolean readOnly() {
        return readOnly;
    }

    /** Off-heap bytes this region keeps alive (the whole store, padding included). */
    long storeBytes() {
        return handle == null ? length : store.realCapacity(); // a slice keeps nothing alive but its window
    }

    /** Native address of byte 0 of the region. */
    long address() {
        return address;
    }

    long readLong(long offset) {
        checkIndex(offset, 8);
        return UnsafeMemory.MEMORY.readLong(address + offset);
    }

    /**
     * Checks once that {@code [offset, offset + size)} lies in the region, for the {@link #readLongInRange} calls
     * that follow: a filter probe checks its cache line(s) once instead of every word it reads.
     */
    void checkRange(long offset, long size) {
        checkIndex(offset, size);
    }

    /**
     * The word at {@code offset}, which the caller has bounds-checked with {@link #checkRange} (the read itself is
     * not checked: the plain {@code Unsafe} load, nothing between the probe and the memory).
     */
    long readLongInRange(long offset) {
        return UnsafeMemory.MEMORY.readLong(address + offset);
    }

    void writeLong(long offset, long value) {
        checkIndex(offset, 8);
        store.writeLong(base + offset, value);
    }

    /**
     * Writes the word at {@code offset}, which the caller has bounds-checked with {@link #checkRange} on a region that
     * is not {@link #readOnly()} (the plain {@code Unsafe} store: a filter build sets every probe of a cache line after
     * one check of the line).
     */
    void writeLongInRange(long offset, long value) {
        UnsafeMemory.MEMORY.writeLong(address + offset, value);
    }

    void read(long offset, byte[] dst, int dstOff, int len) {
        checkIndex(offset, len);
        if (dstOff < 0 || len < 0 || dstOff + len > dst.length) {
            throw new IndexOutOfBoundsException("dst[" + dstOff + ", " + (dstOff + len) + ") of " + dst.length);
        }
        for (int done = 0; done < len; ) {
            int n = (int) store.read(base + offset + done, dst, dstOff + done, len - done);
            if (n <= 0) {
                throw new IllegalStateException("short read from off-heap store at " + (offset + done));
            }
            done += n;
        }
    }

    void write(long offset, byte[] src, int srcOff, int len) {
        checkIndex(offset, len);
        if (srcOff < 0 || srcOff > src.length - len) {
            // Chronicle copies with Unsafe: an out-of-range source would read past the array.
            throw new IndexOutOfBoundsException("src[" + srcOff + ", " + ((long) srcOff + len) + ") of " + src.length);
        }
        store.write(base + offset, src, srcOff, len);
    }

    /**
     * Checks that {@code [offset, offset + size)} lies in {@code [0, length)}: the check of a probe reading native
     * memory it does not hold a region for (a serialized filter probed in place, {@link InPlaceFilters}).
     */
    static void checkRange(long offset, long size, long length) {
        if (offset < 0 || size < 0 || offset > length - size) {
            throw new IndexOutOfBoundsException(
                    "offset " + offset + " size " + size + " outside region of " + length + " bytes");
        }
    }

    private void checkIndex(long offset, long size) {
        if (offset < 0 || size < 0 || offset > length - size) {
            throw new IndexOutOfBoundsException(
                    "offset " + offset + " size " + size + " outside region of " + length + " bytes");
        }
    }

    /**
     * Releases the handle and, for a wrapped mapping or arena memory, the store's own reference (which unmaps a
     * mapping); arena memory then goes back to its arena.
     */
    void release() {
        if (handle == null) {
            return; // a slice: its parent owns the memory
        }
        handle.releaseLast();
        if (storeHasOwnReference) {
            store.releaseLast();
        }
        if (arena != null) {
            arena.free(arenaAddress);
        }
    }
}

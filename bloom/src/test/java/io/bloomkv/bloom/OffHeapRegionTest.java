package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Chronicle's native store checks no bounds; the region checks every access, exactly at the edges. */
class OffHeapRegionTest {

    @Test
    void accessesAreCheckedExactlyAtTheEdges() {
        OffHeapRegion r = OffHeapRegion.allocate(64);
        try {
            r.writeLong(56, -1L);
            assertThat(r.readLong(56)).isEqualTo(-1L);
            assertThat(r.readLong(0)).isZero();
            for (long bad : new long[] {57, 64, -1, Long.MIN_VALUE, Long.MAX_VALUE - 4}) {
                assertThatThrownBy(() -> r.readLong(bad))
                        .as("readLong(%d)", bad)
                        .isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> r.writeLong(bad, 1))
                        .as("writeLong(%d)", bad)
                        .isInstanceOf(IndexOutOfBoundsException.class);
            }
            byte[] buf = new byte[16];
            r.read(48, buf, 0, 16);
            r.read(0, buf, 8, 8);
            assertThatThrownBy(() -> r.read(49, buf, 0, 16)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> r.read(0, buf, 9, 8)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> r.read(0, buf, -1, 8)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> r.read(0, buf, 0, -1)).isInstanceOf(IndexOutOfBoundsException.class);
            r.write(48, buf, 0, 16);
            assertThatThrownBy(() -> r.write(49, buf, 0, 16)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> r.write(0, buf, 9, 8))
                    .as("source past the array")
                    .isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> r.write(0, buf, -1, 8)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> r.write(0, buf, Integer.MAX_VALUE, 8))
                    .isInstanceOf(IndexOutOfBoundsException.class);
        } finally {
            r.release();
        }
    }

    @Test
    void allocatedBodiesAreZeroedAndCacheLineAligned() {
        for (HugePageArena arena : new HugePageArena[] {null, HugePageArena.shared()}) {
            for (long len : new long[] {8, 64, 72, 4096, 3 * HugePageArena.LARGE}) {
                OffHeapRegion r = OffHeapRegion.allocate(len, arena);
                try {
                    for (long off = 0; off < len; off += 8) {
                        assertThat(r.readLong(off)).isZero();
                    }
                    assertThat(r.storeBytes()).isGreaterThanOrEqualTo(len);
                    assertThat(r.address() % OffHeapRegion.ALIGNMENT)
                            .as("body address")
                            .isZero();
                } finally {
                    r.release();
                }
            }
        }
        assertThatThrownBy(() -> OffHeapRegion.allocate(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OffHeapRegion.allocate(12)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void arenaMemoryIsZeroedWhenItIsReused() {
        HugePageArena arena = HugePageArena.shared();
        org.junit.jupiter.api.Assumptions.assumeTrue(arena != null, "the filter arena needs Linux mmap");
        OffHeapRegion first = OffHeapRegion.allocate(4096, arena);
        long address = first.address();
        for (long off = 0; off < 4096; off += 8) {
            first.writeLong(off, -1L);
        }
        first.release();
        OffHeapRegion again = OffHeapRegion.allocate(4096, arena);
        try {
            assertThat(again.address())
                    .as("first fit hands the same range back")
                    .isEqualTo(address);
            for (long off = 0; off < 4096; off += 8) {
                assertThat(again.readLong(off)).isZero();
            }
        } finally {
            again.release();
        }
    }
}

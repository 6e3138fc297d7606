package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import net.openhft.chronicle.core.UnsafeMemory;
import org.junit.jupiter.api.Test;

/**
 * The filter arena hands out disjoint, aligned ranges, frees each exactly once, gives slabs back when they empty, and
 * really gets huge pages from the kernel where transparent huge pages are on.
 */
class HugePageArenaTest {
    private static final UnsafeMemory MEMORY = UnsafeMemory.MEMORY;

    /** The real system calls, counting what is mapped and failing when told to. */
    private static final class CountingPages implements HugePageArena.Pages {
        final HugePageArena.Pages real = realPages();
        long mapped;
        boolean failMap;
        boolean refuseAdvice;

        @Override
        public long map(long length) {
            if (failMap) {
                return -1;
            }
            long a = real.map(length);
            mapped += length;
            return a;
        }

        @Override
        public void unmap(long address, long length) {
            real.unmap(address, length);
            mapped -= length;
        }

        @Override
        public boolean adviseHuge(long address, long length) {
            return !refuseAdvice && real.adviseHuge(address, length);
        }
    }

    private static HugePageArena.Pages realPages() {
        assumeTrue(HugePageArena.shared() != null, "the filter arena needs Linux mmap");
        return HugePageArena.posixPages();
    }

    @Test
    void randomAllocationsAreDisjointAlignedAndAllGoBack() {
        long seed = TestKeys.seed("bloom.arena.seed");
        SplittableRandom rnd = new SplittableRandom(seed);
        CountingPages pages = new CountingPages();
        HugePageArena arena = new HugePageArena(pages);
        Map<Long, Long> live = new HashMap<>(); // address -> length asked
        long liveRounded = 0;
        for (int step = 0; step < 3000; step++) {
            if (live.isEmpty() || rnd.nextInt(5) < 3) {
                long len = rnd.nextInt(10) == 0 ? 1 + rnd.nextLong(3 * HugePageArena.LARGE) : 1 + rnd.nextInt(300_000);
                long a = arena.allocate(len);
                assertThat(a % 64).as("alignment (seed %d)", seed).isZero();
                MEMORY.writeLong(a, a); // a signature at both ends, checked when freed: no other allocation overlapped
                MEMORY.writeLong(a + tailOffset(len), ~a);
                live.put(a, len);
                liveRounded += HugePageArena.roundUp(len, 64);
            } else {
                long a = new ArrayList<>(live.keySet()).get(rnd.nextInt(live.size()));
                long len = live.remove(a);
                assertThat(MEMORY.readLong(a))
                        .as("head of 0x%x (seed %d)", a, seed)
                        .isEqualTo(a);
                assertThat(MEMORY.readLong(a + tailOffset(len)))
                        .as("tail (seed %d)", seed)
                        .isEqualTo(~a);
                arena.free(a);
                liveRounded -= HugePageArena.roundUp(len, 64);
            }
            assertThat(arena.liveBytes()).isEqualTo(liveRounded);
            assertThat(arena.mappedBytes()).isEqualTo(pages.mapped).isGreaterThanOrEqualTo(liveRounded);
        }
        for (long a : live.keySet()) {
            arena.free(a);
        }
        assertThat(arena.liveBytes()).isZero();
        assertThat(arena.slabCount()).as("one empty slab is kept").isLessThanOrEqualTo(1);
        assertThat(pages.mapped).isEqualTo(arena.mappedBytes()).isLessThanOrEqualTo(HugePageArena.SLAB);
    }

    /** The last word of an allocation of {@code len} bytes, after the head's (every allocation is at least 64 bytes). */
    private static long tailOffset(long len) {
        return Math.max(8, HugePageArena.roundUp(len, 8) - 8);
    }

    @Test
    void freedRangesAreReusedAndEmptySlabsUnmapped() {
        CountingPages pages = new CountingPages();
        HugePageArena arena = new HugePageArena(pages);
        long half = HugePageArena.LARGE; // four fill a slab
        long[] a = new long[8];
        for (int i = 0; i < a.length; i++) {
            a[i] = arena.allocate(half);
        }
        assertThat(arena.slabCount()).isEqualTo(2);
        assertThat(pages.mapped).isEqualTo(2 * HugePageArena.SLAB);
        arena.free(a[1]);
        assertThat(arena.allocate(half)).as("first fit reuses the freed range").isEqualTo(a[1]);
        for (int i = 0; i < 4; i++) {
            arena.free(a[i]);
        }
        assertThat(arena.slabCount())
                .as("the emptied slab is kept as the spare")
                .isEqualTo(2);
        for (int i = 4; i < 8; i++) {
            arena.free(a[i]);
        }
        assertThat(arena.slabCount()).isEqualTo(1);
        assertThat(pages.mapped).isEqualTo(HugePageArena.SLAB);
    }

    @Test
    void largeAllocationsGetTheirOwnHugePageAlignedMapping() {
        CountingPages pages = new CountingPages();
        HugePageArena arena = new HugePageArena(pages);
        long len = 5 * HugePageArena.HUGE_PAGE + 100;
        long a = arena.allocate(len);
        assertThat(a % HugePageArena.HUGE_PAGE).isZero();
        assertThat(arena.slabCount()).isZero();
        assertThat(pages.mapped).isEqualTo(HugePageArena.roundUp(len, HugePageArena.PAGE));
        MEMORY.writeLong(a + len - 4 - 8, 42);
        arena.free(a);
        assertThat(pages.mapped).isZero();
    }

    @Test
    void freeingTwiceOrAForeignAddressIsRefused() {
        HugePageArena arena = new HugePageArena(new CountingPages());
        long a = arena.allocate(1000);
        long b = arena.allocate(1000);
        arena.free(a);
        assertThatThrownBy(() -> arena.free(a))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a live allocation");
        assertThatThrownBy(() -> arena.free(b + 64)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> arena.allocate(0)).isInstanceOf(IllegalArgumentException.class);
        arena.free(b);
        assertThat(arena.liveBytes()).isZero();
    }

    @Test
    void aRefusedMappingIsAnOutOfMemoryErrorAndRefusedAdviceOnlyLosesHugePages() {
        CountingPages pages = new CountingPages();
        HugePageArena arena = new HugePageArena(pages);
        pages.failMap = true;
        assertThatThrownBy(() -> arena.allocate(64)).isInstanceOf(OutOfMemoryError.class);
        assertThat(arena.liveBytes()).isZero();
        pages.failMap = false;
        pages.refuseAdvice = true;
        long a = arena.allocate(64);
        MEMORY.writeLong(a, 7);
        assertThat(MEMORY.readLong(a)).isEqualTo(7);
        assertThat(arena.hugePagesAdvised()).isFalse();
        arena.free(a);
    }

    @Test
    void filtersComeFromTheSharedArenaAndGiveTheirMemoryBack() {
        HugePageArena shared = HugePageArena.shared();
        assumeTrue(shared != null, "the filter arena needs Linux mmap");
        long before = shared.liveBytes();
        List<Filter> filters = new ArrayList<>();
        for (FilterKind kind : FilterKind.values()) {
            filters.add(TestKeys.filled(kind, new long[] {1, 2, 3}, 10));
        }
        assertThat(shared.liveBytes()).isGreaterThan(before);
        filters.forEach(Filter::close);
        assertThat(shared.liveBytes()).isEqualTo(before);
    }

    @Test
    void theKernelBacksASlabWithHugePagesWhereTransparentHugePagesAreOn() throws IOException {
        Path thp = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        assumeTrue(
                Files.isReadable(thp) && !Files.readString(thp).contains("[never]"),
                "transparent huge pages are off here");
        HugePageArena arena = new HugePageArena(realPages());
        long a = arena.allocate(HugePageArena.LARGE);
        try {
            long fallbacksBefore = vmstat("thp_fault_fallback");
            MEMORY.setMemory(a, HugePageArena.LARGE, (byte) 1); // fault the pages in
            long hugeKb = anonHugeKbOfMappingAt(a);
            // The kernel tried and had no free huge page (fragmented memory): not this code's doing. Without the
            // advice it would not have tried at all (THP mode madvise), and this count would not move.
            assumeTrue(
                    hugeKb > 0 || vmstat("thp_fault_fallback") == fallbacksBefore,
                    "the kernel had no huge page to give (thp_fault_fallback rose)");
            assertThat(hugeKb).as("AnonHugePages of the slab holding 0x%x", a).isGreaterThanOrEqualTo(2048);
        } finally {
            arena.free(a);
        }
    }

    /** A counter of /proc/vmstat, or -1 where it is missing. */
    private static long vmstat(String name) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/vmstat"))) {
            if (line.startsWith(name + " ")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        return -1;
    }

    /** AnonHugePages of the mapping containing {@code address}, from /proc/self/smaps. */
    private static long anonHugeKbOfMappingAt(long address) throws IOException {
        boolean inside = false;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                inside = Long.parseUnsignedLong(range[0], 16) <= address
                        && address < Long.parseUnsignedLong(range[1], 16);
            } else if (inside && line.startsWith("AnonHugePages:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }
}

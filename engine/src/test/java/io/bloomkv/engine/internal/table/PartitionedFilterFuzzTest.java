package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.util.Coding;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Fuzz target for the top-level index of a partitioned filter (engine/FORMAT.md "Partitioned filter"): its decoding and
 * the partition lookup a probe makes with what it accepted. Input: byte 0 is the partition count the properties would
 * give, bytes 1-4 the offset of the index block (u32le), the rest the block's contents. Invariant: the only exception is
 * the documented {@link CorruptionException}; an accepted index holds exactly that many partitions, laid end to end
 * with their trailers up to the index block, each of a size in [1, 64 MiB], their largest hashes strictly increasing;
 * every hash maps to the first partition whose largest hash is >= it, and a hash above them all to none. Corpus:
 * src/test/resources/io/bloomkv/engine/internal/table/PartitionedFilterFuzzTestInputs/topLevelIndex (indexes the real
 * TableWriter wrote, and damaged ones); {@link #writerIndexRoundTrips} runs the same checks on a fresh index.
 */
class PartitionedFilterFuzzTest {
    private static final Path FILE = Path.of("fuzz.sst");

    @FuzzTest(maxDuration = "5m")
    void topLevelIndex(byte[] data) {
        if (data.length < 5) {
            return;
        }
        int expected = data[0] & 0xff;
        long indexOffset = Integer.toUnsignedLong(Coding.getFixed32(data, 1));
        byte[] contents = Arrays.copyOfRange(data, 5, data.length);
        PartitionedFilter.Index index;
        try {
            index = PartitionedFilter.decodeIndex(contents, contents.length, expected, indexOffset, FILE);
        } catch (CorruptionException e) {
            return; // the documented failure
        }
        check(index, expected, indexOffset);
    }

    private static void check(PartitionedFilter.Index index, int expected, long indexOffset) {
        assertThat(index.count()).isEqualTo(expected);
        long at = index.offsets()[0];
        for (int i = 0; i < index.count(); i++) {
            assertThat(index.offsets()[i]).isEqualTo(at);
            assertThat(index.sizes()[i]).isBetween(1, PartitionedFilter.MAX_STORED_PARTITION);
            at += index.sizes()[i] + TableFormat.BLOCK_TRAILER_SIZE;
            long last = index.lastHashes()[i];
            if (i > 0) {
                assertThat(Long.compareUnsigned(index.lastHashes()[i - 1], last))
                        .isNegative();
            }
            assertThat(index.partitionOf(last)).isEqualTo(i);
            if (last != -1L) {
                assertThat(index.partitionOf(last + 1)).isEqualTo(i + 1 < index.count() ? i + 1 : -1);
            }
        }
        assertThat(at).isEqualTo(indexOffset);
        assertThat(index.partitionOf(0)).isZero();
        assertThat(index.memoryBytes()).isEqualTo(20L * index.count() + 64);
    }

    /** An index the writer's code builds decodes to what was built; damaged copies are refused or stay consistent. */
    @Test
    void writerIndexRoundTrips() {
        Random rnd = new Random(41);
        long[] hashes = new long[20_000];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = rnd.nextLong();
        }
        hashes[7] = -1L; // the largest hash there is
        PartitionedFilter.Built built = PartitionedFilter.build(
                FilterKind.BLOCKED, hashes, hashes.length, 10, PartitionedFilter.keysPerPartition(1024, 10));
        int p = built.partitions().size();
        assertThat(p).isBetween(20, 30);
        long[] sizes = built.partitions().stream().mapToLong(b -> b.length).toArray();
        long first = 4096;
        long end = first
                + Arrays.stream(sizes)
                        .map(s -> s + TableFormat.BLOCK_TRAILER_SIZE)
                        .sum();
        byte[] contents = PartitionedFilter.encodeIndex(first, built.lastHashes(), sizes);
        PartitionedFilter.Index index = PartitionedFilter.decodeIndex(contents, contents.length, p, end, FILE);
        check(index, p, end);
        assertThat(index.lastHashes()[p - 1]).isEqualTo(-1L);
        assertThat(index.partitionBytes()).isEqualTo(Arrays.stream(sizes).sum());
        byte[] seed = new byte[contents.length + 5];
        seed[0] = (byte) p;
        Coding.putFixed32(seed, 1, (int) end);
        System.arraycopy(contents, 0, seed, 5, contents.length);
        topLevelIndex(seed);
        // every single-byte change is refused or decodes consistently
        for (int i = 0; i < seed.length; i++) {
            byte[] bad = seed.clone();
            bad[i] ^= (byte) (1 + rnd.nextInt(255));
            topLevelIndex(bad);
        }
        assertThat(org.assertj.core.api.Assertions.catchThrowable(
                        () -> PartitionedFilter.decodeIndex(contents, contents.length, p + 1, end, FILE)))
                .isInstanceOf(CorruptionException.class);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(
                        () -> PartitionedFilter.decodeIndex(contents, contents.length, p, end + 1, FILE)))
                .isInstanceOf(CorruptionException.class);
    }
}

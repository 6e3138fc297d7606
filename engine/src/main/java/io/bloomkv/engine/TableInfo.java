package io.bloomkv.engine;

import io.bloomkv.bloom.FilterKind;
import java.nio.file.Path;

/**
 * One live table of a {@link Db} ({@link Db#tables()}): where it sits, what it holds, and its
 * filter's parameters. Key arrays are copies.
 *
 * @param filterKind null when the table has no usable filter, so that gets read it without one: none written, one
 *     that failed its checks ({@code filterProblem}), or under a filter memory budget a whole filter larger than the
 *     budget's cache may hold ({@code bloomkv.num-tables-without-filter} counts these tables)
 * @param filterExpectedFpp the filter's own false-positive formula for its key count (1 without a filter)
 * @param filterFractionOfBitsSet share of the filter's bits (or counters) that are set; NaN without a filter
 * @param filterProblem why the table's filter block is unusable (reads fail open and read the table), or
 *     null when it is fine or the table was written without a filter
 * @param rangeFilterProblem why the table's range filter block is unusable (bounded seeks fail open and read the
 *     table as if it had none), or null when it is fine or the table was written without a range filter
 * @param compression how the table's data and index blocks were written
 * @param dataBytes bytes of the table's data blocks as stored (compressed), trailers included
 * @param dataUncompressedBytes the same blocks' bytes before compression
 */
public record TableInfo(
        int level,
        long fileNumber,
        Path path,
        long fileSize,
        long entries,
        byte[] smallestUserKey,
        byte[] largestUserKey,
        long smallestSequence,
        long largestSequence,
        FilterKind filterKind,
        int filterHashCount,
        long filterBitSize,
        long filterKeyCount,
        long filterMemoryBytes,
        double filterExpectedFpp,
        double filterFractionOfBitsSet,
        String filterProblem,
        String rangeFilterProblem,
        Compression compression,
        long dataBytes,
        long dataUncompressedBytes) {}

package io.bloomkv.engine.inspect;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.BlockHandle;
import io.bloomkv.engine.internal.table.Footer;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableFormat;
import io.bloomkv.engine.internal.table.TableProperties;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.version.FileNames;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One table file opened for inspection (engine/FORMAT.md, "Table"): its footer, properties, index,
 * filter and entries, and a checksum verification of every block. Opens with no block cache and
 * takes no lock (a table file is immutable once written). Close it to release its off-heap filter.
 */
public final class TableDump implements AutoCloseable {
    /** Bytes of the footer at the end of every table file. */
    public static final int FOOTER_SIZE = TableFormat.FOOTER_SIZE;
    /** Bytes of the trailer after every block: compression type, masked CRC32C. */
    public static final int BLOCK_TRAILER_SIZE = TableFormat.BLOCK_TRAILER_SIZE;
    /** The footer's magic number ("bloomkv1" little-endian). */
    public static final long MAGIC = TableFormat.MAGIC;

    /** An internal key, decoded: the user key, its sequence number and its type ("PUT", "DEL", or "type" + code). */
    public record Key(byte[] userKey, long sequence, String type) {
        public boolean isDeletion() {
            return type.equals("DEL");
        }
    }

    /** One entry of the table in key order. */
    public record Entry(Key key, byte[] value) {}

    /** A range tombstone of the table's range-deletion block: keys in [begin, end) older than {@code sequence} are deleted. */
    public record RangeDeletion(byte[] begin, byte[] end, long sequence) {}

    /** One data block: the last key of the block (its separator) and where it is. */
    public record IndexEntry(Key separator, Region block) {}

    /** A block whose checksum or structure is wrong. */
    public record BadBlock(String kind, long offset, long size, String problem) {}

    /**
     * The table's properties block.
     *
     * @param filterKind the kind written into the table, null when written without a filter
     */
    public record Properties(
            long entries,
            long deletions,
            long dataBlocks,
            long dataSize,
            long indexSize,
            long rawKeyBytes,
            long rawValueBytes,
            Key smallestKey,
            Key largestKey,
            long smallestSequence,
            long largestSequence,
            FilterKind filterKind,
            double bitsPerKey,
            long filterKeys,
            long filterBytes,
            int formatVersion,
            Compression compression,
            long dataBlocksCompressed,
            long dataUncompressedSize) {}

    /**
     * The loaded filter.
     *
     * @param kind null when the table has no usable filter
     * @param problem why the filter block is unusable (reads then fail open), null when fine or absent
     */
    public record FilterInfo(
            FilterKind kind,
            int hashCount,
            long bits,
            long keys,
            double fractionOfBitsSet,
            double expectedFpp,
            long memoryBytes,
            String problem) {
        public boolean present() {
            return kind != null;
        }
    }

    private final TableReader table;

    private TableDump(TableReader table) {
        this.table = table;
    }

    /**
     * Opens the table file {@code file}.
     *
     * @throws CorruptionException when its footer, index or properties block is damaged
     * @throws IOException when it cannot be read
     */
    public static TableDump open(Path file) throws IOException {
        FileNames.Parsed parsed = FileNames.parse(file.getFileName().toString());
        long number = parsed != null && parsed.kind() == FileNames.Kind.TABLE ? parsed.number() : 0;
        return new TableDump(TableReader.open(FileSystem.disk(), file, number, null, null));
    }

    /** Decodes an internal key (engine/FORMAT.md, "Internal keys"). */
    public static Key decodeKey(byte[] internalKey) {
        if (internalKey.length < InternalKey.TRAILER_SIZE) {
            throw new IllegalArgumentException("not an internal key: " + internalKey.length + " bytes");
        }
        int code = (int) (InternalKey.trailer(internalKey) & 0xff);
        String type = code == ValueType.PUT.code()
                ? "PUT"
                : code == ValueType.DELETE.code() ? "DEL" : code == ValueType.MERGE.code() ? "MERGE" : "type" + code;
        return new Key(InternalKey.userKey(internalKey), InternalKey.sequence(internalKey), type);
    }

    public Path path() {
        return table.path();
    }

    /** The number in the file name ({@code 000007.sst} is 7), 0 for another name. */
    public long fileNumber() {
        return table.fileNumber();
    }

    public long fileSize() {
        return table.fileSize();
    }

    public int formatVersion() {
        return table.footer().formatVersion();
    }

    /**
     * The filter block, or null when the table was written without one; for a partitioned filter (engine/FORMAT.md
     * "Partitioned filter") the span of its partitions and top-level index, trailers included but the last one's.
     */
    public Region filterBlock() {
        Footer f = table.footer();
        var partitions = table.properties().filterPartitionsIndex();
        if (partitions != null && !f.hasFilter()) {
            return new Region(
                    f.filter().offset(),
                    partitions.offset() + partitions.size() - f.filter().offset());
        }
        return f.hasFilter() ? region(f.filter()) : null;
    }

    /** The range-deletion block, or null when the table holds no range tombstone. */
    public Region rangeDeletionBlock() {
        var h = table.properties().rangeDeletionsBlock();
        return h == null ? null : new Region(h.offset(), h.size());
    }

    /** The range tombstones as the table stores them, fragmented (engine/FORMAT.md, "Range deletion block"). */
    public List<RangeDeletion> rangeDeletions() {
        List<RangeDeletion> out = new java.util.ArrayList<>();
        for (var t : table.rangeTombstones().fragments()) {
            out.add(new RangeDeletion(t.begin().clone(), t.end().clone(), t.sequence()));
        }
        return out;
    }

    public Region indexBlock() {
        return region(table.footer().index());
    }

    public Region propertiesBlock() {
        return region(table.footer().properties());
    }

    public long footerOffset() {
        return table.fileSize() - FOOTER_SIZE;
    }

    public Properties properties() {
        TableProperties p = table.properties();
        return new Properties(
                p.entries(),
                p.deletions(),
                p.dataBlocks(),
                p.dataSize(),
                p.indexSize(),
                p.rawKeyBytes(),
                p.rawValueBytes(),
                decodeKey(p.smallestKey()),
                decodeKey(p.largestKey()),
                p.smallestSeq(),
                p.largestSeq(),
                p.filterKind(),
                p.bitsPerKey(),
                p.filterKeys(),
                p.filterBytes(),
                p.formatVersion(),
                p.compression(),
                p.dataBlocksCompressed(),
                p.dataUncompressedSize());
    }

    /** The data blocks, in key order. */
    public List<IndexEntry> index() {
        List<IndexEntry> out = new ArrayList<>();
        for (TableReader.IndexEntry e : table.indexEntries()) {
            out.add(new IndexEntry(decodeKey(e.separator()), region(e.handle())));
        }
        return out;
    }

    public FilterInfo filter() {
        if (!table.hasFilter()) {
            return new FilterInfo(
                    null, 0, 0, 0, Double.NaN, 1.0, 0, table.filterBroken() ? table.filterProblem() : null);
        }
        return new FilterInfo(
                table.filterKind(),
                table.filterHashCount(),
                table.filterBitSize(),
                table.filterKeyCount(),
                table.filterFractionOfBitsSet(),
                table.filterExpectedFpp(),
                table.filterMemoryBytes(),
                null);
    }

    /** Reads every block and checks its checksum and structure; the bad ones (empty when all are good). */
    public List<BadBlock> verifyChecksums() throws IOException {
        List<BadBlock> out = new ArrayList<>();
        for (TableReader.BadBlock b : table.verifyChecksums()) {
            out.add(new BadBlock(b.kind(), b.offset(), b.size(), b.problem()));
        }
        return out;
    }

    /**
     * Blocks {@link #verifyChecksums} reads: the data blocks, the filter (or a partitioned filter's partitions and
     * top-level index), the range filter and the range-deletion block when the table has them, the index and the
     * properties.
     */
    public int blockCount() {
        long partitions = table.properties().filterPartitions();
        return table.indexEntries().size()
                + 2
                + (table.footer().hasFilter() ? 1 : 0)
                + (partitions > 0 ? (int) partitions + 1 : 0)
                + (table.properties().rangeFilter() != null ? 1 : 0)
                + (table.properties().rangeDeletionsBlock() != null ? 1 : 0);
    }

    /** Gives {@code visitor} the first {@code limit} entries in key order (every version, tombstones too). */
    public void forEachEntry(long limit, Consumer<Entry> visitor) {
        long n = 0;
        try (InternalIterator it = table.iterator()) {
            for (it.seekToFirst(); it.valid() && n < limit; it.next()) {
                visitor.accept(new Entry(decodeKey(it.key()), it.value()));
                n++;
            }
        }
    }

    @Override
    public void close() {
        table.close();
    }

    private static Region region(BlockHandle h) {
        return new Region(h.offset(), h.size());
    }
}

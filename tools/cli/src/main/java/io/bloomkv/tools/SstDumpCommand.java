package io.bloomkv.tools;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.inspect.Region;
import io.bloomkv.engine.inspect.TableDump;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv sst dump FILE}: the footer, the properties, the file layout, the index, the filter
 * and, with {@code --entries} (or {@code --limit N}, which implies it), every entry or the first N, like RocksDB's
 * sst_dump. {@code --value-hex} implies {@code --entries} as well: only entries show values, so without them it would
 * do nothing ({@code --hex} and {@code --key-hex} also format the keys of the other parts, and imply nothing).
 * Layout: engine/FORMAT.md.
 */
@Command(
        name = "dump",
        mixinStandardHelpOptions = true,
        description = {
            "Print the parts of a table file, like RocksDB's sst_dump.",
            "The footer, properties, block layout, index, and the filter (kind, k, bits,",
            "bits per key, share of bits set, expected false-positive rate); with",
            "--entries every entry (user key @sequence PUT|DEL|MERGE, value), with",
            "--limit N the first N; the range deletions ([begin, end) @sequence), if any.",
            "--limit and --value-hex (only entries show values) imply --entries."
        })
final class SstDumpCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "A table file (NNNNNN.sst).")
    Path file;

    @Option(names = "--entries", description = "Also print the entries (implied by --limit and --value-hex).")
    boolean entries;

    @Option(
            names = "--limit",
            paramLabel = "N",
            description = "Print the first N entries (implies --entries; 0 prints none).")
    Long limit;

    @Option(names = "--no-index", negatable = false, description = "Leave out the per-block index listing.")
    boolean noIndex;

    @Mixin
    OutputKeyValueFormat format;

    @Override
    public Integer call() throws IOException {
        if (limit != null && limit < 0) {
            throw new ParameterException(spec.commandLine(), "--limit must not be negative: " + limit);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (TableDump t = TableFiles.open(file)) {
            printHeader(out, t);
            printProperties(out, t.properties());
            List<TableDump.IndexEntry> index = t.index();
            printLayout(out, t, index);
            if (!noIndex) {
                printIndex(out, index);
            }
            printFilter(out, t);
            printRangeDeletions(out, t);
            // --limit and --value-hex are about entries: either asks for them rather than being ignored.
            if (entries || limit != null || spec.commandLine().getParseResult().hasMatchedOption("--value-hex")) {
                printEntries(out, t);
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    private void printHeader(PrintWriter out, TableDump t) {
        out.println("file: " + t.path() + " (" + Fmt.count(t.fileSize()) + " bytes, table #" + t.fileNumber() + ")");
        out.println("footer (" + TableDump.FOOTER_SIZE + " bytes at offset " + t.footerOffset()
                + "): format version " + t.formatVersion() + ", magic "
                + String.format(Locale.ROOT, "0x%016x", TableDump.MAGIC) + " (\"bloomkv1\"), checksum ok");
        Region filter = t.filterBlock();
        out.println("  filter block      "
                + (filter == null ? handle(new Region(0, 0)) + "  (no filter)" : handle(filter)));
        if (t.rangeDeletionBlock() != null) {
            out.println("  range deletions   " + handle(t.rangeDeletionBlock())
                    + "  (properties: bloomkv.range.deletions.block)");
        }
        out.println("  index block       " + handle(t.indexBlock()));
        out.println("  properties block  " + handle(t.propertiesBlock()));
    }

    private void printProperties(PrintWriter out, TableDump.Properties p) {
        ByteFormat keys = format.keys();
        out.println("properties:");
        out.println("  entries           " + Fmt.count(p.entries()) + " (" + Fmt.count(p.deletions()) + " deletions)");
        out.println("  data blocks       " + Fmt.count(p.dataBlocks()) + " (" + Fmt.count(p.dataSize())
                + " bytes with trailers)");
        out.println("  compression       " + p.compression()
                + (p.compression() == Compression.NONE
                        ? ""
                        : ": " + Fmt.count(p.dataBlocksCompressed()) + " of " + Fmt.count(p.dataBlocks())
                                + " data blocks compressed, " + Fmt.count(p.dataUncompressedSize())
                                + " bytes uncompressed ("
                                + Fmt.decimal(
                                        p.dataUncompressedSize() == 0
                                                ? 1.0
                                                : (double) p.dataSize() / p.dataUncompressedSize(),
                                        3)
                                + " of it stored)"));
        out.println("  index size        " + Fmt.count(p.indexSize()) + " bytes");
        out.println("  raw key bytes     " + Fmt.count(p.rawKeyBytes()) + " (internal keys)");
        out.println("  raw value bytes   " + Fmt.count(p.rawValueBytes()));
        out.println("  smallest key      " + TableFiles.internalKey(keys, p.smallestKey()));
        out.println("  largest key       " + TableFiles.internalKey(keys, p.largestKey()));
        out.println("  sequence range    " + p.smallestSequence() + " .. " + p.largestSequence());
        out.println("  filter            "
                + (p.filterKind() == null
                        ? "none"
                        : p.filterKind() + ", " + Fmt.decimal(p.bitsPerKey(), 2) + " bits per key, "
                                + Fmt.count(p.filterKeys()) + " distinct user keys, " + Fmt.count(p.filterBytes())
                                + " bytes"));
        out.println("  format version    " + p.formatVersion());
    }

    private void printLayout(PrintWriter out, TableDump t, List<TableDump.IndexEntry> index) {
        TextTable layout = new TextTable("region", "offset", "end", "bytes");
        if (!index.isEmpty()) {
            long start = index.get(0).block().offset();
            long end = index.get(index.size() - 1).block().end();
            layout.row("data blocks (" + index.size() + ")", Fmt.count(start), Fmt.count(end), Fmt.count(end - start));
        }
        if (t.rangeDeletionBlock() != null) {
            region(layout, "range deletion block", t.rangeDeletionBlock());
        }
        if (t.filterBlock() != null) {
            region(layout, "filter block", t.filterBlock());
        }
        region(layout, "index block", t.indexBlock());
        region(layout, "properties block", t.propertiesBlock());
        layout.row("footer", Fmt.count(t.footerOffset()), Fmt.count(t.fileSize()), Fmt.count(TableDump.FOOTER_SIZE));
        out.println("layout (every block is followed by a " + TableDump.BLOCK_TRAILER_SIZE
                + "-byte trailer: compression type, masked CRC32C; end and bytes include it):");
        layout.print(out, "  ");
    }

    private static void region(TextTable layout, String name, Region h) {
        layout.row(name, Fmt.count(h.offset()), Fmt.count(h.end()), Fmt.count(h.end() - h.offset()));
    }

    private void printIndex(PrintWriter out, List<TableDump.IndexEntry> index) {
        out.println("index (" + index.size() + " data blocks; separator = last key of the block):");
        TextTable table = new TextTable("block", "offset", "size", "separator").leftAligned(3);
        int i = 0;
        for (TableDump.IndexEntry e : index) {
            table.row(
                    "#" + i++,
                    Fmt.count(e.block().offset()),
                    Fmt.count(e.block().size()),
                    TableFiles.internalKey(format.keys(), e.separator()));
        }
        table.print(out, "  ");
    }

    private static void printFilter(PrintWriter out, TableDump t) {
        TableDump.FilterInfo f = t.filter();
        if (f.problem() != null) {
            out.println("filter: UNUSABLE, reads of this table skip it (fail open): " + f.problem());
            return;
        }
        if (!f.present()) {
            out.println("filter: none (written with bits per key 0): every point read of this table reads a block");
            return;
        }
        long keys = f.keys();
        out.println("filter:");
        out.println("  kind              " + f.kind());
        out.println("  probes (k)        " + f.hashCount());
        out.println("  bits              " + Fmt.count(f.bits())
                + (f.kind() == FilterKind.COUNTING ? " (4-bit counters)" : ""));
        out.println("  keys              " + Fmt.count(keys));
        out.println("  bits per key      " + (keys == 0 ? "n/a" : Fmt.decimal((double) f.bits() / keys, 2)));
        out.println("  bits set          " + Fmt.share(f.fractionOfBitsSet()));
        out.println("  expected FPR      " + Fmt.rate(f.expectedFpp()));
        out.println("  off-heap memory   " + Fmt.count(f.memoryBytes()) + " bytes");
    }

    /** The table's range tombstones, fragmented (none: nothing printed). */
    private void printRangeDeletions(PrintWriter out, TableDump t) {
        List<TableDump.RangeDeletion> ds = t.rangeDeletions();
        if (ds.isEmpty()) {
            return;
        }
        out.println("range deletions (" + ds.size() + " fragments; keys in [begin, end) older than seq are deleted):");
        for (TableDump.RangeDeletion d : ds) {
            out.println("  [" + format.keys().format(d.begin()) + ", "
                    + format.keys().format(d.end()) + ") @" + d.sequence());
        }
    }

    private void printEntries(PrintWriter out, TableDump t) {
        long max = limit == null ? Long.MAX_VALUE : limit;
        out.println("entries:");
        t.forEachEntry(max, e -> {
            String shown = "  " + TableFiles.internalKey(format.keys(), e.key());
            out.println(
                    e.key().isDeletion()
                            ? shown
                            : shown + "\t" + format.values().format(e.value()));
        });
    }

    private static String handle(Region h) {
        return "offset " + Fmt.count(h.offset()) + ", size " + Fmt.count(h.size());
    }
}

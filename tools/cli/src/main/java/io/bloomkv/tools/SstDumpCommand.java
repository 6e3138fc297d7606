package io.bloomkv.tools;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.InternalKey;
import io.bloomkv.engine.ValueType;
import io.bloomkv.engine.table.BlockHandle;
import io.bloomkv.engine.table.Footer;
import io.bloomkv.engine.table.InternalIterator;
import io.bloomkv.engine.table.TableFormat;
import io.bloomkv.engine.table.TableProperties;
import io.bloomkv.engine.table.TableReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code bloomkv sst dump FILE}: the footer, the properties, the file layout, the index, the filter
 * and, with {@code --entries}, every entry, like RocksDB's sst_dump. Layout: engine/FORMAT.md.
 */
@Command(name = "dump", mixinStandardHelpOptions = true,
        description = {"Print a table file, like RocksDB's sst_dump: footer, properties, block",
            "layout, index, and the filter (kind, k, bits, bits per key, share of bits",
            "set, expected false-positive rate); with --entries every entry",
            "(user key @sequence PUT|DEL, value)."})
final class SstDumpCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "A table file (NNNNNN.sst).")
    Path file;

    @Option(names = "--entries", description = "Also print the entries.")
    boolean entries;

    @Option(names = "--limit", paramLabel = "N", description = "With --entries: print at most N entries.")
    Long limit;

    @Option(names = "--no-index", negatable = false, description = "Leave out the per-block index listing.")
    boolean noIndex;

    @Mixin
    KeyValueFormat format;

    @Override
    public Integer call() throws IOException {
        if (limit != null && limit < 0) {
            throw new ParameterException(spec.commandLine(), "--limit must not be negative: " + limit);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (TableReader t = TableFiles.open(file)) {
            printHeader(out, t);
            printProperties(out, t.properties());
            List<TableReader.IndexEntry> index = t.indexEntries();
            printLayout(out, t, index);
            if (!noIndex) {
                printIndex(out, index);
            }
            printFilter(out, t);
            if (entries) {
                printEntries(out, t);
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    private void printHeader(PrintWriter out, TableReader t) {
        Footer f = t.footer();
        out.println("file: " + t.path() + " (" + Fmt.count(t.fileSize()) + " bytes, table #" + t.fileNumber() + ")");
        out.println("footer (" + TableFormat.FOOTER_SIZE + " bytes at offset " + (t.fileSize() - TableFormat.FOOTER_SIZE)
                + "): format version " + f.formatVersion() + ", magic "
                + String.format(Locale.ROOT, "0x%016x", TableFormat.MAGIC) + " (\"bloomkv1\"), checksum ok");
        out.println("  filter block      " + handle(f.filter()) + (f.hasFilter() ? "" : "  (no filter)"));
        out.println("  index block       " + handle(f.index()));
        out.println("  properties block  " + handle(f.properties()));
    }

    private void printProperties(PrintWriter out, TableProperties p) {
        ByteFormat keys = format.keys();
        out.println("properties:");
        out.println("  entries           " + Fmt.count(p.entries()) + " (" + Fmt.count(p.deletions()) + " deletions)");
        out.println("  data blocks       " + Fmt.count(p.dataBlocks()) + " (" + Fmt.count(p.dataSize())
                + " bytes with trailers)");
        out.println("  index size        " + Fmt.count(p.indexSize()) + " bytes");
        out.println("  raw key bytes     " + Fmt.count(p.rawKeyBytes()) + " (internal keys)");
        out.println("  raw value bytes   " + Fmt.count(p.rawValueBytes()));
        out.println("  smallest key      " + TableFiles.internalKey(keys, p.smallestKey()));
        out.println("  largest key       " + TableFiles.internalKey(keys, p.largestKey()));
        out.println("  sequence range    " + p.smallestSeq() + " .. " + p.largestSeq());
        out.println("  filter            " + (p.filterKind() == null ? "none"
                : p.filterKind() + ", " + Fmt.decimal(p.bitsPerKey(), 2) + " bits per key, "
                        + Fmt.count(p.filterKeys()) + " distinct user keys, " + Fmt.count(p.filterBytes()) + " bytes"));
        out.println("  format version    " + p.formatVersion());
    }

    private void printLayout(PrintWriter out, TableReader t, List<TableReader.IndexEntry> index) {
        Footer f = t.footer();
        TextTable layout = new TextTable("region", "offset", "end", "bytes");
        if (!index.isEmpty()) {
            long start = index.get(0).handle().offset();
            long end = index.get(index.size() - 1).handle().end();
            layout.row("data blocks (" + index.size() + ")", Fmt.count(start), Fmt.count(end), Fmt.count(end - start));
        }
        if (f.hasFilter()) {
            region(layout, "filter block", f.filter());
        }
        region(layout, "index block", f.index());
        region(layout, "properties block", f.properties());
        long footerAt = t.fileSize() - TableFormat.FOOTER_SIZE;
        layout.row("footer", Fmt.count(footerAt), Fmt.count(t.fileSize()), Fmt.count(TableFormat.FOOTER_SIZE));
        out.println("layout (every block is followed by a " + TableFormat.BLOCK_TRAILER_SIZE
                + "-byte trailer: compression type, masked CRC32C; end and bytes include it):");
        layout.print(out, "  ");
    }

    private static void region(TextTable layout, String name, BlockHandle h) {
        layout.row(name, Fmt.count(h.offset()), Fmt.count(h.end()), Fmt.count(h.end() - h.offset()));
    }

    private void printIndex(PrintWriter out, List<TableReader.IndexEntry> index) {
        out.println("index (" + index.size() + " data blocks; separator = last key of the block):");
        TextTable table = new TextTable("block", "offset", "size", "separator").leftAligned(3);
        int i = 0;
        for (TableReader.IndexEntry e : index) {
            table.row("#" + i++, Fmt.count(e.handle().offset()), Fmt.count(e.handle().size()),
                    TableFiles.internalKey(format.keys(), e.separator()));
        }
        table.print(out, "  ");
    }

    private static void printFilter(PrintWriter out, TableReader t) {
        if (t.filterBroken()) {
            out.println("filter: UNUSABLE, reads of this table skip it (fail open): " + t.filterProblem());
            return;
        }
        if (!t.hasFilter()) {
            out.println("filter: none (written with bits per key 0): every point read of this table reads a block");
            return;
        }
        long keys = t.filterKeyCount();
        out.println("filter:");
        out.println("  kind              " + t.filterKind());
        out.println("  probes (k)        " + t.filterHashCount());
        out.println("  bits              " + Fmt.count(t.filterBitSize())
                + (t.filterKind() == FilterKind.COUNTING ? " (4-bit counters)" : ""));
        out.println("  keys              " + Fmt.count(keys));
        out.println("  bits per key      " + (keys == 0 ? "n/a" : Fmt.decimal((double) t.filterBitSize() / keys, 2)));
        out.println("  bits set          " + Fmt.share(t.filterFractionOfBitsSet()));
        out.println("  expected FPR      " + Fmt.rate(t.filterExpectedFpp()));
        out.println("  off-heap memory   " + Fmt.count(t.filterMemoryBytes()) + " bytes");
    }

    private void printEntries(PrintWriter out, TableReader t) {
        long max = limit == null ? Long.MAX_VALUE : limit;
        out.println("entries:");
        long n = 0;
        try (InternalIterator it = t.iterator()) {
            for (it.seekToFirst(); it.valid() && n < max; it.next()) {
                byte[] k = it.key();
                String shown = "  " + TableFiles.internalKey(format.keys(), k);
                boolean tombstone = (InternalKey.trailer(k) & 0xff) == ValueType.DELETE.code();
                out.println(tombstone ? shown : shown + "\t" + format.values().format(it.value()));
                n++;
            }
        }
    }

    private static String handle(BlockHandle h) {
        return "offset " + Fmt.count(h.offset()) + ", size " + Fmt.count(h.size());
    }
}

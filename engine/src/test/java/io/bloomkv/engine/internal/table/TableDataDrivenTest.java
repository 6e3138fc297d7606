package io.bloomkv.engine.internal.table;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.record.DataDriven;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data-driven table tests (src/test/resources/testdata/table/*), in the style of Pebble's sstable
 * package.
 *
 * <p>Commands: {@code build [block-size=N] [restart=N] [filter=KIND|none] [bits=B]} with one entry
 * per input line ({@code key.seq.PUT value} or {@code key.seq.DEL}) prints the properties;
 * {@code layout} prints the footer and index; {@code get key [snap=N]}; {@code iter} runs the
 * input operations ({@code first}, {@code seek key.seq}, {@code next}); {@code flip OFFSET}
 * damages the file and reopens it; {@code counters} prints and resets the read counters.
 */
class TableDataDrivenTest {
    @TempDir
    Path dir;

    private final FileSystem fs = FileSystem.disk();
    private TableReader reader;
    private ReadCounters counters = new ReadCounters();
    private Path path;

    @AfterEach
    void close() {
        if (reader != null) {
            reader.close();
        }
    }

    @Test
    void basic() throws Exception {
        DataDriven.run(DataDriven.testdata("table/basic"), this::handle);
    }

    @Test
    void filters() throws Exception {
        DataDriven.run(DataDriven.testdata("table/filters"), this::handle);
    }

    private String handle(DataDriven.Case c) throws Exception {
        switch (c.command) {
            case "build":
                return build(c);
            case "layout":
                return layout();
            case "get": {
                byte[] uk = c.arg(0).getBytes(StandardCharsets.UTF_8);
                long snap = c.getLong("snap", InternalKey.MAX_SEQUENCE);
                try {
                    TableReader.Entry e = reader.get(uk, Hashing.hash64(uk), snap);
                    if (e == null) {
                        return "not found";
                    }
                    return e.type() + " " + e.sequence()
                            + (e.value() == null ? "" : " " + new String(e.value(), StandardCharsets.UTF_8));
                } catch (CorruptionException ex) {
                    return "corruption at " + ex.offset() + ": "
                            + ex.getMessage().replaceAll(" \\(file .*", "");
                }
            }
            case "iter": {
                List<String> out = new ArrayList<>();
                try (InternalIterator it = reader.iterator()) {
                    for (String op : c.input) {
                        String[] parts = op.trim().split("\\s+");
                        switch (parts[0]) {
                            case "first":
                                it.seekToFirst();
                                break;
                            case "seek":
                                it.seek(parseKey(parts[1]));
                                break;
                            case "next":
                                it.next();
                                break;
                            default:
                                throw new IllegalArgumentException(op);
                        }
                        out.add(op + ": "
                                + (it.valid()
                                        ? formatKey(it.key()) + " " + new String(it.value(), StandardCharsets.UTF_8)
                                        : "."));
                    }
                }
                return String.join("\n", out);
            }
            case "flip": {
                byte[] b = Files.readAllBytes(path);
                int off = Integer.parseInt(c.arg(0));
                b[off] ^= 0x01;
                Files.write(path, b);
                reader.close();
                reader = null;
                try {
                    reader = TableReader.open(fs, path, 1, null, counters);
                    return "opened" + (reader.filterBroken() ? " (filter broken: " + reader.filterProblem() + ")" : "");
                } catch (CorruptionException e) {
                    return "corruption at " + e.offset() + ": " + e.getMessage().replaceAll(" \\(file .*", "");
                }
            }
            case "counters": {
                String s = "checks=" + counters.filterChecks.sum() + " useful=" + counters.filterUseful.sum()
                        + " positive=" + counters.filterPositive() + " truePositive="
                        + counters.filterTruePositive.sum()
                        + " withoutFilter=" + counters.tablesReadWithoutFilter.sum() + " blockReads="
                        + counters.blockReads.sum()
                        + " blockReadBytes=" + counters.blockReadBytes.sum();
                counters = new ReadCounters();
                if (reader != null) {
                    reader.close();
                    reader = TableReader.open(fs, path, 1, null, counters);
                }
                return s;
            }
            default:
                throw new IllegalArgumentException("unknown command " + c.command);
        }
    }

    private String build(DataDriven.Case c) throws Exception {
        if (reader != null) {
            reader.close();
        }
        TableBuilderOptions opts = TableBuilderOptions.defaults()
                .blockSize((int) c.getLong("block-size", 4096))
                .restartInterval((int) c.getLong("restart", 16));
        String filter = c.get("filter", "BLOCKED");
        if (filter.equals("none")) {
            opts = opts.bitsPerKey(0);
        } else {
            opts = opts.filterKind(FilterKind.valueOf(filter)).bitsPerKey(Double.parseDouble(c.get("bits", "10")));
        }
        path = dir.resolve("000001.sst");
        TableProperties p;
        try (TableWriter w = new TableWriter(fs.newWritableFile(path), opts, c.input.size())) {
            for (String line : c.input) {
                int sp = line.indexOf(' ');
                byte[] key = parseKey(sp < 0 ? line : line.substring(0, sp));
                w.add(key, sp < 0 ? new byte[0] : line.substring(sp + 1).getBytes(StandardCharsets.UTF_8));
            }
            p = w.finish();
        }
        counters = new ReadCounters();
        reader = TableReader.open(fs, path, 1, null, counters);
        return "entries=" + p.entries() + " deletions=" + p.deletions() + " dataBlocks=" + p.dataBlocks()
                + " fileSize=" + p.fileSize() + "\nkeys=[" + formatKey(p.smallestKey()) + ", "
                + formatKey(p.largestKey())
                + "] seqs=[" + p.smallestSeq() + ", " + p.largestSeq() + "]\nfilter=" + p.filterKind() + " bitsPerKey="
                + p.bitsPerKey() + " filterBytes=" + p.filterBytes() + " distinctUserKeys=" + p.filterKeys()
                + "\nrawKeyBytes=" + p.rawKeyBytes() + " rawValueBytes=" + p.rawValueBytes() + " dataSize="
                + p.dataSize()
                + " indexSize=" + p.indexSize();
    }

    private String layout() {
        List<String> out = new ArrayList<>();
        Footer f = reader.footer();
        out.add("footer: filter=" + f.filter() + " index=" + f.index() + " properties=" + f.properties() + " version="
                + f.formatVersion());
        int i = 0;
        for (TableReader.IndexEntry e : reader.indexEntries()) {
            out.add("block " + i++ + ": " + e.handle() + " separator=" + formatKey(e.separator()));
        }
        if (reader.hasFilter()) {
            out.add("filter: " + reader.filterKind() + " k=" + reader.filterHashCount() + " bits="
                    + reader.filterBitSize() + " keys=" + reader.filterKeyCount());
        }
        return String.join("\n", out);
    }

    /** {@code user.seq.PUT|DEL}. */
    private static byte[] parseKey(String s) {
        String[] parts = s.split("\\.");
        ValueType t = parts[2].equals("DEL") ? ValueType.DELETE : ValueType.PUT;
        return InternalKey.encode(parts[0].getBytes(StandardCharsets.UTF_8), Long.parseLong(parts[1]), t);
    }

    private static String formatKey(byte[] internalKey) {
        return new String(InternalKey.userKey(internalKey), StandardCharsets.UTF_8) + "."
                + InternalKey.sequence(internalKey) + "."
                + (InternalKey.type(internalKey) == ValueType.DELETE ? "DEL" : "PUT");
    }
}

package io.bloomkv.engine;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.internal.record.LogReader;
import io.bloomkv.engine.internal.record.LogWriter;
import io.bloomkv.engine.internal.table.BlockHandle;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * Writes the seed corpus of the engine's fuzz targets from encodings made by the real writers (a Db's tables, WAL and
 * MANIFEST, WriteBatch). Seeds are named {@code seed-*}; the tables and MANIFESTs they come from are read back by the
 * real readers (a table must verify). A tool, not a test: run it once, and again when a format changes, from the
 * repository root:
 *
 * <pre>{@code
 * mvn -B -q -pl engine -am test-compile
 * java -cp "engine/target/test-classes:engine/target/classes:$(cat engine/target/runtime-classpath.txt)" \
 *   io.bloomkv.engine.FuzzSeedWriter .
 * }</pre>
 *
 * (the argument is the repository root; the class path file, which names bloom/target/classes, is written by
 * {@code test-compile}).
 */
final class FuzzSeedWriter {
    private final Path tmp;

    private FuzzSeedWriter(Path tmp) {
        this.tmp = tmp;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: FuzzSeedWriter <repository root>");
            System.exit(2);
        }
        Path tmp = Files.createTempDirectory("bloomkv-fuzz-seeds");
        try {
            new FuzzSeedWriter(tmp).writeSeeds(Path.of(args[0]));
        } finally {
            try (Stream<Path> all = Files.walk(tmp)) {
                for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    private static void seed(Path root, String target, String name, byte[] bytes) throws IOException {
        Path dir = root.resolve(target);
        Files.createDirectories(dir);
        Files.write(dir.resolve("seed-" + name), bytes);
    }

    private static byte[] flagged(int flags, byte[] b) {
        byte[] out = new byte[b.length + 1];
        out[0] = (byte) flags;
        System.arraycopy(b, 0, out, 1, b.length);
        return out;
    }

    private static byte[] slice(byte[] file, BlockHandle h) {
        return Arrays.copyOfRange(file, (int) h.offset(), (int) (h.offset() + h.size()));
    }

    private void writeSeeds(Path repository) throws IOException {
        Path root = repository.resolve("engine/src/test/resources");
        Path tableInputs = root.resolve("io/bloomkv/engine/internal/table/TableFuzzTestInputs");
        Path walInputs = root.resolve("io/bloomkv/engine/internal/record/LogFuzzTestInputs");
        Path manifestInputs = root.resolve("io/bloomkv/engine/internal/version/ManifestFuzzTestInputs");
        Path batchInputs = root.resolve("io/bloomkv/engine/WriteBatchFuzzTestInputs");
        Random rnd = new Random(20261122L);
        int written = 0;

        // Tables (and their WAL and MANIFEST) from a real Db: small blocks so a table has several.
        Compression[] compressions = {Compression.NONE, Compression.LZ4, Compression.ZSTD};
        FilterKind[] kinds = {FilterKind.BLOCKED, FilterKind.STANDARD, FilterKind.RIBBON};
        for (int variant = 0; variant < kinds.length; variant++) {
            FilterKind kind = kinds[variant];
            Compression compression = compressions[variant];
            Path d = tmp.resolve("db-" + kind);
            Options o = Options.defaults()
                    .filterKind(kind)
                    .compression(compression)
                    .bottommostCompression(compression)
                    .blockSize(256)
                    .writeBufferSize(1 << 20);
            List<byte[]> walRecords = new ArrayList<>();
            try (Db db = Db.open(d, o)) {
                for (int i = 0; i < 24; i++) {
                    WriteBatch b = new WriteBatch();
                    b.put(TestKeys.key(i), TestKeys.value(rnd, 12));
                    if (i % 5 == 0) {
                        b.delete(TestKeys.key(i / 2));
                    }
                    db.write(b);
                    byte[] c = b.contents(100 + i);
                    walRecords.add(Arrays.copyOf(c, b.approximateSize()));
                }
                db.flush();
                db.put(TestKeys.key(3), TestKeys.bytes("again"));
                db.flush();
                db.compactRange(null, null);
            }
            try (Stream<Path> files = Files.list(d)) {
                for (Path p : files.sorted().toList()) {
                    String name = p.getFileName().toString();
                    byte[] bytes = Files.readAllBytes(p);
                    if (name.endsWith(".sst")) {
                        try (TableReader r = TableReader.open(FileSystem.disk(), p, 1, null, null)) {
                            List<?> bad = r.verifyChecksums();
                            if (!bad.isEmpty()) {
                                throw new IllegalStateException(name + " does not verify: " + bad);
                            }
                            String n = kind + "-" + compression + "-" + name;
                            if (compression != Compression.NONE) {
                                // The stored (compressed) data and index blocks, for the decompression target.
                                BlockHandle data0 = r.indexEntries().get(0).handle();
                                for (BlockHandle h :
                                        new BlockHandle[] {data0, r.footer().index()}) {
                                    int type = bytes[(int) (h.offset() + h.size())] & 0xff;
                                    if (type == compression.code()) {
                                        seed(
                                                tableInputs,
                                                "blockDecompress",
                                                n + "-" + h.offset(),
                                                flagged(compression == Compression.LZ4 ? 0 : 1, slice(bytes, h)));
                                        written++;
                                    }
                                }
                            }
                            for (int flags = 0; flags <= 1; flags++) {
                                seed(tableInputs, "footer", n + "-" + flags, flagged(flags, bytes));
                                seed(tableInputs, "tableOpen", n + "-" + flags, flagged(flags, bytes));
                            }
                            if (compression == Compression.NONE) {
                                seed(
                                        tableInputs,
                                        "block",
                                        n + "-index",
                                        flagged(0, slice(bytes, r.footer().index())));
                                seed(
                                        tableInputs,
                                        "block",
                                        n + "-data0",
                                        flagged(
                                                0,
                                                slice(
                                                        bytes,
                                                        r.indexEntries().get(0).handle())));
                            }
                            seed(
                                    tableInputs,
                                    "properties",
                                    n,
                                    flagged(0, slice(bytes, r.footer().properties())));
                            written += 7;
                        }
                    } else if (name.startsWith("MANIFEST-")) {
                        ByteArrayOutputStream replay = new ByteArrayOutputStream();
                        try (LogReader lr = new LogReader(FileSystem.disk().newReadableFile(p))) {
                            byte[] rec;
                            int i = 0;
                            while ((rec = lr.readRecord()) != null) {
                                seed(manifestInputs, "versionEditDecode", kind + "-" + i++, rec);
                                replay.write(rec.length & 0xff);
                                replay.write(rec.length >>> 8);
                                replay.write(rec);
                                written++;
                            }
                        }
                        seed(manifestInputs, "manifestReplay", kind.toString(), replay.toByteArray());
                        seed(walInputs, "logReader", "manifest-" + kind + "-0", flagged(0, bytes));
                        seed(walInputs, "logReader", "manifest-" + kind + "-1", flagged(1, bytes));
                        written += 3;
                    }
                }
            }
            // A WAL as the write path frames it.
            Path wal = tmp.resolve("wal-" + kind + ".log");
            try (LogWriter w = new LogWriter(FileSystem.disk().newWritableFile(wal))) {
                for (byte[] r : walRecords.subList(0, 10)) {
                    w.addRecord(r);
                }
            }
            byte[] walBytes = Files.readAllBytes(wal);
            seed(walInputs, "logReader", "wal-" + kind + "-0", flagged(0, walBytes));
            seed(walInputs, "logReader", "wal-" + kind + "-1", flagged(1, walBytes));
            for (int i = 0; i < 4; i++) {
                seed(batchInputs, "writeBatchDecode", kind + "-" + i, walRecords.get(i * 5));
            }
            written += 6;
        }
        if (written <= 20) {
            throw new IllegalStateException("only " + written + " seeds written");
        }
        System.out.println("FuzzSeedWriter: " + written + " seeds under " + root);
    }
}

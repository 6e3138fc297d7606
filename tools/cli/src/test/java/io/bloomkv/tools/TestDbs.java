package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Builds small databases for the tests through the command line itself. */
final class TestDbs {
    private TestDbs() {}

    /**
     * Loads keys {@code key000000, key000002, ...} ({@code count} even ids, value "value N") into
     * {@code db} and flushes them into one table; extra CLI options (e.g. --filter-kind) follow.
     */
    static void loadEven(Path tmp, Path db, int count, String... extra) throws IOException {
        Path input = tmp.resolve("even-" + count + ".tsv");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            lines.add(String.format("key%06d\tvalue %d", 2 * i, 2 * i));
        }
        Files.write(input, lines, StandardCharsets.UTF_8);
        List<String> args = new ArrayList<>(
                List.of("put", db.toString(), "--create", "--no-sync", "--flush", "--input", input.toString()));
        args.addAll(List.of(extra));
        Cli.Result r = Cli.run(args.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.toString()).isZero();
    }

    /**
     * A database whose next open has a compaction due: {@code tables} level-0 tables with overlapping key ranges (table
     * t holds the keys i = t mod tables of key0000..), written with automatic compaction off, then writes left in the
     * WAL only (overwrites of some keys, and new keys), which the next open writes to another level-0 table. Returns
     * every key with its value.
     */
    static java.util.SortedMap<String, String> compactionDue(Path db, int tables) {
        java.util.SortedMap<String, String> expected = new java.util.TreeMap<>();
        try (io.bloomkv.engine.Db d = io.bloomkv.engine.Db.open(
                db, io.bloomkv.engine.Options.defaults().autoCompaction(false))) {
            for (int t = 0; t < tables; t++) {
                for (int i = t; i < 100 * tables; i += tables) {
                    put(d, expected, String.format("key%04d", i), "v" + i);
                }
                d.flush();
            }
            for (int i = 0; i < 100 * tables + 50; i += 7) {
                put(d, expected, String.format("key%04d", i), "wal" + i);
            }
            d.syncWal();
            assertThat(d.stats().levelTables(0)).isEqualTo(tables);
        }
        return expected;
    }

    private static void put(io.bloomkv.engine.Db d, java.util.Map<String, String> expected, String k, String v) {
        d.put(k.getBytes(StandardCharsets.UTF_8), v.getBytes(StandardCharsets.UTF_8));
        expected.put(k, v);
    }

    /** Every key of the database in {@code db} with its value, read through a read-only open. */
    static java.util.SortedMap<String, String> pairs(Path db) {
        java.util.SortedMap<String, String> out = new java.util.TreeMap<>();
        try (io.bloomkv.engine.Db d = io.bloomkv.engine.Db.open(
                        db, io.bloomkv.engine.Options.defaults().readOnly(true));
                io.bloomkv.engine.DbIterator it = d.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                out.put(new String(it.key(), StandardCharsets.UTF_8), new String(it.value(), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    /** Tables per level of the database in {@code db} (read-only open), e.g. [7, 0, 0, ...]. */
    static List<Integer> levelTables(Path db) {
        try (io.bloomkv.engine.Db d = io.bloomkv.engine.Db.open(
                db, io.bloomkv.engine.Options.defaults().readOnly(true))) {
            io.bloomkv.engine.Stats s = d.stats();
            List<Integer> out = new ArrayList<>();
            for (int level = 0; level < s.numLevels(); level++) {
                out.add(s.levelTables(level));
            }
            return out;
        }
    }

    /** The table files of {@code db}, by name. */
    static List<Path> tables(Path db) throws IOException {
        try (Stream<Path> s = Files.list(db)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".sst"))
                    .sorted()
                    .toList();
        }
    }

    /** Flips (xor 0xff) the byte at {@code offset} of {@code file}. */
    static void flipByte(Path file, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.flip();
            byte v = b.get(0);
            ch.write(ByteBuffer.wrap(new byte[] {(byte) (v ^ 0xff)}), offset);
        }
    }

    /** Every file of {@code dir} by name, with a SHA-256 of its bytes: equal maps mean an unchanged directory. */
    static java.util.Map<String, String> contents(Path dir) throws Exception {
        java.util.Map<String, String> out = new java.util.TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                byte[] digest =
                        java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
                out.put(p.getFileName().toString(), java.util.HexFormat.of().formatHex(digest));
            }
        }
        return out;
    }
}

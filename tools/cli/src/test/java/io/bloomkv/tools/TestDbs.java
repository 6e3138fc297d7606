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

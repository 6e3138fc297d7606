package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.inspect.TableDump;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bloomkv db stats}: levels, tables, and the read probe of absent keys. */
class DbStatsCommandTest {
    private static final long SEED = Long.getLong("bloomkv.tools.seed", 20261122L);

    static {
        System.out.println("DbStatsCommandTest seed = " + SEED + " (replay with -Dbloomkv.tools.seed=" + SEED + ")");
    }

    @TempDir
    Path tmp;

    /** Three flushed tables with overlapping key ranges: ids = 3j + t for table t. */
    private Path threeTables(String... extra) throws IOException {
        Path db = tmp.resolve("db");
        for (int t = 0; t < 3; t++) {
            List<String> lines = new ArrayList<>();
            for (int j = 0; j < 1500; j++) {
                int id = 3 * j + t;
                lines.add(String.format("user%06d\tv%d", id, id));
            }
            Path input = Files.write(tmp.resolve("t" + t + ".tsv"), lines, StandardCharsets.UTF_8);
            List<String> args = new ArrayList<>(
                    List.of("put", db.toString(), "--create", "--no-sync", "--flush", "--input", input.toString()));
            args.addAll(List.of(extra));
            Cli.Result r = Cli.run(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(r.toString()).isZero();
        }
        return db;
    }

    @Test
    void levelsTablesAndAProbeThatMatchesTheFormula() throws IOException {
        Path db = threeTables();
        Cli.Result r = Cli.run("db", "stats", db.toString(), "--probes", "20000", "--seed", Long.toString(SEED));
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.err()).isEmpty();
        String out = r.out();
        assertThat(out).contains("database: " + db.toAbsolutePath());
        assertThat(out).containsPattern("\\n  L0 +3 +4,500 ");
        assertThat(out).containsPattern("\\n  total +3 +4,500 ");
        assertThat(out.lines().filter(l -> l.matches("  L0 +#\\d+ .* BLOCKED .*")))
                .hasSize(3);
        assertThat(out).contains("user000000", "user004499");
        assertThat(out).contains("read probe: 20,000 absent keys", "seed " + SEED);

        // Every probe key lies inside the three overlapping tables (except after the very last key).
        long checks = number(out, "filter checks");
        long expectedChecks = number(out, "theoretical FPR .* over");
        assertThat(checks).as("seed " + SEED).isEqualTo(expectedChecks).isBetween(59_000L, 60_000L);
        long avoided = number(out, "disk lookups avoided");
        assertThat((double) avoided / checks).as("useful share, seed " + SEED).isGreaterThan(0.98);
        assertThat(number(out, "filter positives")).isEqualTo(checks - avoided);
        assertThat(out).contains("0 true positives (probe keys found: 0)");
        // ~60,000 checks at ~0.9%: measured within 25% of theory is > 4 standard errors.
        double measured = rate(out, "measured FPR");
        double theory = rate(out, "theoretical FPR");
        assertThat(measured).as("measured vs theory, seed " + SEED).isBetween(theory * 0.75, theory * 1.25);
        // No block cache: every filter positive reads one data block.
        assertThat(number(out, "blocks read")).isEqualTo(checks - avoided);
    }

    @Test
    void withoutFiltersEveryCheckReadsABlock() throws IOException {
        Path db = threeTables("--bits-per-key", "0");
        Cli.Result r = Cli.run("db", "stats", db.toString(), "--probes", "1000", "--seed", Long.toString(SEED));
        assertThat(r.exitCode()).as(r.toString()).isZero();
        String out = r.out();
        assertThat(out.lines().filter(l -> l.matches("  L0 +#\\d+ .* none .*"))).hasSize(3);
        assertThat(number(out, "filter checks")).isZero();
        long unfiltered = number(out, "tables without filter");
        assertThat(unfiltered).isBetween(2_900L, 3_000L);
        assertThat(number(out, "blocks read")).isEqualTo(unfiltered);
    }

    @Test
    void noProbeAndNoTables() throws IOException {
        Path db = threeTables();
        Cli.Result r = Cli.run("db", "stats", db.toString(), "--probes", "0", "--no-tables");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("levels").doesNotContain("read probe", "tables (level 0");
        assertThat(Cli.run("db", "stats", db.toString(), "--probes", "-5").exitCode())
                .isEqualTo(ExitCodes.USAGE);
    }

    /** db stats shows keys but no values: --hex and --key-hex show the keys in hex, --value-hex is refused. */
    @Test
    void hexKeysAndNoValueHex() throws IOException {
        Path db = threeTables();
        Cli.Result hex = Cli.run("db", "stats", db.toString(), "--probes", "0", "--hex");
        assertThat(hex.exitCode()).as(hex.toString()).isZero();
        // user000000 and user004499 in hex
        assertThat(hex.out()).contains("75736572303030303030", "75736572303034343939");
        assertThat(Cli.run("db", "stats", db.toString(), "--probes", "0", "--key-hex")
                        .out())
                .contains("75736572303030303030");
        Cli.Result valueHex = Cli.run("db", "stats", db.toString(), "--probes", "0", "--value-hex");
        assertThat(valueHex.exitCode()).as(valueHex.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(valueHex.err()).startsWith("bloomkv db stats: Unknown option: '--value-hex'");
        assertThat(valueHex.out()).isEmpty();
    }

    /** A table whose range filter block is damaged is named, with the reason, under the table listing. */
    @Test
    void aDamagedRangeFilterIsNamed() throws IOException {
        Path db = tmp.resolve("ranged");
        try (Db d = Db.open(db, Options.defaults().rangeFilterBitsPerKey(10))) {
            for (int i = 0; i < 500; i++) {
                d.put(String.format("key%04d", i).getBytes(StandardCharsets.UTF_8), new byte[] {1});
            }
            d.flush();
        }
        Path table = TestDbs.tables(db).get(0);
        Cli.Result good = Cli.run("db", "stats", db.toString(), "--probes", "0");
        assertThat(good.exitCode()).as(good.toString()).isZero();
        assertThat(good.out()).doesNotContain("unusable");
        // The range filter block lies between the point filter and the index (engine/FORMAT.md, "Table layout").
        try (TableDump t = TableDump.open(table)) {
            long from = t.filterBlock().offset() + t.filterBlock().size();
            TestDbs.flipByte(table, (from + t.indexBlock().offset()) / 2);
        }
        try (TableDump t = TableDump.open(table)) {
            assertThat(t.verifyChecksums())
                    .singleElement()
                    .satisfies(bad -> assertThat(bad.kind()).isEqualTo("range filter"));
        }
        for (String[] extra : new String[][] {{}, {"--no-tables"}}) {
            List<String> args = new ArrayList<>(List.of("db", "stats", db.toString(), "--probes", "0"));
            args.addAll(List.of(extra));
            Cli.Result r = Cli.run(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.out())
                    .as(String.join(" ", args))
                    .contains("unusable filters (reads of these tables skip them, fail open):\n")
                    .containsPattern("\\n  L\\d+ #\\d+ range filter: .*checksum.*\\n")
                    .doesNotContainPattern("#\\d+ filter: ");
        }
    }

    @Test
    void emptyDatabase() {
        Path db = tmp.resolve("empty");
        assertThat(Cli.run("put", db.toString(), "--create", "k", "v").exitCode())
                .isZero();
        assertThat(Cli.run("delete", db.toString(), "k").exitCode()).isZero();
        Cli.Result r = Cli.run("db", "stats", db.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("read probe: skipped, the database holds no keys");
    }

    @Test
    void errors() throws IOException {
        Cli.Result missing = Cli.run("db", "stats", tmp.resolve("nope").toString());
        assertThat(missing.exitCode()).isEqualTo(ExitCodes.IO_ERROR);
        assertThat(missing.err())
                .isEqualTo("bloomkv db stats: no such database directory: " + tmp.resolve("nope") + "\n");
        Path db = threeTables();
        try (Db held = Db.open(db, Options.defaults())) {
            // A read-only open takes no LOCK: stats of a database another process holds.
            Cli.Result held3 = Cli.run("db", "stats", db.toString(), "--probes", "100");
            assertThat(held3.exitCode()).as(held3.toString()).isZero();
            assertThat(held3.out()).contains("total", "read probe");
            assertThat(held.stats().tableCount()).as("the holder is unaffected").isEqualTo(3);
        }
    }

    private static long number(String out, String label) {
        Matcher m = Pattern.compile("\\n  " + label + " *([\\d,]+)").matcher(out);
        assertThat(m.find()).as(label + " in\n" + out).isTrue();
        return Long.parseLong(m.group(1).replace(",", ""));
    }

    private static double rate(String out, String label) {
        Matcher m = Pattern.compile("\\n  " + label + " *([\\d.]+)%").matcher(out);
        assertThat(m.find()).as(label + " in\n" + out).isTrue();
        return Double.parseDouble(m.group(1)) / 100;
    }
}

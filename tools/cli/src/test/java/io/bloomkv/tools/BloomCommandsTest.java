package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;
import io.bloomkv.bloom.Filters;
import java.util.List;
import java.util.Locale;
import net.openhft.chronicle.core.io.AbstractReferenceCounted;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code bloomkv bloom calc} and {@code bloomkv bloom test}. */
class BloomCommandsTest {
    private static final long SEED = Long.getLong("bloomkv.tools.seed", 20261122L);

    static {
        System.out.println("BloomCommandsTest seed = " + SEED + " (replay with -Dbloomkv.tools.seed=" + SEED + ")");
    }

    /** Every filter the commands build is closed: Chronicle's reference tracing finds none left. */
    @BeforeEach
    void trace() {
        AbstractReferenceCounted.enableReferenceTracing();
    }

    @AfterEach
    void noLeaks() {
        AbstractReferenceCounted.assertReferencesReleased();
        AbstractReferenceCounted.disableReferenceTracing();
    }

    @Test
    void calcForFppUsesTheLibraryFormulas() {
        Cli.Result r = Cli.run("bloom", "calc", "--keys", "1000000", "--fpp", "0.01");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).startsWith("bloom calc: 1,000,000 keys, target false-positive rate 1.00%");
        // STANDARD: b = -ln(0.01)/ln(2)^2 = 9.585..., m = ceil(n b) rounded up to 64 bits, k = round(b ln 2) = 7.
        String[] standard = row(r.out(), "STANDARD");
        assertThat(standard[2]).isEqualTo("7");
        assertThat(standard[3]).isEqualTo("9,585,088");
        assertThat(standard[4]).isEqualTo("1,198,136");
        double fpp = FilterMath.exactFpp(9_585_088, 7, 1_000_000);
        assertThat(standard[standard.length - 1]).isEqualTo(String.format(Locale.ROOT, "%.3g%%", fpp * 100));
        // BLOCKED needs more bits for the same rate; its expected rate is at most the target.
        String[] blocked = row(r.out(), "BLOCKED");
        assertThat(Double.parseDouble(blocked[1])).isGreaterThan(Double.parseDouble(standard[1]));
        assertThat(Long.parseLong(blocked[3].replace(",", "")) % 512).isZero();
        assertThat(parseRate(blocked[blocked.length - 1])).isLessThanOrEqualTo(0.01);
        assertThat(r.out()).contains("PARTITIONED", "COUNTING");
    }

    @Test
    void calcForBitsPerKey() {
        Cli.Result r = Cli.run("bloom", "calc", "--keys", "1000", "--bits-per-key", "10");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        String[] standard = row(r.out(), "STANDARD");
        assertThat(standard[1]).isEqualTo("10.05"); // 10,000 bits rounded up to 10,048
        assertThat(standard[2]).isEqualTo("7");
        assertThat(standard[3]).isEqualTo("10,048");
        String[] counting = row(r.out(), "COUNTING");
        assertThat(counting[3]).isEqualTo("10,000");
        assertThat(counting[4]).isEqualTo("5,000"); // 4-bit counters
    }

    @Test
    void calcNeedsExactlyOneSizing() {
        Cli.Result none = Cli.run("bloom", "calc", "--keys", "1000");
        assertThat(none.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(none.err()).contains("--fpp").contains("--bits-per-key");
        Cli.Result both = Cli.run("bloom", "calc", "--keys", "1000", "--fpp", "0.01", "--bits-per-key", "10");
        assertThat(both.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(both.err()).contains("mutually exclusive");
        Cli.Result badKeys = Cli.run("bloom", "calc", "--keys", "0", "--fpp", "0.01");
        assertThat(badKeys.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(badKeys.err()).contains("--keys must be at least 1");
        Cli.Result badBits = Cli.run("bloom", "calc", "--keys", "10", "--bits-per-key", "-1");
        assertThat(badBits.exitCode()).isEqualTo(ExitCodes.USAGE);
    }

    private static long[] hashes(int n) {
        long[] h = new long[n];
        for (int i = 0; i < n; i++) {
            h[i] = i * 0x9E3779B97F4A7C15L + 1;
        }
        return h;
    }

    @Test
    void planMatchesRealFilters() {
        for (FilterKind kind : FilterKind.values()) {
            for (long n : new long[] {1, 7, 1000, 12_345}) {
                for (double b : new double[] {1, 4.5, 10, 16, 23.7}) {
                    FilterPlan p = FilterPlan.of(kind, n, b);
                    try (Filter f =
                            kind.isStatic() ? Filters.build(kind, hashes((int) n), b) : Filters.create(kind, n, b)) {
                        String what = kind + " n=" + n + " b=" + b;
                        assertThat(p.bits()).as(what).isEqualTo(f.bitSize());
                        assertThat(p.hashCount()).as(what).isEqualTo(f.hashCount());
                        assertThat(p.bytes()).as(what).isLessThanOrEqualTo(f.sizeInBytes());
                    }
                }
                FilterPlan p = FilterPlan.forFpp(kind, n, 0.003);
                try (Filter f = kind.isStatic()
                        ? Filters.build(
                                kind, hashes((int) n), io.bloomkv.bloom.FilterMath.ribbonBitsPerKeyForFpp(n, 0.003))
                        : Filters.createForFpp(kind, n, 0.003)) {
                    if (kind.isStatic()) {
                        assertThat(f.expectedFpp())
                                .as("RIBBON plan rate")
                                .isEqualTo(p.expectedFpp())
                                .isLessThanOrEqualTo(0.003);
                    }
                    assertThat(p.bits()).as(kind + " fpp n=" + n).isEqualTo(f.bitSize());
                    assertThat(p.hashCount()).as(kind + " fpp n=" + n).isEqualTo(f.hashCount());
                }
            }
        }
    }

    @Test
    void testMeasuresEveryKindReproducibly() {
        String[] args = {"bloom", "test", "--keys", "20000", "--probes", "200000", "--seed", Long.toString(SEED)};
        Cli.Result r = Cli.run(args);
        assertThat(r.exitCode()).as("seed " + SEED + "\n" + r).isZero();
        assertThat(r.out()).contains("seed " + SEED);
        for (FilterKind kind : FilterKind.values()) {
            String[] cells = row(r.out(), kind.name());
            assertThat(cells[cells.length - 1])
                    .as("false negatives of " + kind + ", seed " + SEED)
                    .isEqualTo("0");
            double theoretical = parseRate(cells[6]);
            double measured = parseRate(cells[7]);
            // 200,000 probes at ~1%: the standard error is ~0.02 percentage points; 40% slack is > 15 sigma.
            assertThat(measured)
                    .as(kind + " measured vs theoretical, seed " + SEED)
                    .isBetween(theoretical * 0.6, theoretical * 1.4);
        }
        assertThat(Cli.run(args).out()).as("same seed, same output").isEqualTo(r.out());
    }

    @Test
    void testForOneKindAtATargetRate() {
        Cli.Result r = Cli.run(
                "bloom",
                "test",
                "--kind",
                "blocked",
                "--keys",
                "5000",
                "--probes",
                "50000",
                "--fpp",
                "0.05",
                "--seed",
                Long.toString(SEED));
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("target fpp 5.00%").contains("BLOCKED").doesNotContain("STANDARD");
        Cli.Result bad = Cli.run("bloom", "test", "--kind", "fancy");
        assertThat(bad.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(bad.err().lines()).hasSize(1);
    }

    /** The cells of the table row that starts with {@code first}. */
    static String[] row(String out, String first) {
        List<String[]> rows = out.lines()
                .map(String::trim)
                .map(l -> l.split("\\s+"))
                .filter(c -> c[0].equals(first))
                .toList();
        assertThat(rows).as("one row for " + first + " in\n" + out).hasSize(1);
        return rows.get(0);
    }

    /** {@code "0.819%"} as 0.00819. */
    static double parseRate(String cell) {
        assertThat(cell).endsWith("%");
        return Double.parseDouble(cell.substring(0, cell.length() - 1)) / 100;
    }
}

package io.bloomkv.tools;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv bloom calc --keys N (--fpp P | --bits-per-key B)}: the size, probe count and
 * expected false-positive rate each filter kind gets, from the bloom library's own sizing rules and
 * formulas (nothing is allocated).
 */
@Command(
        name = "calc",
        mixinStandardHelpOptions = true,
        description = {
            "Size each filter kind: bits, bytes, optimal k, expected false-positive rate.",
            "The figures come from the library's own formulas (FilterMath)."
        })
final class BloomCalcCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--keys", paramLabel = "N", required = true, description = "Number of keys the filter holds.")
    long keys;

    @ArgGroup(exclusive = true, multiplicity = "1")
    FilterSizing sizing;

    @Override
    public Integer call() {
        if (keys < 1) {
            throw new ParameterException(spec.commandLine(), "--keys must be at least 1: " + keys);
        }
        checkSizing(spec, sizing.fpp, sizing.bitsPerKey);
        PrintWriter out = spec.commandLine().getOut();
        out.println("bloom calc: " + Fmt.count(keys) + " keys, "
                + (sizing.fpp != null
                        ? "target false-positive rate " + Fmt.rate(sizing.fpp)
                        : Fmt.decimal(sizing.bitsPerKey, 2) + " bits per key"));
        TextTable table = new TextTable("kind", "bits/key", "k", "bits", "bytes", "memory", "expected FPR");
        for (FilterKind kind : FilterKind.values()) {
            FilterPlan p = sizing.fpp != null
                    ? FilterPlan.forFpp(kind, keys, sizing.fpp)
                    : FilterPlan.of(kind, keys, sizing.bitsPerKey);
            table.row(
                    kind,
                    Fmt.decimal(p.bitsPerKey(), 2),
                    p.hashCount(),
                    Fmt.count(p.bits()),
                    Fmt.count(p.bytes()),
                    Fmt.bytes(p.bytes()),
                    Fmt.rate(p.expectedFpp()));
        }
        table.print(out, "  ");
        out.println("STANDARD/COUNTING: (1-(1-1/m)^(kn))^k; PARTITIONED: (1-(1-k/m)^n)^k;"
                + " BLOCKED: Poisson average over 512-bit blocks;"
                + " RIBBON: 2^-r and 2^-(r+1) mixed by the share of blocks storing r+1 result bits (k = r),"
                + " over n x " + Fmt.decimal(FilterMath.ribbonOverhead(keys), 3) + " slots.");
        out.println("COUNTING: 'bits' counts 4-bit counters, so it needs 4x the memory for the same rate.");
        out.flush();
        return ExitCodes.OK;
    }

    /** Rejects a false-positive target outside (0, 1) or a non-positive bits-per-key as a usage error. */
    static void checkSizing(CommandSpec spec, Double fpp, Double bitsPerKey) {
        if (fpp != null && !(fpp > 0 && fpp < 1)) {
            throw new ParameterException(spec.commandLine(), "--fpp must be in (0, 1): " + fpp);
        }
        if (fpp == null && bitsPerKey != null && (!(bitsPerKey > 0) || bitsPerKey > 1000)) {
            throw new ParameterException(spec.commandLine(), "--bits-per-key must be in (0, 1000]: " + bitsPerKey);
        }
    }
}

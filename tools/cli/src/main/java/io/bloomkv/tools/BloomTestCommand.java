package io.bloomkv.tools;

import io.bloomkv.bloom.Filter;
import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;
import io.bloomkv.bloom.Filters;
import io.bloomkv.bloom.Hashing;
import java.io.PrintWriter;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bloomkv bloom test}: builds a filter of each kind over random keys, checks that every
 * added key is found, probes keys that were never added, and prints the measured false-positive
 * rate next to the kind's own formula.
 *
 * <p>Added and probed keys come from two independent streams of one {@link SplittableRandom}
 * seeded with {@code --seed}: a probe equals an added key with probability at most
 * n*m/2^(8*keySize), below 1e-8 for the smallest allowed key (8 bytes) and a billion probes.
 * For COUNTING the "bits" column counts 4-bit counters.
 */
@Command(
        name = "test",
        mixinStandardHelpOptions = true,
        description = {
            "Build a filter of each kind over random keys and measure its false positives.",
            "Probes absent keys and prints the measured vs theoretical false-positive",
            "rate. Exit code 70 if an added key is not found (a false negative)."
        })
final class BloomTestCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--keys",
            paramLabel = "N",
            defaultValue = "100000",
            description = "Keys added to each filter (default: ${DEFAULT-VALUE}).")
    long keys;

    @Option(
            names = "--probes",
            paramLabel = "N",
            defaultValue = "1000000",
            description = "Absent keys probed (default: ${DEFAULT-VALUE}).")
    long probes;

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    FilterSizing sizing;

    @Option(
            names = "--kind",
            paramLabel = "KIND",
            split = ",",
            description = "Filter kinds to test, comma-separated: ${COMPLETION-CANDIDATES} (default: all).")
    List<FilterKind> kinds;

    @Option(
            names = "--key-size",
            paramLabel = "BYTES",
            defaultValue = "16",
            description = "Bytes per random key, 8..4096 (default: ${DEFAULT-VALUE}).")
    int keySize;

    @Option(names = "--seed", paramLabel = "SEED", description = "Random seed (default: a fresh one, printed).")
    Long seed;

    /** The filter of {@code kind} holding {@code keys} keys drawn from {@code added}: built at once for a static kind. */
    private Filter filled(FilterKind kind, Double fpp, double bitsPerKey, SplittableRandom added, byte[] key) {
        if (kind.isStatic()) {
            double b = fpp != null ? FilterMath.ribbonBitsPerKeyForFpp(keys, fpp) : bitsPerKey;
            long[] hashes = new long[(int) keys];
            for (int i = 0; i < hashes.length; i++) {
                added.nextBytes(key);
                hashes[i] = Hashing.hash64(key);
            }
            return Filters.build(kind, hashes, b);
        }
        Filter f = fpp != null ? Filters.createForFpp(kind, keys, fpp) : Filters.create(kind, keys, bitsPerKey);
        for (long i = 0; i < keys; i++) {
            added.nextBytes(key);
            f.add(key);
        }
        return f;
    }

    @Override
    public Integer call() {
        if (keys < 1 || keys > Integer.MAX_VALUE) {
            throw new ParameterException(spec.commandLine(), "--keys must be in 1.." + Integer.MAX_VALUE + ": " + keys);
        }
        if (probes < 1) {
            throw new ParameterException(spec.commandLine(), "--probes must be at least 1: " + probes);
        }
        if (keySize < 8 || keySize > 4096) {
            throw new ParameterException(spec.commandLine(), "--key-size must be in 8..4096: " + keySize);
        }
        double bitsPerKey = sizing == null || sizing.bitsPerKey == null ? 10.0 : sizing.bitsPerKey;
        Double fpp = sizing == null ? null : sizing.fpp;
        BloomCalcCommand.checkSizing(spec, fpp, bitsPerKey);
        long s = seed != null ? seed : new SplittableRandom().nextLong();
        List<FilterKind> tested = kinds == null || kinds.isEmpty() ? List.of(FilterKind.values()) : kinds;

        PrintWriter out = spec.commandLine().getOut();
        out.println("bloom test: " + Fmt.count(keys) + " random " + keySize + "-byte keys added, "
                + Fmt.count(probes) + " absent keys probed, "
                + (fpp != null ? "target fpp " + Fmt.rate(fpp) : Fmt.decimal(bitsPerKey, 1) + " bits per key")
                + ", seed " + s);
        TextTable table = new TextTable(
                "kind",
                "k",
                "bits",
                "bytes",
                "bits/key",
                "bits set",
                "theoretical FPR",
                "measured FPR",
                "95% interval",
                "false pos.",
                "false neg.");
        long falseNegativesTotal = 0;
        for (FilterKind kind : tested) {
            SplittableRandom root = new SplittableRandom(s);
            SplittableRandom added = root.split();
            SplittableRandom absent = root.split();
            byte[] key = new byte[keySize];
            try (Filter f = filled(kind, fpp, bitsPerKey, added, key)) {
                long falseNegatives = 0;
                added = new SplittableRandom(s).split();
                for (long i = 0; i < keys; i++) {
                    added.nextBytes(key);
                    if (!f.mightContain(key)) {
                        falseNegatives++;
                    }
                }
                long falsePositives = 0;
                for (long i = 0; i < probes; i++) {
                    absent.nextBytes(key);
                    if (f.mightContain(key)) {
                        falsePositives++;
                    }
                }
                falseNegativesTotal += falseNegatives;
                table.row(
                        kind,
                        f.hashCount(),
                        Fmt.count(f.bitSize()),
                        Fmt.count(f.sizeInBytes()),
                        Fmt.decimal((double) f.bitSize() / keys, 2),
                        Fmt.share(f.fractionOfBitsSet()),
                        Fmt.rate(f.expectedFpp()),
                        Fmt.rate((double) falsePositives / probes),
                        Fmt.wilson95(falsePositives, probes),
                        Fmt.count(falsePositives),
                        Fmt.count(falseNegatives));
            }
        }
        table.print(out, "  ");
        if (tested.contains(FilterKind.RIBBON)) {
            out.println(
                    "RIBBON: a static filter built from all the keys' hashes (Filters.build); k = its result bits r,"
                            + " bits = its solution bits");
        }
        out.println("replay with: bloomkv bloom test --seed " + s + " (same --keys/--probes/--key-size/sizing)");
        out.flush();
        if (falseNegativesTotal > 0) {
            throw new CliException(
                    ExitCodes.INTERNAL,
                    falseNegativesTotal + " added keys were not found (false negatives): a bug in the filter, seed "
                            + s);
        }
        return ExitCodes.OK;
    }
}

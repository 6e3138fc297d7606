package io.bloomkv.bench.engine;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.bloom.FilterMath;
import java.util.Locale;

/**
 * bloomkv's filter policy as the bench's {@code --filter-kind} names it: a kind for every table ({@code BLOCKED},
 * {@code STANDARD}, {@code PARTITIONED}, {@code RIBBON}), or {@code RIBBON@N}: RIBBON from level N down, BLOCKED above
 * (engine {@code Options.ribbonFromLevel(N)}, RocksDB's {@code NewRibbonFilterPolicy(bits, N)}); followed by any of
 * these suffixes, in any order:
 * <ul>
 *   <li>{@code +MONKEY}: the same total filter memory spread over the levels by {@code FilterAllocation.MONKEY} (more
 *       bits per key for the small upper runs, fewer for the last level) instead of the same bits per key everywhere;
 *   <li>{@code +MEMORY}: RIBBON tables spend {@code --bits-per-key} as memory ({@code FilterBudget.MEMORY}: the memory
 *       of a Bloom filter at those bits, for a ~8x lower false-positive rate at 10 bits) instead of as the
 *       Bloom-equivalent budget (the Bloom filter's rate in ~30% less memory);
 *   <li>{@code +ROCKSDB-RIBBON}: RocksDB gets its Ribbon filter too ({@code ribbonfilter:<bits>:<level>}, Ribbon from the
 *       same level down), at the same Bloom-equivalent bits, or with {@code +MEMORY} at the Bloom-equivalent bits whose
 *       Ribbon spends {@code --bits-per-key} of memory. Without it RocksDB keeps {@code BloomFilter(bits)}.
 * </ul>
 *
 * @param kind            the kind above {@code ribbonFromLevel} (every level when it is -1)
 * @param ribbonFromLevel first RIBBON level, -1 for none
 * @param monkey          MONKEY allocation of the bits per key over the levels (else UNIFORM)
 * @param memoryBudget    RIBBON tables spend the bits per key as memory (else as Bloom-equivalent bits)
 * @param rocksdbRibbon   RocksDB uses its Ribbon filter from the same level down (else its Bloom filter)
 */
public record FilterPolicySpec(
        FilterKind kind, int ribbonFromLevel, boolean monkey, boolean memoryBudget, boolean rocksdbRibbon) {

    private static final String SUFFIXES = "+MONKEY, +MEMORY or +ROCKSDB-RIBBON";
    /** Keys per table at which the Bloom-equivalent bits of a RIBBON of given memory are computed (a 64 MiB table). */
    private static final long TYPICAL_TABLE_KEYS = 500_000;

    public FilterPolicySpec(FilterKind kind, int ribbonFromLevel, boolean monkey) {
        this(kind, ribbonFromLevel, monkey, false, false);
    }

    /** True when some tables get RIBBON filters. */
    public boolean usesRibbon() {
        return kind == FilterKind.RIBBON || ribbonFromLevel >= 0;
    }

    /**
     * RocksDB's {@code bloom_before_level} for {@code +ROCKSDB-RIBBON}: -1 (Ribbon everywhere, flushes included) when
     * every bloomkv table is RIBBON, else bloomkv's first RIBBON level.
     */
    public int rocksdbBloomBeforeLevel() {
        return kind == FilterKind.RIBBON ? -1 : ribbonFromLevel;
    }

    /**
     * The Bloom-equivalent bits per key to give a Ribbon filter for {@code bitsPerKey} under this spec: the bits
     * themselves, or with {@code +MEMORY} the Bloom bits whose false-positive rate a RIBBON of {@code bitsPerKey} bits
     * per key reaches (14.9 for 10).
     */
    public double ribbonBloomEquivalentBits(double bitsPerKey) {
        if (!memoryBudget || bitsPerKey <= 0) {
            return bitsPerKey;
        }
        return FilterMath.blockedBitsPerKeyForFpp(FilterMath.ribbonFppForBitsPerKey(TYPICAL_TABLE_KEYS, bitsPerKey));
    }

    /** @throws IllegalArgumentException for anything else */
    public static FilterPolicySpec parse(String spec) {
        String s = spec.trim().toUpperCase(Locale.ROOT);
        boolean monkey = false;
        boolean memory = false;
        boolean rocksRibbon = false;
        int plus = s.indexOf('+');
        if (plus >= 0) {
            for (String suffix : s.substring(plus + 1).split("\\+", -1)) {
                switch (suffix) {
                    case "MONKEY" -> monkey = true;
                    case "MEMORY" -> memory = true;
                    case "ROCKSDB-RIBBON" -> rocksRibbon = true;
                    default ->
                        throw new IllegalArgumentException("--filter-kind: unknown suffix '+" + suffix + "' in '" + spec
                                + "': expected " + SUFFIXES);
                }
            }
            s = s.substring(0, plus);
        }
        FilterPolicySpec parsed = null;
        if (s.startsWith("RIBBON@")) {
            try {
                int level = Integer.parseInt(s.substring("RIBBON@".length()));
                if (level >= 0) {
                    parsed = new FilterPolicySpec(FilterKind.BLOCKED, level, monkey, memory, rocksRibbon);
                }
            } catch (NumberFormatException e) {
                // reported below
            }
        } else if (java.util.List.of("STANDARD", "PARTITIONED", "BLOCKED", "RIBBON")
                .contains(s)) {
            parsed = new FilterPolicySpec(FilterKind.valueOf(s), -1, monkey, memory, rocksRibbon);
        }
        if (parsed == null) {
            throw new IllegalArgumentException(
                    "--filter-kind: expected STANDARD, PARTITIONED, BLOCKED, RIBBON or RIBBON@<level>, "
                            + "optionally followed by " + SUFFIXES + ", got '" + spec + "'");
        }
        if ((memory || rocksRibbon) && !parsed.usesRibbon()) {
            throw new IllegalArgumentException("--filter-kind: +MEMORY and +ROCKSDB-RIBBON apply to RIBBON filters; '"
                    + spec + "' has none (use RIBBON or RIBBON@<level>)");
        }
        if (memory && rocksRibbon && parsed.kind() != FilterKind.RIBBON) {
            throw new IllegalArgumentException(
                    "--filter-kind: +MEMORY with +ROCKSDB-RIBBON needs RIBBON on every level ('" + spec
                            + "'): RocksDB's Bloom levels would get the Bloom-equivalent bits, more memory than bloomkv's");
        }
        return parsed;
    }
}

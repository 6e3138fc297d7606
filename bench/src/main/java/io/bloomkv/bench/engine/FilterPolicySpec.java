package io.bloomkv.bench.engine;

import io.bloomkv.bloom.FilterKind;
import java.util.Locale;

/**
 * bloomkv's filter policy as the bench's {@code --filter-kind} names it: a kind for every table ({@code BLOCKED},
 * {@code STANDARD}, {@code PARTITIONED}, {@code RIBBON}), or {@code RIBBON@N}: RIBBON from level N down, BLOCKED above
 * (engine {@code Options.ribbonFromLevel(N)}, RocksDB's {@code NewRibbonFilterPolicy(bits, N)}); either with the suffix
 * {@code +MONKEY}: the same total filter memory spread over the levels by {@code FilterAllocation.MONKEY} (more bits
 * per key for the small upper runs, fewer for the last level) instead of the same bits per key everywhere.
 *
 * @param kind            the kind above {@code ribbonFromLevel} (every level when it is -1)
 * @param ribbonFromLevel first RIBBON level, -1 for none
 * @param monkey          MONKEY allocation of the bits per key over the levels (else UNIFORM)
 */
public record FilterPolicySpec(FilterKind kind, int ribbonFromLevel, boolean monkey) {

    /** @throws IllegalArgumentException for anything else */
    public static FilterPolicySpec parse(String spec) {
        String s = spec.trim().toUpperCase(Locale.ROOT);
        boolean monkey = s.endsWith("+MONKEY");
        if (monkey) {
            s = s.substring(0, s.length() - "+MONKEY".length());
        }
        if (s.startsWith("RIBBON@")) {
            try {
                int level = Integer.parseInt(s.substring("RIBBON@".length()));
                if (level >= 0) {
                    return new FilterPolicySpec(FilterKind.BLOCKED, level, monkey);
                }
            } catch (NumberFormatException e) {
                // reported below
            }
        } else if (java.util.List.of("STANDARD", "PARTITIONED", "BLOCKED", "RIBBON").contains(s)) {
            return new FilterPolicySpec(FilterKind.valueOf(s), -1, monkey);
        }
        throw new IllegalArgumentException("--filter-kind: expected STANDARD, PARTITIONED, BLOCKED, RIBBON or RIBBON@<level>, "
                + "optionally followed by +MONKEY, got '" + spec + "'");
    }
}

package io.bloomkv.bench.engine;

import io.bloomkv.bloom.FilterKind;
import java.util.Locale;

/**
 * bloomkv's filter policy as the bench's {@code --filter-kind} names it: a kind for every table ({@code BLOCKED},
 * {@code STANDARD}, {@code PARTITIONED}, {@code RIBBON}), or {@code RIBBON@N}: RIBBON from level N down, BLOCKED above
 * (engine {@code Options.ribbonFromLevel(N)}, RocksDB's {@code NewRibbonFilterPolicy(bits, N)}).
 *
 * @param kind            the kind above {@code ribbonFromLevel} (every level when it is -1)
 * @param ribbonFromLevel first RIBBON level, -1 for none
 */
public record FilterPolicySpec(FilterKind kind, int ribbonFromLevel) {

    /** @throws IllegalArgumentException for anything else */
    public static FilterPolicySpec parse(String spec) {
        String s = spec.trim().toUpperCase(Locale.ROOT);
        if (s.startsWith("RIBBON@")) {
            try {
                int level = Integer.parseInt(s.substring("RIBBON@".length()));
                if (level >= 0) {
                    return new FilterPolicySpec(FilterKind.BLOCKED, level);
                }
            } catch (NumberFormatException e) {
                // reported below
            }
        } else if (java.util.List.of("STANDARD", "PARTITIONED", "BLOCKED", "RIBBON").contains(s)) {
            return new FilterPolicySpec(FilterKind.valueOf(s), -1);
        }
        throw new IllegalArgumentException("--filter-kind: expected STANDARD, PARTITIONED, BLOCKED, RIBBON or RIBBON@<level>, got '"
                + spec + "'");
    }
}

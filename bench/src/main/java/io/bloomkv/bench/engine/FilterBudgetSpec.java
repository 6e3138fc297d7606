package io.bloomkv.bench.engine;

import java.util.Locale;

/**
 * The bench's {@code --filter-budget}: bloomkv's {@code Options.filterMemoryBudget} in bytes ("2097152", "2m", "512k",
 * "1g"), or a percentage of the filters' unbounded size ("25%"), which the bloomkv engine measures after each load
 * (the database reopened without a budget) and applies by reopening the database with the budget. Empty: none.
 *
 * @param bytes   the budget in bytes, or 0
 * @param percent the budget as a percentage of the unbounded filters' size, or 0
 */
public record FilterBudgetSpec(long bytes, double percent) {
    public static final FilterBudgetSpec NONE = new FilterBudgetSpec(0, 0);

    public FilterBudgetSpec {
        if (bytes < 0 || !(percent >= 0) || percent > 100 || (bytes > 0 && percent > 0)) {
            throw new IllegalArgumentException(
                    "filter budget: bytes >= 0 or a percentage in (0, 100], got " + bytes + ", " + percent);
        }
    }

    public boolean none() {
        return bytes == 0 && percent == 0;
    }

    /** Parses "", bytes with an optional k/m/g suffix, or "N%". */
    public static FilterBudgetSpec parse(String s) {
        String t = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
        if (t.isEmpty()) {
            return NONE;
        }
        try {
            if (t.endsWith("%")) {
                double p = Double.parseDouble(t.substring(0, t.length() - 1));
                if (!(p > 0 && p <= 100)) {
                    throw new IllegalArgumentException("--filter-budget: a percentage in (0, 100], got '" + s + "'");
                }
                return new FilterBudgetSpec(0, p);
            }
            long mult = switch (t.charAt(t.length() - 1)) {
                case 'k' -> 1L << 10;
                case 'm' -> 1L << 20;
                case 'g' -> 1L << 30;
                default -> 1;
            };
            long n = Long.parseLong(mult == 1 ? t : t.substring(0, t.length() - 1)) * mult;
            if (n <= 0) {
                throw new IllegalArgumentException("--filter-budget: bytes must be > 0, got '" + s + "'");
            }
            return new FilterBudgetSpec(n, 0);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "--filter-budget: bytes (e.g. 2m) or a percentage (e.g. 25%), got '" + s + "'", e);
        }
    }

    @Override
    public String toString() {
        return none() ? "" : bytes > 0 ? Long.toString(bytes) : percent + "%";
    }
}

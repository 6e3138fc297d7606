package io.bloomkv.tools;

import java.util.Locale;

/** Number formatting for output: locale-independent, grouped integers, rates as percentages. */
final class Fmt {
    private Fmt() {}

    /** {@code 1234567} as {@code 1,234,567}. */
    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** A probability in [0, 1] as a percentage with three significant digits: {@code 0.00819} as {@code 0.819%}. */
    static String rate(double p) {
        if (Double.isNaN(p)) {
            return "n/a";
        }
        if (p == 0) {
            return "0%";
        }
        return String.format(Locale.ROOT, "%.3g%%", p * 100);
    }

    /** A share in [0, 1] as a percentage with one decimal: {@code 0.4987} as {@code 49.9%}. */
    static String share(double p) {
        return Double.isNaN(p) ? "n/a" : String.format(Locale.ROOT, "%.1f%%", p * 100);
    }

    /** A decimal with {@code digits} fraction digits. */
    static String decimal(double v, int digits) {
        return String.format(Locale.ROOT, "%." + digits + "f", v);
    }

    /** Bytes with a binary unit: {@code 1536} as {@code 1.5 KiB}; exact below 1 KiB. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** The 95% Wilson score interval of {@code hits / trials}, as {@code [lo%, hi%]}. */
    static String wilson95(long hits, long trials) {
        if (trials == 0) {
            return "n/a";
        }
        double z = 1.959963984540054;
        double p = (double) hits / trials;
        double denom = 1 + z * z / trials;
        double centre = (p + z * z / (2.0 * trials)) / denom;
        double half = z * Math.sqrt(p * (1 - p) / trials + z * z / (4.0 * trials * trials)) / denom;
        return "[" + rate(Math.max(0, centre - half)) + ", " + rate(Math.min(1, centre + half)) + "]";
    }
}

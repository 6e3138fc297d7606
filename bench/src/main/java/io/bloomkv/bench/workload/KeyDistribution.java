package io.bloomkv.bench.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * How operations choose existing keys ({@code --distribution}): uniform, YCSB's scrambled Zipfian
 * (constant 0.99, hot keys spread over the key range) or YCSB's skewed-latest (the keys written
 * last by the load are the hot ones).
 */
public enum KeyDistribution {
    UNIFORM("uniform"),
    ZIPFIAN("zipfian"),
    LATEST("latest");

    private final String flagName;

    KeyDistribution(String flagName) {
        this.flagName = flagName;
    }

    public String flagName() {
        return flagName;
    }

    /**
     * What the generators of one phase share: built once per phase (the skewed-latest zeta costs O(num)),
     * then {@link Shared#generator} makes each thread's own.
     *
     * @param loadOrder load indices in the order the load wrote them (required by {@link #LATEST}, else may be null)
     */
    public Shared prepare(long num, int[] loadOrder) {
        double zetan = Double.NaN;
        if (this == LATEST) {
            if (loadOrder == null || loadOrder.length != num) {
                throw new IllegalArgumentException("latest needs the load order of all " + num + " keys");
            }
            zetan = ZipfianGenerator.zeta(loadOrder.length, ZipfianGenerator.ZIPFIAN_CONSTANT);
        }
        return new Shared(this, num, loadOrder, zetan);
    }

    /** The per-phase state of a distribution; {@link #generator} is thread-safe, the generators it makes are not. */
    public record Shared(KeyDistribution distribution, long num, int[] loadOrder, double zetan) {
        /** A generator of its own for one thread, seeded with {@code seed}. */
        public KeyGenerator generator(long seed) {
            SplittableRandom rnd = new SplittableRandom(seed);
            return switch (distribution) {
                case UNIFORM -> () -> rnd.nextLong(num);
                case ZIPFIAN -> new ScrambledZipfianGenerator(num, rnd);
                case LATEST -> new SkewedLatestGenerator(loadOrder, zetan, rnd);
            };
        }
    }

    /** Parses a flag value (case-insensitive). @throws IllegalArgumentException for an unknown name */
    public static KeyDistribution parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (KeyDistribution d : values()) {
            if (d.flagName.equals(n)) {
                return d;
            }
        }
        throw new IllegalArgumentException("--distribution: expected one of " + names() + ", got '" + name + "'");
    }

    public static List<String> names() {
        List<String> out = new ArrayList<>();
        for (KeyDistribution d : values()) {
            out.add(d.flagName);
        }
        return out;
    }

    @Override
    public String toString() {
        return flagName;
    }
}

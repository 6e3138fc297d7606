package io.bloomkv.engine;

/**
 * The seed of a randomized engine test: taken from the command line when given (so a failure can be
 * replayed), else fresh, and printed with the way to replay it.
 */
public final class TestSeeds {
    private TestSeeds() {}

    /** {@code -Dbloomkv.seed}, else a fresh seed. */
    public static long seed(String test) {
        long seed = Long.getLong("bloomkv.seed", System.nanoTime());
        System.out.println(test + " seed " + seed + " (replay with -Dbloomkv.seed=" + seed + ")");
        return seed;
    }

    /** {@code -D<property>}, else {@code -Dbloomkv.seed}, else a fresh seed. */
    public static long seed(String test, String property) {
        long seed = Long.getLong(property, Long.getLong("bloomkv.seed", System.nanoTime()));
        System.out.println(test + " seed " + seed + " (replay with -D" + property + "=" + seed + " or -Dbloomkv.seed="
                + seed + ")");
        return seed;
    }
}

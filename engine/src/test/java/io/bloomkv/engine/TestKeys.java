package io.bloomkv.engine;

import java.nio.charset.StandardCharsets;
import java.util.Random;

/** Helpers shared by the engine tests: readable keys, random values, the seed of a test. */
final class TestKeys {
    private TestKeys() {}

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    /** "key" + zero-padded i, so numeric order is key order. */
    static byte[] key(long i) {
        return bytes(String.format("key%08d", i));
    }

    static byte[] value(Random rnd, int maxLength) {
        byte[] v = new byte[rnd.nextInt(maxLength + 1)];
        rnd.nextBytes(v);
        return v;
    }

    /** The seed from {@code -Dbloomkv.seed}, else a fresh one; printed so a failure can be replayed. */
    static long seed(String test) {
        return TestSeeds.seed(test);
    }
}

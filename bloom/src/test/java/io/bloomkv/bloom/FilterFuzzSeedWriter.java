package io.bloomkv.bloom;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * Writes the seed corpora of the bloom module's fuzz targets from encodings made by the real serializers: one
 * serialized filter of every kind for {@link FilterFuzzTest} (each checked to read back), compressed records of every
 * kind for {@link CompressedFilterFuzzTest}, and range filters of a few shapes for {@link RangeFilterFuzzTest}. A tool,
 * not a test: run it once, and again when a format changes, from the repository root:
 *
 * <pre>{@code
 * mvn -B -q -pl bloom test-compile
 * java -cp "bloom/target/test-classes:bloom/target/classes:$(cat bloom/target/runtime-classpath.txt)" \
 *   io.bloomkv.bloom.FilterFuzzSeedWriter .
 * }</pre>
 *
 * (the argument is the repository root; the class path file is written by {@code test-compile}). Seeds are named
 * {@code seed-*}; the output is deterministic, so a run with no format change leaves the tree as it was.
 */
final class FilterFuzzSeedWriter {
    private FilterFuzzSeedWriter() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: FilterFuzzSeedWriter <repository root>");
            System.exit(2);
        }
        Path resources = Path.of(args[0]).resolve("bloom/src/test/resources/io/bloomkv/bloom");
        int written = filterSeeds(resources.resolve("FilterFuzzTestInputs"));
        written += compressedSeeds(resources.resolve("CompressedFilterFuzzTestInputs/readCompressed"));
        written += rangeSeeds(resources.resolve("RangeFilterFuzzTestInputs/readRangeFilter"));
        System.out.println("FilterFuzzSeedWriter: " + written + " seeds under " + resources);
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException(what);
        }
    }

    /** {@link FilterFuzzTest}'s three targets: every kind, flag byte 0 and 1 (the map target's offset bits set). */
    static int filterSeeds(Path inputs) throws IOException {
        int written = 0;
        for (FilterKind kind : FilterKind.values()) {
            byte[] bytes;
            if (kind.isStatic()) {
                long[] hashes = new long[40];
                for (int i = 0; i < 40; i++) {
                    hashes[i] = Hashing.hash64(("key" + i).getBytes(StandardCharsets.UTF_8));
                }
                try (Filter f = Filters.build(kind, hashes, 10)) {
                    bytes = f.toByteArray();
                }
            } else {
                try (Filter f =
                        kind == FilterKind.COUNTING ? Filters.createCounting(40, 4) : Filters.create(kind, 40, 10)) {
                    for (int i = 0; i < 40; i++) {
                        f.add(("key" + i).getBytes(StandardCharsets.UTF_8));
                    }
                    bytes = f.toByteArray();
                }
            }
            try (Filter back = Filters.read(bytes, 0, bytes.length)) {
                check(back.mightContain("key7".getBytes(StandardCharsets.UTF_8)), kind + " seed reads back");
            }
            for (String target : new String[] {"filterHeader", "filtersRead", "filtersMap"}) {
                for (int flags = 0; flags <= 1; flags++) {
                    byte[] seed = new byte[bytes.length + 1];
                    seed[0] = (byte) (target.equals("filtersMap") ? flags | 6 : flags);
                    System.arraycopy(bytes, 0, seed, 1, bytes.length);
                    Path dir = inputs.resolve(target);
                    Files.createDirectories(dir);
                    Files.write(dir.resolve("seed-" + kind + "-" + flags), seed);
                    written++;
                }
            }
        }
        check(written == 6 * FilterKind.values().length, "six seeds per kind");
        return written;
    }

    /** {@link CompressedFilterFuzzTest}: real records of every kind, sparse, dense and raw, re-signed (flag 1). */
    static int compressedSeeds(Path dir) throws IOException {
        Files.createDirectories(dir);
        int written = 0;
        for (FilterKind kind : FilterKind.values()) {
            for (int n : new int[] {0, 40, 400}) {
                long[] keys = new long[n];
                for (int i = 0; i < n; i++) {
                    keys[i] = i * 0x9E3779B97F4A7C15L;
                }
                try (Filter f = kind.isStatic() ? TestKeys.filled(kind, keys, 10) : filledWithHashes(kind, keys)) {
                    byte[] c = CompressedFilterTest.compressed(f);
                    byte[] seed = new byte[c.length + 1];
                    seed[0] = 1;
                    System.arraycopy(c, 0, seed, 1, c.length);
                    Files.write(dir.resolve("seed-" + kind + "-" + n), seed);
                    written++;
                }
            }
        }
        check(written == 3 * FilterKind.values().length, "three seeds per kind");
        return written;
    }

    private static Filter filledWithHashes(FilterKind kind, long[] hashes) {
        Filter f = Filters.create(kind, 100, 20, 1);
        for (long h : hashes) {
            f.add(h);
        }
        return f;
    }

    /**
     * {@link RangeFilterFuzzTest}: real filters of a few shapes, in the format version and hash version the builder
     * writes now ("seed-v2-h2-..."). The "seed-N-B-S" files are the same shapes written with hash version 1, the
     * "seed-h2-..." ones with format version 1 (both kept: readers still accept them, and RangeFilterFormatTest checks
     * they still answer).
     */
    static int rangeSeeds(Path dir) throws IOException {
        Files.createDirectories(dir);
        SplittableRandom rnd = new SplittableRandom(11);
        int[][] shapes = {{0, 10, 8}, {5, 10, 4}, {60, 12, 16}, {300, 6, 64}, {200, 20, 512}};
        int written = 0;
        for (int[] s : shapes) {
            TreeSet<byte[]> keys = new TreeSet<>(Arrays::compareUnsigned);
            while (keys.size() < s[0]) {
                keys.add(RangeFilterPropertyTest.randomKey(rnd, 10, 26));
            }
            try (RangeFilter f = RangeFilterPropertyTest.build(keys, s[1], s[2])) {
                byte[] bytes = f.toByteArray();
                byte[] seed = new byte[bytes.length + 1];
                seed[0] = 1;
                System.arraycopy(bytes, 0, seed, 1, bytes.length);
                Files.write(
                        dir.resolve("seed-v" + RangeFilter.VERSION + "-h" + RangeFilter.HASH_VERSION + "-" + s[0] + "-"
                                + s[1] + "-" + s[2]),
                        seed);
                written++;
            }
        }
        return written;
    }
}

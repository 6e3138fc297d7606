package io.bloomkv.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the seed corpus of {@link FilterFuzzTest}: one serialized filter of every kind, made by the
 * real serializer ({@link Filter#toByteArray()}), checked to read back. Run with {@code mvn -B -q -pl
 * bloom test -Dtest=FilterFuzzSeedWriter -Dsurefire.failIfNoSpecifiedTests=false
 * -Dbloomkv.fuzz.seeds=$PWD} (the repository root). Skipped in normal runs.
 */
@EnabledIfSystemProperty(named = "bloomkv.fuzz.seeds", matches = ".+")
class FilterFuzzSeedWriter {
    @Test
    void writeSeeds() throws IOException {
        Path inputs = Path.of(System.getProperty("bloomkv.fuzz.seeds"))
                .resolve("bloom/src/test/resources/io/bloomkv/bloom/FilterFuzzTestInputs");
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
                assertThat(back.mightContain("key7".getBytes(StandardCharsets.UTF_8)))
                        .isTrue();
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
        assertThat(written).isEqualTo(6 * FilterKind.values().length);
        System.out.println("FilterFuzzSeedWriter: " + written + " seeds under " + inputs);
    }
}

package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The key distributions: Zipfian skew against the formula, the scrambled and latest variants' hot
 * keys, range, and replay from a seed. Statistical bounds are several standard deviations wide.
 * Replay a failure with -Dbench.seed=N.
 */
class KeyGeneratorTest {
    private static final long SEED = Long.getLong("bench.seed", System.nanoTime());

    static {
        System.out.println("KeyGeneratorTest seed = " + SEED + " (replay with -Dbench.seed=" + SEED + ")");
    }

    @Test
    void zipfianRanksFollowTheFormula() {
        int items = 1000;
        int draws = 400_000;
        double zetan = ZipfianGenerator.zeta(items, ZipfianGenerator.ZIPFIAN_CONSTANT);
        ZipfianGenerator g =
                new ZipfianGenerator(items, ZipfianGenerator.ZIPFIAN_CONSTANT, zetan, new SplittableRandom(SEED));
        long[] count = new long[items];
        for (int i = 0; i < draws; i++) {
            long r = g.nextRank();
            assertThat(r).isBetween(0L, items - 1L);
            count[(int) r]++;
        }
        // ranks 0 and 1 are exact in Gray's algorithm: p(r) = 1 / ((r+1)^theta * zeta(n))
        for (int r = 0; r < 2; r++) {
            double expected = draws / (Math.pow(r + 1, 0.99) * zetan);
            assertThat((double) count[r]).as("seed %d rank %d", SEED, r).isBetween(expected * 0.95, expected * 1.05);
        }
        // the rest follows the continuous approximation: the head holds its share of the draws
        long head = 0;
        double expectedHead = 0;
        for (int r = 0; r < 100; r++) {
            head += count[r];
            expectedHead += draws / (Math.pow(r + 1, 0.99) * zetan);
        }
        assertThat((double) head)
                .as("seed %d: top 10%% of ranks", SEED)
                .isBetween(expectedHead * 0.93, expectedHead * 1.07);
        assertThat(expectedHead / draws).as("the formula itself is skewed").isGreaterThan(0.65);
        // popularity falls with rank
        assertThat(count[0]).isGreaterThan(count[1]);
        assertThat(count[1]).isGreaterThan(count[10]);
        assertThat(count[10]).isGreaterThan(count[500]);
    }

    @Test
    void scrambledZipfianHotKeysAreSpreadOverTheRange() {
        long num = 100_000;
        int draws = 300_000;
        KeyGenerator g = KeyDistribution.ZIPFIAN.prepare(num, null).generator(SEED);
        int[] count = new int[(int) num];
        for (int i = 0; i < draws; i++) {
            long k = g.nextIndex();
            assertThat(k).isBetween(0L, num - 1);
            count[(int) k]++;
        }
        int[] sorted = count.clone();
        Arrays.sort(sorted);
        // YCSB's rank 0 has probability 1 / ZETAN (3.8%) of all draws; it hashes to one key
        double top = sorted[sorted.length - 1] / (double) draws;
        assertThat(top)
                .as("seed %d: hottest key's share", SEED)
                .isBetween(0.9 / ScrambledZipfianGenerator.ZETAN, 1.2 / ScrambledZipfianGenerator.ZETAN);
        long hot = 0;
        for (int i = sorted.length - 1000; i < sorted.length; i++) {
            hot += sorted[i];
        }
        // the 1000 hottest keys hold at least YCSB's 1000 first ranks (zeta(1000) / ZETAN = 29% of the draws)
        double headShare = ZipfianGenerator.zeta(1000, 0.99) / ScrambledZipfianGenerator.ZETAN;
        assertThat(headShare).isGreaterThan(0.25);
        assertThat(hot / (double) draws)
                .as("seed %d: the hottest 1%% of keys", SEED)
                .isGreaterThan(0.95 * headShare);
        // the ten hottest keys are not neighbours: they spread over the key range
        long[] hottest = new long[10];
        for (int h = 0; h < 10; h++) {
            int best = 0;
            for (int i = 1; i < count.length; i++) {
                if (count[i] > count[best]) {
                    best = i;
                }
            }
            hottest[h] = best;
            count[best] = -1;
        }
        Arrays.sort(hottest);
        assertThat(hottest[9] - hottest[0])
                .as("seed %d: hottest keys %s", SEED, Arrays.toString(hottest))
                .isGreaterThan(num / 4);
    }

    @Test
    void fnvHashIsYcsbs() {
        // YCSB Utils.fnvhash64: FNV-1a over 8 little-endian bytes, made non-negative
        assertThat(ScrambledZipfianGenerator.fnvHash64(0)).isEqualTo(Math.abs(fnv(0)));
        assertThat(ScrambledZipfianGenerator.fnvHash64(123456789L)).isEqualTo(Math.abs(fnv(123456789L)));
        for (long v = 0; v < 10_000; v++) {
            assertThat(ScrambledZipfianGenerator.fnvHash64(v)).isNotNegative();
        }
    }

    private static long fnv(long v) {
        long h = 0xCBF29CE484222325L;
        for (int i = 0; i < 8; i++) {
            h = (h ^ ((v >>> (8 * i)) & 0xff)) * 1099511628211L;
        }
        return h;
    }

    @Test
    void latestMakesTheLastLoadedKeysHot() {
        int num = 50_000;
        int draws = 200_000;
        int[] order = new KeySpace(num, 16).shuffledLoadOrder(SEED);
        KeyGenerator g = KeyDistribution.LATEST.prepare(num, order).generator(SEED + 1);
        int[] countByRecency = new int[num];
        int[] position = new int[num];
        for (int i = 0; i < num; i++) {
            position[order[i]] = i;
        }
        for (int i = 0; i < draws; i++) {
            long k = g.nextIndex();
            assertThat(k).isBetween(0L, num - 1L);
            countByRecency[num - 1 - position[(int) k]]++;
        }
        double zetan = ZipfianGenerator.zeta(num, 0.99);
        double expectedLast = draws / zetan;
        assertThat((double) countByRecency[0])
                .as("seed %d: the key loaded last", SEED)
                .isBetween(expectedLast * 0.93, expectedLast * 1.07);
        long recent = 0;
        for (int r = 0; r < num / 100; r++) {
            recent += countByRecency[r];
        }
        assertThat(recent / (double) draws)
                .as("seed %d: the last 1%% loaded", SEED)
                .isGreaterThan(0.5);
    }

    @Test
    void uniformCoversTheRangeEvenly() {
        int num = 100;
        int draws = 200_000;
        KeyGenerator g = KeyDistribution.UNIFORM.prepare(num, null).generator(SEED);
        int[] count = new int[num];
        for (int i = 0; i < draws; i++) {
            count[(int) g.nextIndex()]++;
        }
        for (int c : count) { // mean 2000, sd ~44.5
            assertThat(c).as("seed %d", SEED).isBetween(1700, 2300);
        }
    }

    @Test
    void aSeedReplaysTheSameKeysAndThreadsDiffer() {
        int[] order = new KeySpace(10_000, 16).shuffledLoadOrder(7);
        for (KeyDistribution d : KeyDistribution.values()) {
            KeyDistribution.Shared shared = d.prepare(10_000, order);
            long[] a = draw(shared.generator(SEED), 1000);
            long[] b = draw(shared.generator(SEED), 1000);
            long[] other = draw(shared.generator(BenchRunner.threadSeed(SEED, 1)), 1000);
            assertThat(b).as(d + " replays").containsExactly(a);
            assertThat(other).as(d + ": thread 1 draws its own keys").isNotEqualTo(a);
            for (long k : a) {
                assertThat(k).isBetween(0L, 9_999L);
            }
        }
    }

    @Test
    void tinyKeySpacesStayInRange() {
        for (int num : new int[] {1, 2, 3, 7}) {
            int[] order = new int[num];
            for (int i = 0; i < num; i++) {
                order[i] = num - 1 - i;
            }
            for (KeyDistribution d : KeyDistribution.values()) {
                KeyGenerator g = d.prepare(num, order).generator(SEED);
                for (int i = 0; i < 10_000; i++) {
                    assertThat(g.nextIndex()).as("%s num %d", d, num).isBetween(0L, num - 1L);
                }
            }
        }
    }

    @Test
    void badArgumentsAreRejected() {
        assertThatThrownBy(() -> KeyDistribution.parse("gaussian")).hasMessageContaining("uniform, zipfian, latest");
        assertThat(KeyDistribution.parse(" Zipfian ")).isEqualTo(KeyDistribution.ZIPFIAN);
        assertThatThrownBy(() -> KeyDistribution.LATEST.prepare(10, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ZipfianGenerator(0, 0.99, new SplittableRandom(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ZipfianGenerator(10, 1.0, new SplittableRandom(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static long[] draw(KeyGenerator g, int n) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = g.nextIndex();
        }
        return out;
    }
}

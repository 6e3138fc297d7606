package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** multiGet's key sort orders like unsigned byte order, below and above the insertion-sort size. Replay with -Dbloomkv.seed=N. */
class MultiGetSortTest {
    @Test
    void sortsKeyIndicesInUnsignedKeyOrder() {
        long seed = TestSeeds.seed("MultiGetSortTest");
        Random rnd = new Random(seed);
        for (int round = 0; round < 400; round++) {
            int n = 1 + rnd.nextInt(round % 2 == 0 ? MultiGet.INSERTION_SORT_MAX : 3 * MultiGet.INSERTION_SORT_MAX);
            byte[][] keys = new byte[n + 3][];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = new byte[rnd.nextInt(14)];
                for (int b = 0; b < keys[i].length; b++) {
                    keys[i][b] = (byte) (rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(3) == 0 ? 0xFF : rnd.nextInt(4));
                }
            }
            int[] order = new int[n];
            for (int i = 0; i < n; i++) {
                order[i] = 3 + i; // a subset of the keys, as multiGet sorts only the keys left after the memtables
            }
            MultiGet.sortByKey(order, keys);
            byte[][] expected = Arrays.copyOfRange(keys, 3, keys.length);
            Arrays.sort(expected, Arrays::compareUnsigned);
            for (int i = 0; i < n; i++) {
                assertThat(keys[order[i]])
                        .as("seed %d, round %d, position %d of %d", seed, round, i, n)
                        .isEqualTo(expected[i]);
            }
            assertThat(Arrays.stream(order).distinct().count())
                    .as("a permutation")
                    .isEqualTo(n);
        }
    }
}

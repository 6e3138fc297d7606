package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The generators give the key sets they promise. Replay a failure with -Dbench.seed=N. */
class KeySpaceTest {
    private static final long SEED = Long.getLong("bench.seed", System.nanoTime());
    private static final int N = 20_000;

    static {
        System.out.println("KeySpaceTest seed = " + SEED + " (replay with -Dbench.seed=" + SEED + ")");
    }

    @Test
    void absentKeysAreAbsentAndInsideTheLoadedRange() {
        for (int keySize : new int[] {8, 16, 23}) {
            KeySpace ks = new KeySpace(N, keySize);
            Set<ByteBuffer> loaded = new HashSet<>();
            for (long j = 0; j < N; j++) {
                loaded.add(ByteBuffer.wrap(ks.key(ks.loadedId(j))));
            }
            assertThat(loaded).as("loaded keys are distinct").hasSize(N);
            byte[] min = ks.smallestKey();
            byte[] max = ks.largestKey();
            for (long j = 0; j < ks.missingCount(); j++) {
                byte[] k = ks.key(ks.missingId(j));
                assertThat(k).hasSize(keySize);
                assertThat(loaded.contains(ByteBuffer.wrap(k)))
                        .as("absent key %d loaded (keySize %d)", j, keySize)
                        .isFalse();
                assertThat(Arrays.compareUnsigned(k, min))
                        .as("absent key %d above the smallest key", j)
                        .isPositive();
                assertThat(Arrays.compareUnsigned(k, max))
                        .as("absent key %d below the largest key", j)
                        .isNegative();
                // strictly between its two loaded neighbours: only a filter can reject it
                assertThat(Arrays.compareUnsigned(ks.key(ks.loadedId(j)), k)).isNegative();
                assertThat(Arrays.compareUnsigned(k, ks.key(ks.loadedId(j + 1))))
                        .isNegative();
                assertThat(ks.isLoaded(ks.missingId(j))).isFalse();
            }
        }
    }

    @Test
    void keysSortInIdOrderAndRoundTrip() {
        KeySpace ks = new KeySpace(N, 16);
        byte[] prev = null;
        for (long id = 0; id < 2L * N; id++) {
            byte[] k = ks.key(id);
            assertThat(KeySpace.idOf(k)).isEqualTo(id);
            if (prev != null) {
                assertThat(Arrays.compareUnsigned(prev, k))
                        .as("key %d sorts after key %d", id, id - 1)
                        .isNegative();
            }
            prev = k;
        }
        assertThat(ks.key(1234)).isEqualTo(ks.key(1234)).isNotSameAs(ks.key(1234));
    }

    @Test
    void shuffledLoadOrderIsASeededPermutation() {
        KeySpace ks = new KeySpace(N, 16);
        int[] a = ks.shuffledLoadOrder(SEED);
        int[] b = ks.shuffledLoadOrder(SEED);
        assertThat(a).as("seed %d", SEED).isEqualTo(b);
        int[] sorted = a.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < N; i++) {
            assertThat(sorted[i]).as("seed %d: permutation holds %d", SEED, i).isEqualTo(i);
        }
        assertThat(ks.shuffledLoadOrder(SEED + 1)).as("seed %d", SEED).isNotEqualTo(a);
        int inPlace = 0;
        for (int i = 0; i < N; i++) {
            if (a[i] == i) {
                inPlace++;
            }
        }
        assertThat(inPlace)
                .as("seed %d: a shuffle leaves few indices in place", SEED)
                .isLessThan(50);
    }

    @Test
    void valuesAreDeterministicAndFresh() {
        ValueSource v1 = new ValueSource(100, SEED);
        ValueSource v2 = new ValueSource(100, SEED);
        byte[] a = v1.value(42, 0);
        assertThat(a).hasSize(100).isEqualTo(v2.value(42, 0)).isNotSameAs(v1.value(42, 0));
        assertThat(v1.value(42, 1))
                .as("seed %d: a new version has new bytes", SEED)
                .isNotEqualTo(a);
        assertThat(v1.matches(a, 42, 0)).isTrue();
        assertThat(v1.matches(a, 42, 1)).as("seed %d", SEED).isFalse();
        assertThat(v1.matches(java.util.Arrays.copyOf(a, 99), 42, 0)).isFalse();
    }

    @Test
    void rejectsBadShapes() {
        assertThatThrownBy(() -> new KeySpace(1, 16)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new KeySpace(10, 7)).isInstanceOf(IllegalArgumentException.class);
        KeySpace ks = new KeySpace(10, 16);
        assertThatThrownBy(() -> ks.missingId(9)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> ks.loadedId(10)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void sessionsGroupConsecutiveReadOnlyWorkloads() {
        var sessions = BenchRunner.sessions(java.util.List.of(
                Workload.FILLSEQ,
                Workload.READRANDOM,
                Workload.READMISSING,
                Workload.SEEKRANDOM,
                Workload.READWHILEWRITING,
                Workload.READRANDOM));
        assertThat(sessions).hasSize(4);
        assertThat(sessions.get(1)).containsExactly(Workload.READRANDOM, Workload.READMISSING, Workload.SEEKRANDOM);
        assertThat(sessions.get(3)).containsExactly(Workload.READRANDOM);
    }

    @Test
    void readsRightAfterFillrandomShareItsDatabase() {
        var sessions = BenchRunner.sessions(java.util.List.of(
                Workload.FILLRANDOM,
                Workload.READRANDOM,
                Workload.READMISSING,
                Workload.OVERWRITE,
                Workload.READRANDOM));
        assertThat(sessions).hasSize(3);
        assertThat(sessions.get(0)).containsExactly(Workload.FILLRANDOM, Workload.READRANDOM, Workload.READMISSING);
        assertThat(sessions.get(2)).containsExactly(Workload.READRANDOM);
    }
}

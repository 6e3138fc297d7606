package io.bloomkv.engine.internal.compaction;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.version.FileMetaData;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutputCutterTest {
    private static FileMetaData table(long number, String smallest, String largest) {
        return new FileMetaData(
                number,
                1000,
                InternalKey.encode(smallest.getBytes(UTF_8), 2, ValueType.PUT),
                InternalKey.encode(largest.getBytes(UTF_8), 1, ValueType.PUT),
                10,
                1,
                2);
    }

    private static byte[] k(String s) {
        return s.getBytes(UTF_8);
    }

    /** Feeds keys k00..k99 of {@code entrySize} bytes each; returns the first key of every output. */
    private static List<String> outputs(OutputCutter cutter, int entrySize) {
        List<String> firsts = new ArrayList<>();
        long size = 0;
        for (int i = 0; i < 100; i++) {
            String key = String.format("k%02d", i);
            if (cutter.shouldCutBefore(k(key), size)) {
                size = 0;
            }
            if (size == 0) {
                firsts.add(key);
            }
            size += entrySize;
        }
        return firsts;
    }

    @Test
    void withoutGrandparentsCutsAtTheTargetSize() {
        assertThat(outputs(new OutputCutter(List.of(), 100), 10))
                .containsExactly("k00", "k10", "k20", "k30", "k40", "k50", "k60", "k70", "k80", "k90");
    }

    @Test
    void cutsWhereTheKeysPassAGrandparentOnceHalfTheTargetIsWritten() {
        // grandparents end at k24, k49 (k50-k54 is a gap), k79, k99
        List<FileMetaData> gp =
                List.of(table(1, "k00", "k24"), table(2, "k30", "k49"), table(3, "k55", "k79"), table(4, "k80", "k99"));
        // target 200 bytes = 20 keys: every grandparent boundary comes after >= 10 keys, so each is a cut
        assertThat(outputs(new OutputCutter(gp, 200), 10)).containsExactly("k00", "k25", "k50", "k80");
    }

    @Test
    void aBoundaryBeforeHalfTheTargetIsNotACut() {
        List<FileMetaData> gp = List.of(table(1, "k00", "k04"), table(2, "k05", "k59"), table(3, "k60", "k99"));
        // target 400 bytes = 40 keys: k05 comes after 5 keys (< 20), k60 after 60 keys
        assertThat(outputs(new OutputCutter(gp, 400), 10)).containsExactly("k00", "k60");
    }

    @Test
    void anOutputEndsAtTwiceTheTargetEvenInsideOneGrandparent() {
        List<FileMetaData> gp = List.of(table(1, "k00", "k99"));
        assertThat(outputs(new OutputCutter(gp, 150), 10)).containsExactly("k00", "k30", "k60", "k90");
    }

    @Test
    void keysPastTheLastGrandparentFallBackToTheHardLimit() {
        List<FileMetaData> gp = List.of(table(1, "a", "b"));
        // every key is past the only grandparent: the first call crosses it with no output open
        assertThat(outputs(new OutputCutter(gp, 100), 10)).containsExactly("k00", "k20", "k40", "k60", "k80");
    }

    @Test
    void grandparentsAreTheNextLevelsTablesOverlappingAllInputs() {
        FileMetaData base = table(10, "k20", "k40");
        FileMetaData below = table(11, "k35", "k60");
        FileMetaData g1 = table(20, "k00", "k10");
        FileMetaData g2 = table(21, "k15", "k25");
        FileMetaData g3 = table(22, "k55", "k70");
        FileMetaData g4 = table(23, "k80", "k90");
        LevelView v = LevelView.of(List.of(List.of(), List.of(base), List.of(below), List.of(g1, g2, g3, g4)));
        // inputs span k20..k60 (base and below together): g2 and g3 overlap it, g1 and g4 do not
        assertThat(CompactionPicker.grandparents(v, new Compaction(1, 2, List.of(base), List.of(below))))
                .containsExactly(g2, g3);
        // output into the last level: nothing below it
        assertThat(CompactionPicker.grandparents(v, new Compaction(2, 3, List.of(below), List.of(g3))))
                .isEmpty();
    }

    @Test
    void aPartitionPrefixChangeEndsAnOutputWhateverItsSize() {
        // Prefix "k0", "k1", ...: a new output at every tenth key although the target is never reached.
        assertThat(outputs(new OutputCutter(List.of(), 1 << 30, 2), 10))
                .containsExactly("k00", "k10", "k20", "k30", "k40", "k50", "k60", "k70", "k80", "k90");
        // The target still cuts inside a prefix.
        assertThat(outputs(new OutputCutter(List.of(), 50, 2), 10))
                .containsExactly(
                        "k00", "k05", "k10", "k15", "k20", "k25", "k30", "k35", "k40", "k45", "k50", "k55", "k60",
                        "k65", "k70", "k75", "k80", "k85", "k90", "k95");
        // A prefix longer than the keys compares whole keys: every key its own output.
        assertThat(outputs(new OutputCutter(List.of(), 1 << 30, 8), 10)).hasSize(100);
        assertThatThrownBy(() -> new OutputCutter(List.of(), 100, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    /** {@link #outputs} fed through the in-place form: internal keys whose trailers sort high, compared in place. */
    private static List<String> outputsFromInternalKeys(OutputCutter cutter, int entrySize) {
        List<String> firsts = new ArrayList<>();
        long size = 0;
        for (int i = 0; i < 100; i++) {
            String key = String.format("k%02d", i);
            byte[] ik = InternalKey.encode(k(key), InternalKey.MAX_SEQUENCE, ValueType.MERGE);
            if (cutter.shouldCutBefore(ik, ik.length - InternalKey.TRAILER_SIZE, size)) {
                size = 0;
            }
            if (size == 0) {
                firsts.add(key);
            }
            size += entrySize;
        }
        return firsts;
    }

    @Test
    void internalKeysComparedInPlaceCutWhereTheirUserKeysDo() {
        List<FileMetaData> gp =
                List.of(table(1, "k00", "k24"), table(2, "k30", "k49"), table(3, "k55", "k79"), table(4, "k80", "k99"));
        // a user key equal to a grandparent's last key must not count as past it, whatever its trailer bytes
        List<FileMetaData> edges = List.of(table(1, "k00", "k09"), table(2, "k10", "k19"), table(3, "k20", "k99"));
        for (int target : new int[] {50, 100, 200, 400}) {
            for (int prefix : new int[] {0, 2, 8}) {
                for (List<FileMetaData> g : List.of(List.<FileMetaData>of(), gp, edges)) {
                    assertThat(outputsFromInternalKeys(new OutputCutter(g, target, prefix), 10))
                            .as("target %d, prefix %d, grandparents %s", target, prefix, g)
                            .isEqualTo(outputs(new OutputCutter(g, target, prefix), 10));
                }
            }
        }
    }

    @Test
    void rejectsANonPositiveTarget() {
        assertThatThrownBy(() -> new OutputCutter(List.of(), 0)).isInstanceOf(IllegalArgumentException.class);
    }
}

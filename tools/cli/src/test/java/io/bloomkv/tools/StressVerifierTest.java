package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.tools.stress.ExpectedState;
import io.bloomkv.tools.stress.StressValue;
import io.bloomkv.tools.stress.StressVerifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The check at open ({@link StressVerifier}) in one pass over the keys, the full scan advancing with the gets: every
 * key written reads back, a foreign key is reported wherever it sorts (before the first stress key, between two, past
 * the last one), and the progress hears the keys checked from 0 to all of them.
 */
class StressVerifierTest {
    @TempDir
    Path tmp;

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Writes version 1 of every third key of {@code keys} and marks it committed; returns the keys checked reported.
     */
    private List<Long> writeAndCheck(String name, int keys, List<String> foreign, StressVerifier.Result[] result)
            throws Exception {
        List<Long> reports = new ArrayList<>();
        try (ExpectedState es = ExpectedState.open(tmp.resolve(name + ".expected"), keys);
                Db db = Db.open(tmp.resolve(name), Options.defaults().mergeOperator(StressValue.MERGE_OPERATOR))) {
            for (int k = 0; k < keys; k += 3) {
                db.put(StressValue.key(k), StressValue.of(k, 1));
                es.commit(k, ExpectedState.state(1, true));
            }
            for (String f : foreign) {
                db.put(bytes(f), bytes("v"));
            }
            if (keys > 1000) {
                db.flush(); // the scan then merges a table and the memtable
                db.put(StressValue.key(1), StressValue.of(1, 1));
                es.commit(1, ExpectedState.state(1, true));
            }
            result[0] = StressVerifier.verifyAndResolve(db, es, reports::add);
        }
        return reports;
    }

    @Test
    void everyKeyWrittenReadsBackAndTheProgressCountsTheKeysChecked() throws Exception {
        StressVerifier.Result[] r = new StressVerifier.Result[1];
        assertThat(writeAndCheck("a", 2500, List.of(), r)).containsExactly(0L, 1024L, 2048L, 2500L);
        assertThat(r[0].ok()).as(r[0].toString()).isTrue();
        assertThat(r[0].keys()).isEqualTo(2500);

        assertThat(writeAndCheck("b", 2048, List.of(), r)).containsExactly(0L, 1024L, 2048L);
        assertThat(r[0].ok()).as(r[0].toString()).isTrue();
        assertThat(writeAndCheck("c", 1, List.of(), r)).containsExactly(0L, 1L);
        assertThat(r[0].ok()).as(r[0].toString()).isTrue();
    }

    @Test
    void aForeignKeyIsReportedWhereverItSorts() throws Exception {
        List<String> foreign = List.of(
                "a", // before every stress key
                "stress0000000003x", // between keys 3 and 4 (3 is written: its bounded seek finds it)
                "stress00000000061", // between keys 6 and 7: a digit more than a stress key
                "stress0000000020", // a stress key past the last one (20 keys)
                "zz"); // after every stress key
        StressVerifier.Result[] r = new StressVerifier.Result[1];
        assertThat(writeAndCheck("f", 20, foreign, r)).containsExactly(0L, 20L);
        assertThat(r[0].lost()).as(r[0].toString()).isZero();
        assertThat(r[0].wrong()).as(r[0].toString()).isEqualTo(foreign.size());
        assertThat(r[0].problems())
                .as(r[0].toString())
                .containsExactlyElementsOf(
                        foreign.stream().map(f -> "scan: foreign key " + f).toList());

        // The same database without them is right: the scan saw every key the gets found.
        try (Db db = Db.open(tmp.resolve("f"), Options.defaults().mergeOperator(StressValue.MERGE_OPERATOR))) {
            for (String f : foreign) {
                db.delete(bytes(f));
            }
        }
        try (ExpectedState es = ExpectedState.open(tmp.resolve("f.expected"), 20);
                Db db = Db.open(tmp.resolve("f"), Options.defaults().mergeOperator(StressValue.MERGE_OPERATOR))) {
            StressVerifier.Result again = StressVerifier.verifyAndResolve(db, es);
            assertThat(again.ok()).as(again.toString()).isTrue();
        }
    }
}

package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.BenchCommand;
import io.bloomkv.bench.BenchConfig;
import io.bloomkv.bench.engine.BenchEngine;
import io.bloomkv.bench.engine.EngineFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import picocli.CommandLine;

/**
 * seekrandom and seekprefix check every entry a seek sees, on both engines: right answers pass, and a database changed
 * between the preload and the phases (by an in-process stand-in for the --reopen child, as in MergeRandomCheckTest)
 * gives wrong answers. Each change touches every seek's answer, so every seek must count as wrong; most of them leave
 * each seek's count of entries as it was, which only a check of the entries themselves catches.
 */
class SeekCheckRunTest {
    /** A whole number of prefixes of 16 keys. */
    private static final int NUM = 512;

    private static final int SEEKS = 300;

    /** What the stand-in child does to the preloaded database before the seek phases run. */
    enum Change {
        /** Nothing: every answer is right. */
        NONE,
        /**
         * seekrandom: every tenth key (load index {@code NUM - 1} mod 10) holds another version's value; seekprefix:
         * each prefix's first key.
         */
        WRONG_VALUES,
        /** seekrandom: every tenth key deleted; seekprefix: each prefix's second key deleted. */
        SKIPPED_KEYS,
        /**
         * The keys that {@link #SKIPPED_KEYS} deletes, each replaced by a key with the same id (the same first 8 bytes)
         * and another last byte, under the right value: only a check of whole keys catches it.
         */
        WRONG_KEYS,
        /**
         * seekrandom: a key after every loaded key (its odd id), the last one included; seekprefix: a key right after
         * each prefix's first key (one byte longer) and one under every absent prefix.
         */
        EXTRA_KEYS
    }

    private static BenchConfig config(Path dir, String workloads, boolean reopen, String... more) {
        List<String> args = new ArrayList<>(List.of(
                "--num",
                Integer.toString(NUM),
                "--seeks",
                Integer.toString(SEEKS),
                "--workloads",
                workloads,
                "--engines",
                "bloomkv,rocksdb",
                "--filters",
                "on",
                "--write-buffer-size",
                "65536",
                "--warmup",
                "1000",
                "--phase-warmup",
                "200",
                "--fpr-sweep=false",
                "--progress=false",
                "--report-dir",
                dir.resolve("report").toString()));
        if (reopen) {
            args.add("--reopen");
        }
        args.addAll(List.of(more));
        BenchCommand cmd = new BenchCommand();
        new CommandLine(cmd).parseArgs(args.toArray(String[]::new));
        return cmd.config(dir.resolve("work"));
    }

    /**
     * The phases of {@code workload} on both engines, each run on a database the stand-in child changed as
     * {@code change} says.
     */
    private static List<PhaseResult> run(Path dir, Workload workload, Change change) throws Exception {
        BenchConfig cfg = config(dir, workload.dbBenchName(), true);
        return new BenchRunner(cfg, ProgressSink.NONE, null, (w, spec, db, run) -> {
                    boolean prefix = w == Workload.SEEKPREFIX;
                    try (BenchEngine e = prefix
                            ? EngineFactory.open(
                                    spec.engine(),
                                    db,
                                    EngineFactory.settings(spec, cfg).withPrefixLength(PrefixLayout.PREFIX_LENGTH))
                            : EngineFactory.open(spec, db, cfg)) {
                        if (prefix) {
                            changePrefixes(e, cfg, change);
                        } else {
                            changeKeys(e, cfg, change);
                        }
                    }
                    return new BenchRunner(cfg.coldChild(), ProgressSink.NONE, null).runChildPhase(w, spec, db, run);
                })
                .run();
    }

    /** {@code key} with its last byte changed: the same id, another key (sorting right next to it). */
    private static byte[] otherLastByte(byte[] key) {
        byte[] k = key.clone();
        k[k.length - 1] ^= 1;
        return k;
    }

    private static void changeKeys(BenchEngine e, BenchConfig cfg, Change change) throws IOException {
        KeySpace keys = new KeySpace(cfg.num(), cfg.keySize());
        ValueSource values = new ValueSource(cfg.valueSize(), cfg.seed(), cfg.valueCompressibility());
        for (long j = 0; j < keys.num(); j++) {
            long id = keys.loadedId(j);
            byte[] k = keys.key(id);
            // every seek's window of consecutive load indices holds one equal to NUM - 1 mod 10: a full window of
            // seekrandom-10 holds ten consecutive indices, a shorter one ends at the last, NUM - 1
            boolean tenth = j % 10 == (NUM - 1) % 10;
            switch (change) {
                case NONE -> {}
                case WRONG_VALUES -> {
                    if (tenth) {
                        e.put(k, values.value(id, 1));
                    }
                }
                case SKIPPED_KEYS -> {
                    if (tenth) {
                        e.delete(k);
                    }
                }
                case WRONG_KEYS -> {
                    if (tenth) {
                        e.delete(k);
                        e.put(otherLastByte(k), values.value(id, 0));
                    }
                }
                case EXTRA_KEYS -> e.put(keys.key(id + 1), values.value(id + 1, 0));
            }
        }
    }

    private static void changePrefixes(BenchEngine e, BenchConfig cfg, Change change) throws IOException {
        KeySpace keys = new KeySpace(cfg.num(), cfg.keySize());
        PrefixLayout prefixes = new PrefixLayout(cfg.num());
        ValueSource values = new ValueSource(cfg.valueSize(), cfg.seed(), cfg.valueCompressibility());
        for (long p = 0; p < prefixes.presentPrefixes(); p++) {
            long first = prefixes.presentSeekId(p);
            long second =
                    prefixes.loadedId(p * PrefixLayout.KEYS_PER_PREFIX + 1); // every prefix holds two keys or more
            switch (change) {
                case NONE -> {}
                case WRONG_VALUES -> e.put(keys.key(first), values.value(first, 1));
                case SKIPPED_KEYS -> e.delete(keys.key(second));
                case WRONG_KEYS -> {
                    e.delete(keys.key(second));
                    e.put(otherLastByte(keys.key(second)), values.value(second, 0));
                }
                case EXTRA_KEYS -> {
                    e.put(Arrays.copyOf(keys.key(first), cfg.keySize() + 1), values.value(first, 0));
                    if (p < prefixes.absentPrefixes()) {
                        e.put(keys.key(prefixes.absentSeekId(p) + 3), values.value(first, 0));
                    }
                }
            }
        }
    }

    private static Map<String, Long> wrongByPhase(List<PhaseResult> results) {
        return results.stream().collect(Collectors.toMap(r -> r.phase() + "/" + r.label(), PhaseResult::wrongAnswers));
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void seekRandomChecksEveryEntry(Change change, @TempDir Path dir) throws Exception {
        long wrong = change == Change.NONE ? 0 : SEEKS;
        assertThat(wrongByPhase(run(dir, Workload.SEEKRANDOM, change)))
                .containsOnly(
                        Map.entry("seekrandom-10/bloomkv", wrong),
                        Map.entry("seekrandom-100/bloomkv", wrong),
                        Map.entry("seekrandom-10/rocksdb", wrong),
                        Map.entry("seekrandom-100/rocksdb", wrong));
    }

    @ParameterizedTest
    @EnumSource(Change.class)
    void seekPrefixChecksEveryEntry(Change change, @TempDir Path dir) throws Exception {
        long hit = change == Change.NONE ? 0 : SEEKS;
        long miss = change == Change.EXTRA_KEYS ? SEEKS : 0;
        assertThat(wrongByPhase(run(dir, Workload.SEEKPREFIX, change)))
                .containsOnly(
                        Map.entry("seekprefix-hit/bloomkv", hit),
                        Map.entry("seekprefix-miss/bloomkv", miss),
                        Map.entry("seekprefix-hit/rocksdb", hit),
                        Map.entry("seekprefix-miss/rocksdb", miss));
    }

    /**
     * Both engines in one process, two seeking threads, skewed key choice, the seeks sharing fillrandom's database
     * (seekrandom) or loading their own (seekprefix): every answer right, every hit seeing its prefix's 16 keys.
     */
    @Test
    void bothEnginesAnswerEverySeekRight(@TempDir Path dir) throws Exception {
        BenchConfig cfg =
                config(dir, "fillrandom,seekrandom,seekprefix", false, "--threads", "2", "--distribution", "zipfian");
        List<PhaseResult> results = new BenchRunner(cfg, ProgressSink.NONE, null).run();
        assertThat(results)
                .filteredOn(r -> r.phase().startsWith("seek"))
                .hasSize(8)
                .allSatisfy(r -> assertThat(r.wrongAnswers())
                        .as(r.phase() + "/" + r.label())
                        .isZero());
        assertThat(results)
                .filteredOn(r -> r.phase().equals("seekprefix-hit"))
                .hasSize(2)
                .allSatisfy(r -> assertThat(r.found())
                        .as(r.label() + ": every prefix holds 16 keys")
                        .isEqualTo((long) SEEKS * PrefixLayout.KEYS_PER_PREFIX));
    }
}

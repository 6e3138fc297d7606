package io.bloomkv.engine.internal.compaction;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.bloomkv.engine.Options;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.record.DataDriven;
import io.bloomkv.engine.internal.version.FileMetaData;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The compaction picker as a pure function of the levels and the options, from
 * testdata/compaction_picker (Pebble's compaction_picker_* files). Commands:
 *
 * <pre>
 * define levels=N l0-trigger=T base=BYTES multiplier=M [dynamic=true] [monkey=true] [ribbon-from=L]
 * L0: NUMBER:SMALLEST-LARGEST:BYTES ...     (level 0 newest first; deeper levels by key)
 * ----
 * (the scores)
 *
 * pick [pointers=LEVEL:KEY,...]           the background compaction, or "none"
 * pick-periodic period=SECONDS now=SECONDS created=NUMBER:SECONDS,...
 *                                         pickAuto with periodic compaction (unlisted tables: created at now)
 * pick-range level=L [from=K] [to=K] [in-place=true]
 * deepest [from=K] [to=K]
 * </pre>
 */
class CompactionPickerDataDrivenTest {
    private LevelView levels;
    private Options options;

    @Test
    void basic() throws Exception {
        DataDriven.run(DataDriven.testdata("compaction_picker/basic"), this::handle);
    }

    @Test
    void periodic() throws Exception {
        DataDriven.run(DataDriven.testdata("compaction_picker/periodic"), this::handle);
    }

    private String handle(DataDriven.Case c) {
        switch (c.command) {
            case "define": {
                int n = (int) c.getLong("levels", 4);
                options = Options.defaults()
                        .numLevels(n)
                        .l0CompactionTrigger((int) c.getLong("l0-trigger", 4))
                        .l0SlowdownWritesTrigger(100)
                        .l0StopWritesTrigger(100)
                        .maxBytesForLevelBase(c.getLong("base", 4096))
                        .levelSizeMultiplier((int) c.getLong("multiplier", 10))
                        .dynamicLevelBytes(Boolean.parseBoolean(c.get("dynamic", "false")))
                        .filterAllocation(
                                Boolean.parseBoolean(c.get("monkey", "false"))
                                        ? io.bloomkv.engine.FilterAllocation.MONKEY
                                        : io.bloomkv.engine.FilterAllocation.UNIFORM)
                        .ribbonFromLevel((int) c.getLong("ribbon-from", -1));
                List<List<FileMetaData>> lv = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    lv.add(new ArrayList<>());
                }
                for (String line : c.input) {
                    int colon = line.indexOf(':');
                    int level = Integer.parseInt(line.substring(1, colon).trim());
                    for (String spec : line.substring(colon + 1).trim().split("\\s+")) {
                        if (!spec.isEmpty()) {
                            lv.get(level).add(file(spec));
                        }
                    }
                }
                levels = LevelView.of(lv);
                return scores();
            }
            case "pick": {
                String[] pointers = new String[levels.numLevels()];
                String spec = c.get("pointers", "");
                for (String p : spec.isEmpty() ? new String[0] : spec.split(",")) {
                    String[] lk = p.split(":");
                    pointers[Integer.parseInt(lk[0])] = lk[1];
                }
                return describe(CompactionPicker.pickAuto(
                        levels,
                        options,
                        level -> pointers[level] == null
                                ? null
                                : InternalKey.encode(pointers[level].getBytes(UTF_8), 0, ValueType.PUT)));
            }
            case "pick-periodic": {
                long now = c.getLong("now", 0);
                java.util.Map<Long, Long> created = new java.util.HashMap<>();
                String spec = c.get("created", "");
                for (String p : spec.isEmpty() ? new String[0] : spec.split(",")) {
                    String[] nt = p.split(":");
                    created.put(Long.parseLong(nt[0]), Long.parseLong(nt[1]));
                }
                Options o = options.copy().periodicCompaction(java.time.Duration.ofSeconds(c.getLong("period", 3600)));
                return describe(
                        CompactionPicker.pickAuto(levels, o, level -> null, n -> created.getOrDefault(n, now), now));
            }
            case "pick-range":
                return describe(CompactionPicker.pickRange(
                        levels,
                        (int) c.getLong("level", 0),
                        key(c.get("from", null)),
                        key(c.get("to", null)),
                        Boolean.parseBoolean(c.get("in-place", "false"))));
            case "deepest":
                return "level "
                        + CompactionPicker.deepestOverlappingLevel(
                                levels, key(c.get("from", null)), key(c.get("to", null)));
            default:
                throw new IllegalArgumentException("unknown command " + c.command);
        }
    }

    private String scores() {
        StringBuilder sb = new StringBuilder();
        for (int level = 0; level < levels.numLevels(); level++) {
            sb.append("L")
                    .append(level)
                    .append(": ")
                    .append(levels.files(level).size())
                    .append(" files, ")
                    .append(CompactionPicker.levelBytes(levels, level))
                    .append(" bytes\n");
        }
        CompactionPicker.Score s = CompactionPicker.score(levels, options);
        sb.append(String.format(Locale.ROOT, "score: level %d %.2f", s.level(), s.score()));
        if (options.dynamicLevelBytes()) {
            var t = CompactionPicker.targets(levels, options);
            sb.append("\nbase level ").append(t.baseLevel()).append(", targets");
            for (int level = 1; level < levels.numLevels() - 1; level++) {
                sb.append(' ').append(t.target(level) == Long.MAX_VALUE ? "-" : Long.toString(t.target(level)));
            }
        }
        return sb.toString();
    }

    private static String describe(Compaction c) {
        if (c == null) {
            return "none";
        }
        return "L" + c.level() + " -> L" + c.outputLevel() + ": base=" + numbers(c.base()) + " below="
                + numbers(c.below()) + (c.isTrivialMove() ? " (trivial move)" : "");
    }

    private static String numbers(List<FileMetaData> files) {
        return files.stream().map(f -> Long.toString(f.number())).collect(Collectors.joining(" ", "[", "]"));
    }

    private static byte[] key(String s) {
        return s == null ? null : s.getBytes(UTF_8);
    }

    /** NUMBER:SMALLEST-LARGEST:BYTES */
    private static FileMetaData file(String spec) {
        String[] parts = spec.split(":");
        String[] range = parts[1].split("-");
        long number = Long.parseLong(parts[0]);
        return new FileMetaData(
                number,
                Long.parseLong(parts[2]),
                InternalKey.encode(range[0].getBytes(UTF_8), number * 10 + 1, ValueType.PUT),
                InternalKey.encode(range[1].getBytes(UTF_8), number * 10, ValueType.PUT),
                10,
                number * 10,
                number * 10 + 1);
    }
}

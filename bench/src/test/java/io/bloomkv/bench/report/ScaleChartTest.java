package io.bloomkv.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The scale chart reads several runs' results.json, takes medians per key count and draws one PNG. */
class ScaleChartTest {
    @TempDir
    Path dir;

    private Path results(String name, long num, boolean ownDefaults, double... bloomkvFillOps) throws IOException {
        StringBuilder phases = new StringBuilder();
        for (int run = 0; run < bloomkvFillOps.length; run++) {
            phases.append(String.format(
                    Locale.ROOT,
                    "{\"phase\":\"fillrandom\",\"engine\":\"bloomkv\",\"filters\":true,\"opsPerSec\":%f,\"writeAmplification\":%f},",
                    bloomkvFillOps[run],
                    2.0 + run));
            phases.append(String.format(
                    Locale.ROOT,
                    "{\"phase\":\"readmissing\",\"engine\":\"rocksdb\",\"filters\":true,\"opsPerSec\":%f,\"writeAmplification\":null},",
                    1000.0 * (run + 1)));
            phases.append(
                    "{\"phase\":\"readmissing\",\"engine\":\"rocksdb\",\"filters\":false,\"opsPerSec\":1,\"writeAmplification\":null},");
        }
        phases.setLength(phases.length() - 1);
        String json = "{\"config\":{\"num\":" + num + ",\"ownDefaults\":" + ownDefaults
                + "},\"engines\":{},\"phases\":[" + phases + "]}";
        Path p = dir.resolve(name + ".json");
        Files.writeString(p, json);
        return p;
    }

    @Test
    void mediansPerKeyCountAndModeAndOnePng() throws IOException {
        List<ScaleChart.Point> points = new ArrayList<>();
        points.addAll(ScaleChart.read(results("a", 1_000_000, false, 300, 100, 200)));
        points.addAll(ScaleChart.read(results("b", 10_000_000, false, 50)));
        points.addAll(ScaleChart.read(results("c", 10_000_000, true, 70, 90)));
        assertThat(points)
                .as("filters-off phases are left out")
                .allMatch(p -> !p.phase().equals("readmissing") || p.opsPerSec() >= 1000);
        var fill = ScaleChart.medians(points, "fillrandom", false);
        assertThat(fill.get("bloomkv, matched"))
                .containsEntry(1_000_000L, 200.0)
                .containsEntry(10_000_000L, 50.0);
        assertThat(fill.get("bloomkv, own defaults")).containsEntry(10_000_000L, 80.0);
        assertThat(ScaleChart.medians(points, "fillrandom", true).get("bloomkv, matched"))
                .containsEntry(1_000_000L, 3.0);
        assertThat(ScaleChart.medians(points, "readmissing", false).get("rocksdb, matched"))
                .containsEntry(1_000_000L, 2000.0);
        Path png = dir.resolve("out/scale.png");
        ScaleChart.write(points, png);
        assertThat(png).exists();
        assertThat(Files.size(png)).isGreaterThan(5000);
        assertThat(ScaleChart.table(points)).anyMatch(l -> l.contains("write amp 3.00"));
    }

    /** A --direct, --reopen or --no-settle run is not a point in the matched runs' medians but a series of its own. */
    @Test
    void runsMeasuredAnotherWayAreSeriesOfTheirOwn() throws IOException {
        List<ScaleChart.Point> points = new ArrayList<>();
        points.addAll(ScaleChart.read(results("a", 1_000_000, false, 100)));
        String phase =
                "{\"phase\":\"fillrandom\",\"engine\":\"bloomkv\",\"filters\":true,\"opsPerSec\":900,\"writeAmplification\":1}";
        for (String flag : List.of("directReads", "reopen", "noSettle")) {
            Path p = dir.resolve(flag + ".json");
            Files.writeString(
                    p,
                    "{\"config\":{\"num\":1000000,\"ownDefaults\":false,\"" + flag
                            + "\":true},\"engines\":{},\"phases\":[" + phase + "]}");
            points.addAll(ScaleChart.read(p));
        }
        var fill = ScaleChart.medians(points, "fillrandom", false);
        assertThat(fill.get("bloomkv, matched")).containsExactlyEntriesOf(java.util.Map.of(1_000_000L, 100.0));
        assertThat(fill)
                .containsKeys(
                        "bloomkv, matched, O_DIRECT",
                        "bloomkv, matched, fresh process per phase",
                        "bloomkv, matched, load not settled");
    }
}

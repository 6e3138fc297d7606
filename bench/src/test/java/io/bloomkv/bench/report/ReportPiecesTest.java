package io.bloomkv.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bench.cold.PageCacheEvictor;
import io.bloomkv.bench.jmh.JmhMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportPiecesTest {

    @Test
    void jmhForksGetTheFlagsMavenFilteredFromTheParentPom() {
        List<String> flags = JmhMain.chronicleFlags();
        assertThat(flags).contains("--add-opens=java.base/java.nio=ALL-UNNAMED", "-Dchronicle.analytics.disable=true");
        assertThat(String.join(" ", flags)).doesNotContain("${");
    }

    @Test
    void evictionDropsAFileFromThePageCacheOrSaysWhyNot(@TempDir Path dir) throws Exception {
        PageCacheEvictor ev = PageCacheEvictor.detect(dir);
        if (!ev.available()) {
            assertThat(ev.unavailableReason()).isNotBlank();
            return;
        }
        Path f = dir.resolve("table.sst");
        Files.write(f, new byte[4 << 20]);
        try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.readAllBytes(f);
        PageCacheEvictor.Eviction e = ev.evict(List.of(f));
        assertThat(e.evicted()).isEqualTo(1);
        if (e.residentAfter() >= 0) {
            assertThat(e.residentAfter()).as(e.summary()).isLessThan(1 << 20);
        }
        assertThat(e.summary()).contains("1/1 files evicted");
    }

    @Test
    void librarySweepTracksTheFormula() {
        List<FprPoint> pts = FilterLibrarySweep.sweep(20_000, 200_000, new double[] {8, 10}, 7);
        assertThat(pts).isNotEmpty();
        for (FprPoint p : pts) {
            assertThat(p.measuredFpr()).as(p.toString()).isBetween(p.theoreticalFpr() * 0.6, p.theoreticalFpr() * 1.6);
        }
    }
}

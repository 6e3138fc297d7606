package io.bloomkv.engine.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.bloom.FilterKind;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TableProbe answers as the table's contents say, with and without a filter, and gives back what it opened. */
class TableProbeTest {
    @TempDir
    Path dir;

    @Test
    void probesWhatTheWriterWrote() throws Exception {
        for (double bitsPerKey : new double[] {10, 0}) {
            Path file = dir.resolve(bitsPerKey == 0 ? "000002.sst" : "000001.sst");
            try (TableProbe.Writer w = TableProbe.Writer.create(file, FilterKind.BLOCKED, bitsPerKey, 4096, 2000)) {
                for (int i = 0; i < 2000; i += 2) {
                    w.add(key(i), ("v" + i).getBytes(StandardCharsets.UTF_8));
                }
                w.finish();
            }
            long tables = OpenResources.tables();
            long filterBytes = OpenResources.filterBytes();
            try (TableProbe probe = TableProbe.open(file, 1 << 20)) {
                assertThat(OpenResources.tables()).isEqualTo(tables + 1);
                if (bitsPerKey > 0) {
                    assertThat(OpenResources.filterBytes()).isGreaterThan(filterBytes);
                }
                for (int i = 0; i < 2000; i++) {
                    byte[] v = probe.get(key(i));
                    if (i % 2 == 0) {
                        assertThat(v).as("key %d", i).isEqualTo(("v" + i).getBytes(StandardCharsets.UTF_8));
                    } else {
                        assertThat(v).as("key %d", i).isNull();
                    }
                }
                assertThat(probe.get("zzz".getBytes(StandardCharsets.UTF_8))).isNull();
            }
            assertThat(OpenResources.tables()).isEqualTo(tables);
            assertThat(OpenResources.filterBytes()).isEqualTo(filterBytes);
        }
    }

    private static byte[] key(int i) {
        return String.format("key%06d", i).getBytes(StandardCharsets.UTF_8);
    }
}

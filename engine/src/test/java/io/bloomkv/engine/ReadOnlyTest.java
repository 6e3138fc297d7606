package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.table.TableReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Options#readOnly}: reads everything acknowledged, writes nothing, refuses every write. */
class ReadOnlyTest {
    @TempDir
    Path dir;

    private static Map<String, String> contents(Path dir) throws Exception {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                out.put(
                        p.getFileName().toString(),
                        HexFormat.of()
                                .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
            }
        }
        return out;
    }

    @Test
    void readsTablesAndWalsWithoutChangingTheDirectory() throws Exception {
        Options small = Options.defaults().writeBufferSize(8 << 10);
        try (Db db = Db.open(dir, small)) {
            for (int i = 0; i < 2000; i++) {
                db.put(TestKeys.key(i), bytes("v" + i));
            }
            db.flush();
            db.delete(TestKeys.key(7));
            db.put(bytes("only-in-wal"), bytes("w"));
        }
        Map<String, String> before = contents(dir);
        long liveBefore = TableReader.liveTables();
        try (Db ro = Db.open(dir, Options.defaults().readOnly(true))) {
            assertThat(str(ro.get(bytes("only-in-wal")))).isEqualTo("w");
            assertThat(ro.get(TestKeys.key(7))).isNull();
            assertThat(str(ro.get(TestKeys.key(1999)))).isEqualTo("v1999");
            int n = 0;
            try (DbIterator it = ro.iterator()) {
                for (it.seekToFirst(); it.valid(); it.next()) {
                    n++;
                }
            }
            assertThat(n).isEqualTo(2000);
            assertThat(ro.tables()).isNotEmpty().allSatisfy(t -> {
                assertThat(t.filterProblem()).isNull();
                assertThat(t.filterFractionOfBitsSet()).isStrictlyBetween(0.0, 1.0);
            });
            try (Snapshot s = ro.getSnapshot()) {
                assertThat(str(ro.get(
                                bytes("only-in-wal"), ReadOptions.defaults().snapshot(s))))
                        .isEqualTo("w");
            }
            for (Runnable write : new Runnable[] {
                () -> ro.put(bytes("x"), bytes("y")),
                () -> ro.delete(bytes("x")),
                () -> ro.write(new WriteBatch().put(bytes("x"), bytes("y"))),
                ro::flush,
                ro::syncWal,
                () -> ro.compactRange(null, null)
            }) {
                assertThatThrownBy(write::run)
                        .isInstanceOf(DbReadOnlyException.class)
                        .hasMessageContaining("read-only");
            }
        }
        assertThat(contents(dir)).as("names and bytes of every file").isEqualTo(before);
        assertThat(TableReader.liveTables()).isEqualTo(liveBefore);
    }

    @Test
    void takesNoLockSoItReadsADatabaseAWriterHolds() {
        try (Db writer = Db.open(dir, Options.defaults())) {
            writer.put(bytes("k"), bytes("1"));
            try (Db ro = Db.open(dir, Options.defaults().readOnly(true))) {
                assertThat(str(ro.get(bytes("k")))).isEqualTo("1");
            }
            writer.put(bytes("k"), bytes("2"));
            assertThat(str(writer.get(bytes("k")))).isEqualTo("2");
        }
    }

    @Test
    void createsNothing() throws Exception {
        Path missing = dir.resolve("missing");
        assertThatThrownBy(() -> Db.open(missing, Options.defaults().readOnly(true)))
                .isInstanceOf(NotADatabaseException.class)
                .hasMessageContaining("creates nothing");
        assertThat(missing).doesNotExist();
        Path empty = Files.createDirectories(dir.resolve("empty"));
        assertThatThrownBy(() -> Db.open(empty, Options.defaults().readOnly(true)))
                .isInstanceOf(NotADatabaseException.class);
        try (Stream<Path> s = Files.list(empty)) {
            assertThat(s.count()).isZero();
        }
    }
}

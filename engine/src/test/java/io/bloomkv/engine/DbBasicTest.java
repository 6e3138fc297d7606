package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DbBasicTest {
    @TempDir
    Path dir;

    private List<String> scan(Db db) {
        List<String> out = new ArrayList<>();
        try (DbIterator it = db.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                out.add(str(it.key()) + "=" + str(it.value()));
            }
        }
        return out;
    }

    @Test
    void putGetDeleteScanAcrossFlushAndReopen() {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(bytes("b"), bytes("2"));
            db.put(bytes("a"), bytes("1"));
            db.put(bytes("c"), bytes("3"));
            assertThat(str(db.get(bytes("a")))).isEqualTo("1");
            db.delete(bytes("b"));
            assertThat(db.get(bytes("b"))).isNull();
            assertThat(scan(db)).containsExactly("a=1", "c=3");
            db.flush();
            assertThat(db.stats().tableCount()).isEqualTo(1);
            db.put(bytes("a"), bytes("1b"));
            assertThat(str(db.get(bytes("a")))).isEqualTo("1b");
            assertThat(str(db.get(bytes("c")))).isEqualTo("3");
            assertThat(scan(db)).containsExactly("a=1b", "c=3");
        }
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(str(db.get(bytes("a")))).isEqualTo("1b");
            assertThat(db.get(bytes("b"))).isNull();
            assertThat(scan(db)).containsExactly("a=1b", "c=3");
            Stats s = db.stats();
            assertThat(s.tableCount()).isEqualTo(2);
            assertThat(s.filterMemoryBytes()).isPositive();
            List<TableInfo> tables = db.tables();
            assertThat(tables).hasSize(2);
            assertThat(tables.get(0).level()).isZero();
            assertThat(tables.get(0).fileNumber()).isGreaterThan(tables.get(1).fileNumber());
            assertThat(tables.get(0).path()).exists();
            assertThat(tables.stream().mapToLong(TableInfo::filterMemoryBytes).sum())
                    .isEqualTo(s.filterMemoryBytes());
            assertThat(tables.get(1).filterKind()).isEqualTo(io.bloomkv.bloom.FilterKind.BLOCKED);
            assertThat(tables.get(1).filterHashCount()).isPositive();
            assertThat(str(tables.get(1).smallestUserKey())).isEqualTo("a");
            assertThat(str(tables.get(1).largestUserKey())).isEqualTo("c");
        }
    }

    @Test
    void writeBatchIsAtomicAndOrdered() {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(bytes("x"), bytes("old"));
            db.write(new WriteBatch()
                    .put(bytes("k"), bytes("1"))
                    .delete(bytes("x"))
                    .put(bytes("k"), bytes("2")));
            assertThat(str(db.get(bytes("k")))).isEqualTo("2");
            assertThat(db.get(bytes("x"))).isNull();
            assertThat(db.stats().puts()).isEqualTo(3);
            assertThat(db.stats().deletes()).isEqualTo(1);
        }
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(str(db.get(bytes("k")))).isEqualTo("2");
            assertThat(db.get(bytes("x"))).isNull();
        }
    }

    @Test
    void iteratorSeesOnePointInTime() {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(bytes("a"), bytes("1"));
            db.put(bytes("b"), bytes("2"));
            try (DbIterator it = db.iterator()) {
                db.put(bytes("a"), bytes("changed"));
                db.delete(bytes("b"));
                db.put(bytes("c"), bytes("new"));
                db.flush();
                it.seekToFirst();
                List<String> seen = new ArrayList<>();
                for (; it.valid(); it.next()) {
                    seen.add(str(it.key()) + "=" + str(it.value()));
                }
                assertThat(seen).containsExactly("a=1", "b=2");
                it.seek(bytes("b"));
                assertThat(str(it.key())).isEqualTo("b");
            }
            assertThat(scan(db)).containsExactly("a=changed", "c=new");
        }
    }

    @Test
    void snapshotsPinState() {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(bytes("a"), bytes("1"));
            try (Snapshot s = db.getSnapshot()) {
                db.put(bytes("a"), bytes("2"));
                db.delete(bytes("a"));
                db.flush();
                assertThat(str(db.get(bytes("a"), ReadOptions.defaults().snapshot(s))))
                        .isEqualTo("1");
                assertThat(db.get(bytes("a"))).isNull();
                try (DbIterator it = db.iterator(ReadOptions.defaults().snapshot(s))) {
                    it.seekToFirst();
                    assertThat(str(it.value())).isEqualTo("1");
                }
            }
        }
    }

    @Test
    void badInputIsRejectedAndChangesNothing() {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(bytes("k"), bytes("v"));
            assertThatThrownBy(() -> db.put(null, bytes("v")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("null");
            assertThatThrownBy(() -> db.put(bytes("k"), null))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("null");
            assertThatThrownBy(() -> db.put(new byte[0], bytes("v")))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("empty");
            assertThatThrownBy(() -> db.put(new byte[Db.MAX_KEY_SIZE + 1], bytes("v")))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.put(bytes("k"), new byte[Db.MAX_VALUE_SIZE + 1]))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.get(null)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.delete(new byte[0])).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> db.write(null)).isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> new WriteBatch().put(bytes("a"), null))
                    .isInstanceOf(InvalidArgumentException.class);
            db.put(new byte[Db.MAX_KEY_SIZE], bytes("max key"));
            assertThat(str(db.get(new byte[Db.MAX_KEY_SIZE]))).isEqualTo("max key");
            assertThat(str(db.get(bytes("k")))).isEqualTo("v");
            db.put(bytes("k2"), bytes("v2"));
            assertThat(str(db.get(bytes("k2")))).isEqualTo("v2");
        }
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(str(db.get(bytes("k")))).isEqualTo("v");
            assertThat(str(db.get(bytes("k2")))).isEqualTo("v2");
        }
    }

    @Test
    void useAfterCloseIsTyped() {
        Db db = Db.open(dir, Options.defaults());
        db.put(bytes("k"), bytes("v"));
        DbIterator it = db.iterator();
        db.close();
        db.close();
        assertThatThrownBy(() -> db.get(bytes("k"))).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(() -> db.put(bytes("k"), bytes("v"))).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(db::iterator).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(db::stats).isInstanceOf(DbClosedException.class);
        assertThatThrownBy(it::seekToFirst).isInstanceOf(DbClosedException.class);
    }

    @Test
    void secondOpenIsLocked() {
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThatThrownBy(() -> Db.open(dir, Options.defaults())).isInstanceOf(DbLockedException.class);
            db.put(bytes("still"), bytes("usable"));
        }
        try (Db db = Db.open(dir, Options.defaults())) {
            assertThat(str(db.get(bytes("still")))).isEqualTo("usable");
        }
    }

    @Test
    void notADatabase() throws Exception {
        Path other = dir.resolve("other");
        Files.createDirectories(other);
        Files.writeString(other.resolve("notes.txt"), "hello");
        assertThatThrownBy(() -> Db.open(other, Options.defaults()))
                .isInstanceOf(NotADatabaseException.class)
                .hasMessageContaining("notes.txt");
        Path file = dir.resolve("file");
        Files.writeString(file, "x");
        assertThatThrownBy(() -> Db.open(file, Options.defaults())).isInstanceOf(NotADatabaseException.class);
        assertThatThrownBy(
                        () -> Db.open(dir.resolve("missing"), Options.defaults().createIfMissing(false)))
                .isInstanceOf(NotADatabaseException.class);
        assertThat(Files.exists(other.resolve("LOCK"))).isFalse();
    }

    @Test
    void destroyRemovesTheDatabaseButNotForeignFiles() throws Exception {
        Path db1 = dir.resolve("db1");
        try (Db db = Db.open(db1, Options.defaults())) {
            db.put(bytes("k"), bytes("v"));
            db.flush();
            assertThatThrownBy(() -> Db.destroy(db1, Options.defaults())).isInstanceOf(DbLockedException.class);
        }
        Db.destroy(db1, Options.defaults());
        assertThat(Files.exists(db1)).isFalse();
        Db.destroy(db1, Options.defaults());
        try (Db db = Db.open(db1, Options.defaults())) {
            assertThat(db.get(bytes("k"))).isNull();
        }
        Files.writeString(db1.resolve("keep.txt"), "mine");
        Db.destroy(db1, Options.defaults());
        try (var files = Files.list(db1)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("keep.txt");
        }
    }

    @Test
    void optionsRejectOutOfRange() {
        assertThatThrownBy(() -> Options.defaults().bitsPerKey(-1)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().writeBufferSize(1)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> Options.defaults().syncMode(null)).isInstanceOf(InvalidArgumentException.class);
    }
}

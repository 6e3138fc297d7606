package io.bloomkv.engine.inspect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.internal.table.TableReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The inspection API on real files: a table's parts and entries, damage found, logs read, files listed. */
class TableDumpTest {
    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void dumpsVerifiesAndListsWhatTheEngineWrote() throws Exception {
        try (Db db = Db.open(dir, Options.defaults().blockSize(256))) {
            for (int i = 0; i < 300; i++) {
                db.put(b(String.format("key%04d", i)), b("value" + i));
            }
            db.delete(b("key0005"));
            db.flush();
            db.put(b("later"), b("x"));
        }
        List<DatabaseFiles.DbFile> files = DatabaseFiles.list(dir);
        assertThat(files)
                .extracting(DatabaseFiles.DbFile::kind)
                .contains(
                        DatabaseFiles.Kind.TABLE,
                        DatabaseFiles.Kind.WAL,
                        DatabaseFiles.Kind.MANIFEST,
                        DatabaseFiles.Kind.CURRENT);
        DatabaseFiles.DbFile table = files.stream()
                .filter(f -> f.kind() == DatabaseFiles.Kind.TABLE)
                .findFirst()
                .orElseThrow();
        assertThat(table.path()).isEqualTo(DatabaseFiles.tableFile(dir, table.number()));
        long live = TableReader.liveTables();
        try (TableDump t = TableDump.open(table.path())) {
            TableDump.Properties p = t.properties();
            // 299 values and key0005's delete: the flush leaves out the value the delete hides.
            assertThat(p.entries()).isEqualTo(300);
            assertThat(p.deletions()).isEqualTo(1);
            assertThat(p.smallestKey().userKey()).isEqualTo(b("key0000"));
            assertThat(p.filterKind()).isEqualTo(FilterKind.BLOCKED);
            assertThat(t.index()).hasSize((int) p.dataBlocks());
            assertThat(t.index().get(t.index().size() - 1).separator().userKey())
                    .isEqualTo(b("key0299"));
            assertThat(t.fileNumber()).isEqualTo(table.number());
            assertThat(t.footerOffset()).isEqualTo(t.fileSize() - TableDump.FOOTER_SIZE);
            TableDump.FilterInfo f = t.filter();
            assertThat(f.present()).isTrue();
            assertThat(f.keys()).isEqualTo(300);
            assertThat(f.problem()).isNull();
            List<TableDump.Entry> entries = new ArrayList<>();
            t.forEachEntry(Long.MAX_VALUE, entries::add);
            assertThat(entries).hasSize(300);
            assertThat(entries.stream().filter(e -> e.key().isDeletion()))
                    .singleElement()
                    .satisfies(e -> assertThat(e.key().userKey()).isEqualTo(b("key0005")));
            assertThat(t.verifyChecksums()).isEmpty();
            assertThat(t.blockCount()).isEqualTo(t.index().size() + 3);
        }
        assertThat(TableReader.liveTables()).as("closed").isEqualTo(live);
        // A flipped byte in the first data block is found and named.
        try (RandomAccessFile f = new RandomAccessFile(table.path().toFile(), "rw")) {
            f.seek(10);
            int v = f.read();
            f.seek(10);
            f.write(v ^ 0xff);
        }
        try (TableDump t = TableDump.open(table.path())) {
            assertThat(t.verifyChecksums()).singleElement().satisfies(bad -> {
                assertThat(bad.kind()).isEqualTo("data");
                assertThat(bad.offset()).isZero();
            });
        }
        DatabaseFiles.DbFile wal = files.stream()
                .filter(x -> x.kind() == DatabaseFiles.Kind.WAL)
                .reduce((a, c) -> c)
                .orElseThrow();
        LogDump.Summary log = LogDump.read(wal.path());
        // the log-start record naming the WAL before it (the flush switched WALs, engine/FORMAT.md), then the put
        assertThat(log.records()).isEqualTo(2);
        assertThat(log.tailDropped()).isFalse();
        // A damaged footer cannot be opened: a CorruptionException naming the file.
        try (RandomAccessFile f = new RandomAccessFile(table.path().toFile(), "rw")) {
            f.seek(f.length() - 1);
            int v = f.read();
            f.seek(f.length() - 1);
            f.write(v ^ 0xff);
        }
        assertThatThrownBy(() -> TableDump.open(table.path()))
                .isInstanceOf(CorruptionException.class)
                .hasMessageContaining(table.path().getFileName().toString());
    }

    /**
     * A table with a range filter and range deletions: both blocks are in the block count and verified, and a flipped
     * byte in the range filter is found and named (the open only drops a bad range filter, reads go on without it).
     */
    @Test
    void rangeFilterAndRangeDeletionBlocksAreCountedAndVerified() throws Exception {
        Path db = dir.resolve("ranged");
        try (Db d = Db.open(db, Options.defaults().blockSize(256).rangeFilterBitsPerKey(10))) {
            for (int i = 0; i < 300; i++) {
                d.put(b(String.format("key%04d", i)), b("value" + i));
            }
            d.deleteRange(b("key0100"), b("key0110"));
            d.flush();
        }
        DatabaseFiles.DbFile table = DatabaseFiles.list(db).stream()
                .filter(f -> f.kind() == DatabaseFiles.Kind.TABLE)
                .findFirst()
                .orElseThrow();
        long offset;
        long size;
        int extra;
        try (TableReader r =
                TableReader.open(io.bloomkv.engine.fs.FileSystem.disk(), table.path(), table.number(), null, null)) {
            assertThat(r.properties().rangeFilter()).as("range filter").isNotNull();
            offset = r.properties().rangeFilter().offset();
            size = r.properties().rangeFilter().size();
            extra = r.properties().rangeDeletionsBlock() != null ? 1 : 0;
        }
        try (TableDump t = TableDump.open(table.path())) {
            assertThat(t.verifyChecksums()).isEmpty();
            assertThat(t.blockCount())
                    .as("data, filter, range filter, range deletions when kept, index, properties")
                    .isEqualTo(t.index().size() + 4 + extra);
        }
        try (RandomAccessFile f = new RandomAccessFile(table.path().toFile(), "rw")) {
            f.seek(offset + size / 2);
            int v = f.read();
            f.seek(offset + size / 2);
            f.write(v ^ 0xff);
        }
        try (TableDump t = TableDump.open(table.path())) {
            assertThat(t.verifyChecksums()).singleElement().satisfies(bad -> {
                assertThat(bad.kind()).isEqualTo("range filter");
                assertThat(bad.offset()).isEqualTo(offset);
            });
        }
    }
}

package io.bloomkv.engine.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link DatabaseFiles#kindOf}: a file's kind from its name alone, as {@link DatabaseFiles#list} classifies it. */
class DatabaseFilesKindTest {
    @TempDir
    Path dir;

    @Test
    void everyListedFileHasTheKindItsNameGives() throws Exception {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put("k".getBytes(), "v".getBytes());
            db.flush();
            db.put("k2".getBytes(), "v".getBytes());
        }
        var files = DatabaseFiles.list(dir);
        assertThat(files)
                .extracting(DatabaseFiles.DbFile::kind)
                .contains(DatabaseFiles.Kind.TABLE, DatabaseFiles.Kind.WAL, DatabaseFiles.Kind.MANIFEST);
        for (DatabaseFiles.DbFile f : files) {
            assertThat(DatabaseFiles.kindOf(f.path())).as(f.path().toString()).isEqualTo(f.kind());
        }
    }

    @Test
    void namesAloneWithoutTheFiles() {
        Path nowhere = Path.of("no-such-dir");
        assertThat(DatabaseFiles.kindOf(nowhere.resolve("000012.sst"))).isEqualTo(DatabaseFiles.Kind.TABLE);
        assertThat(DatabaseFiles.kindOf(nowhere.resolve("000013.log"))).isEqualTo(DatabaseFiles.Kind.WAL);
        assertThat(DatabaseFiles.kindOf(nowhere.resolve("MANIFEST-000004"))).isEqualTo(DatabaseFiles.Kind.MANIFEST);
        assertThat(DatabaseFiles.kindOf(nowhere.resolve("CURRENT"))).isEqualTo(DatabaseFiles.Kind.CURRENT);
        assertThat(DatabaseFiles.kindOf(nowhere.resolve("data.tsv"))).isNull();
        assertThat(DatabaseFiles.kindOf(Path.of("/"))).isNull();
    }
}

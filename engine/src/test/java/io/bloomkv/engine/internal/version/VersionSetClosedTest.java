package io.bloomkv.engine.internal.version;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.DbClosedException;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.fs.InMemoryFileSystem;
import io.bloomkv.engine.internal.table.ReadCounters;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A closed VersionSet answers with the public {@link DbClosedException}: a call that passed the database's own open
 * check just before a concurrent close (Db.tables, a checkpoint, compactRange) then fails with the exception the user
 * guide names, not an internal IllegalStateException.
 */
class VersionSetClosedTest {
    @Test
    void aClosedVersionSetThrowsDbClosedException() throws Exception {
        InMemoryFileSystem fs = new InMemoryFileSystem();
        Path dir = Path.of("/db");
        fs.createDirectories(dir);
        try (TableCache tables = new TableCache(fs, dir, null, new ReadCounters())) {
            VersionSet vs = new VersionSet(fs, dir, Options.defaults(), tables, () -> {});
            vs.create();
            vs.retainCurrent().release();
            vs.close();
            assertThatThrownBy(vs::retainCurrent).isInstanceOf(DbClosedException.class);
            assertThatThrownBy(() -> vs.logAndApply(new VersionEdit())).isInstanceOf(DbClosedException.class);
        }
    }
}

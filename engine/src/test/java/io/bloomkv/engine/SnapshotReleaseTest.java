package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static io.bloomkv.engine.TestKeys.str;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Releasing a snapshot is idempotent however it is reached: two snapshots at one sequence, the
 * first released twice (close then releaseSnapshot, the reverse, or either twice), and the second
 * must still see its version after compaction drops everything no snapshot needs.
 */
class SnapshotReleaseTest {
    @TempDir
    Path dir;

    private void secondSnapshotKeepsItsView(ReleaseTwice twice) {
        try (Db db = Db.open(dir, Options.defaults())) {
            db.put(bytes("k"), bytes("1"));
            Snapshot s1 = db.getSnapshot();
            Snapshot s2 = db.getSnapshot();
            assertThat(s1.sequence()).isEqualTo(s2.sequence());
            twice.release(db, s1);
            assertThat(db.stats().openSnapshots()).as("one snapshot still open").isEqualTo(1);
            db.put(bytes("k"), bytes("2"));
            db.flush();
            db.compactRange(null, null);
            assertThat(str(db.get(bytes("k"), ReadOptions.defaults().snapshot(s2))))
                    .isEqualTo("1");
            try (DbIterator it = db.iterator(ReadOptions.defaults().snapshot(s2))) {
                it.seekToFirst();
                assertThat(str(it.value())).isEqualTo("1");
            }
            assertThat(str(db.get(bytes("k")))).isEqualTo("2");
            s2.close();
            assertThat(db.stats().openSnapshots()).isZero();
        }
    }

    interface ReleaseTwice {
        void release(Db db, Snapshot s);
    }

    @Test
    void closeThenRelease() {
        secondSnapshotKeepsItsView((db, s) -> {
            s.close();
            db.releaseSnapshot(s);
        });
    }

    @Test
    void releaseThenClose() {
        secondSnapshotKeepsItsView((db, s) -> {
            db.releaseSnapshot(s);
            s.close();
        });
    }

    @Test
    void releaseTwice() {
        secondSnapshotKeepsItsView((db, s) -> {
            db.releaseSnapshot(s);
            db.releaseSnapshot(s);
        });
    }

    @Test
    void closeTwice() {
        secondSnapshotKeepsItsView((db, s) -> {
            s.close();
            s.close();
        });
    }

    @Test
    void releasedSnapshotIsRefusedAndClosingAfterTheDatabaseIsQuiet() {
        Db db = Db.open(dir, Options.defaults());
        Snapshot s = db.getSnapshot();
        Snapshot open = db.getSnapshot();
        s.close();
        assertThatThrownBy(() -> db.get(bytes("k"), ReadOptions.defaults().snapshot(s)))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("released");
        db.close();
        assertThatThrownBy(() -> db.get(bytes("k"), ReadOptions.defaults().snapshot(open)))
                .isInstanceOf(DbClosedException.class);
        assertThatThrownBy(db::getSnapshot).isInstanceOf(DbClosedException.class);
        open.close();
        db.releaseSnapshot(open);
    }
}

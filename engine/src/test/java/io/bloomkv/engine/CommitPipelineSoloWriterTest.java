package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.fs.FaultInjectingFileSystem;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reused writer of a lone single put ({@code CommitPipeline.solo}): it keeps none of the caller's arrays after the
 * put returns, also when the write fails, and leaves the queue empty, so the next put takes it again and writes what
 * it was given. The contended case (a put finding the queue busy gets a writer of its own) is GroupCommitTest's.
 */
class CommitPipelineSoloWriterTest {
    @TempDir
    Path dir;

    @Test
    void aLonePutKeepsNoArrayAndTheNextPutWritesItsOwn() throws Exception {
        try (Db db = Db.open(dir, Options.defaults().disableWal(true))) {
            CommitPipeline commits = commits(db);
            for (int i = 0; i < 100; i++) {
                db.put(TestKeys.key(i), TestKeys.bytes("v" + i));
                assertCleared(commits);
            }
            for (int i = 0; i < 100; i++) {
                assertThat(db.get(TestKeys.key(i))).isEqualTo(TestKeys.bytes("v" + i));
            }
        }
    }

    @Test
    void aFailedLonePutKeepsNoArrayAndLeavesTheQueueEmpty() throws Exception {
        FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();
        AtomicBoolean failWal = new AtomicBoolean();
        fs.inject((op, p) -> failWal.get()
                && (op == Op.WRITE || op == Op.FLUSH)
                && p.getFileName().toString().endsWith(".log"));
        try (Db db = Db.open(dir, Options.defaults().fileSystem(fs))) {
            CommitPipeline commits = commits(db);
            db.put(TestKeys.key(1), TestKeys.bytes("a"));
            failWal.set(true);
            assertThatThrownBy(() -> db.put(TestKeys.key(2), TestKeys.bytes("b")))
                    .isInstanceOf(BloomKvException.class);
            assertCleared(commits);
            assertThat(db.get(TestKeys.key(1))).isEqualTo(TestKeys.bytes("a"));
        }
    }

    private static CommitPipeline commits(Db db) throws ReflectiveOperationException {
        Field f = Db.class.getDeclaredField("commits");
        f.setAccessible(true);
        return (CommitPipeline) f.get(db);
    }

    private static void assertCleared(CommitPipeline commits) throws ReflectiveOperationException {
        Field soloField = CommitPipeline.class.getDeclaredField("solo");
        soloField.setAccessible(true);
        Object solo = soloField.get(commits);
        for (String name : new String[] {"putKey", "putValue"}) {
            Field f = solo.getClass().getDeclaredField(name);
            f.setAccessible(true);
            assertThat(f.get(solo)).as(name).isNull();
        }
        Field writersField = CommitPipeline.class.getDeclaredField("writers");
        writersField.setAccessible(true);
        assertThat((ArrayDeque<?>) writersField.get(commits)).isEmpty();
    }
}

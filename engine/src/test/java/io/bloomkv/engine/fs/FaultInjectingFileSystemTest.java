package io.bloomkv.engine.fs;

import static io.bloomkv.engine.fs.FaultInjectingFileSystem.on;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Fault;
import io.bloomkv.engine.fs.FaultInjectingFileSystem.Op;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FaultInjectingFileSystemTest {
    @TempDir
    Path dir;

    private final FaultInjectingFileSystem fs = FaultInjectingFileSystem.overDisk();

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void failsTheNthWriteToMatchingFilesOnly() throws IOException {
        Fault f = fs.injectNth(on(Op.WRITE, "*.log"), 3);
        try (WritableFile log = fs.newWritableFile(dir.resolve("000001.log"));
                WritableFile sst = fs.newWritableFile(dir.resolve("000002.sst"))) {
            log.append(new byte[1]);
            sst.append(new byte[1]);
            sst.append(new byte[1]);
            sst.append(new byte[1]);
            log.append(new byte[1]);
            assertThatThrownBy(() -> log.append(new byte[1]))
                    .isInstanceOf(InjectedIOException.class)
                    .hasMessageContaining("WRITE")
                    .hasMessageContaining("000001.log");
            log.append(new byte[1]); // only the 3rd fails
            assertThat(log.size()).isEqualTo(3);
        }
        assertThat(f.fired()).isEqualTo(1);
        assertThat(f.matches()).isEqualTo(4);
        assertThat(fs.injectedErrors()).isEqualTo(1);
    }

    @Test
    void persistentFaultUntilRemoved() throws IOException {
        Path p = dir.resolve("x.sst");
        Files.write(p, new byte[10]);
        Fault f = fs.injectFromNth(on(Op.READ, "*.sst"), 2);
        try (ReadableFile r = fs.newReadableFile(p)) {
            r.readFully(0, new byte[2], 0, 2);
            assertThatThrownBy(() -> r.readFully(0, new byte[2], 0, 2)).isInstanceOf(InjectedIOException.class);
            assertThatThrownBy(() -> r.readFully(0, new byte[2], 0, 2)).isInstanceOf(InjectedIOException.class);
            f.remove();
            r.readFully(0, new byte[2], 0, 2);
        }
        assertThat(f.fired()).isEqualTo(2);
    }

    @Test
    void predicateOnAnyOperationAndPath() throws IOException {
        fs.inject((op, path) -> op == Op.RENAME && path.getFileName().toString().equals("CURRENT"));
        fs.inject(on(Op.SYNC_DIR));
        fs.inject(on(Op.CREATE, "MANIFEST-*"));
        Path tmp = dir.resolve("CURRENT.tmp");
        Files.write(tmp, new byte[1]);
        assertThatThrownBy(() -> fs.rename(tmp, dir.resolve("CURRENT"))).isInstanceOf(InjectedIOException.class);
        assertThat(Files.exists(tmp)).as("nothing done").isTrue();
        assertThatThrownBy(() -> fs.syncDirectory(dir)).isInstanceOf(InjectedIOException.class);
        assertThatThrownBy(() -> fs.newWritableFile(dir.resolve("MANIFEST-000001")))
                .isInstanceOf(InjectedIOException.class);
        fs.clearFaults();
        fs.rename(tmp, dir.resolve("CURRENT"));
        fs.syncDirectory(dir);
    }

    @Test
    void crashKeepsExactlyTheSyncedBytes() throws IOException {
        Path synced = dir.resolve("a.log");
        Path never = dir.resolve("b.log");
        Path renamed = dir.resolve("c.tmp");
        Path old = dir.resolve("old");
        Files.write(old, bytes(50, 9)); // not written through fs: untouched by the crash
        byte[] data = bytes(100_000, 1);
        WritableFile a = fs.newWritableFile(synced);
        a.append(data, 0, 70_000);
        a.sync();
        a.append(data, 70_000, 30_000);
        a.flush();
        assertThat(fs.durableSize(synced)).isEqualTo(70_000);
        WritableFile b = fs.newWritableFile(never);
        b.append(data, 0, 10);
        b.flush();
        try (WritableFile c = fs.newWritableFile(renamed)) {
            c.append(data, 0, 5);
            c.sync();
            c.append(data, 5, 5);
        }
        fs.rename(renamed, dir.resolve("c"));
        ReadableFile reader = fs.newReadableFile(synced);

        fs.crash();

        assertThat(Files.readAllBytes(synced)).isEqualTo(Arrays.copyOf(data, 70_000));
        assertThat(Files.exists(never)).as("never synced: vanishes").isFalse();
        assertThat(Files.readAllBytes(dir.resolve("c"))).isEqualTo(Arrays.copyOf(data, 5));
        assertThat(Files.readAllBytes(old)).isEqualTo(bytes(50, 9));
        assertThatThrownBy(() -> a.append(new byte[1]))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("crashed");
        assertThatThrownBy(() -> reader.readFully(0, new byte[1], 0, 1)).isInstanceOf(IOException.class);
        assertThat(fs.crashCount()).isEqualTo(1);

        // usable again at once
        try (WritableFile again = fs.newWritableFile(synced)) {
            again.append(new byte[] {7});
            again.sync();
        }
        fs.crash();
        assertThat(Files.readAllBytes(synced)).containsExactly(7);
    }

    @Test
    void crashReleasesLocks() throws IOException {
        Path lock = dir.resolve("LOCK");
        Optional<Closeable> l = fs.tryLock(lock);
        assertThat(l).isPresent();
        assertThat(fs.tryLock(lock)).isEmpty();
        fs.crash();
        Optional<Closeable> again = fs.tryLock(lock);
        assertThat(again).as("the crashed process's lock is gone").isPresent();
        again.get().close();
        l.get().close(); // stale handle: harmless
    }

    @Test
    void tornCrashKeepsAPrefixBetweenSyncedAndWritten() throws IOException {
        long seed = TestSeeds.seed("FaultInjectingFileSystemTest", "fs.seed");
        Random rnd = new Random(seed);
        for (int round = 0; round < 20; round++) {
            Path p = dir.resolve("t" + round + ".log");
            byte[] data = bytes(5000, round);
            WritableFile w = fs.newWritableFile(p);
            w.append(data, 0, 1000);
            w.sync();
            w.append(data, 1000, 4000);
            fs.crash(rnd);
            byte[] left = Files.readAllBytes(p);
            assertThat(left.length).as("seed %d", seed).isBetween(1000, 5000);
            assertThat(left).as("seed %d", seed).isEqualTo(Arrays.copyOf(data, left.length));
        }
    }

    @Test
    void deleteAfterWriteIsNotResurrectedByCrash() throws IOException {
        Path p = dir.resolve("d.sst");
        try (WritableFile w = fs.newWritableFile(p)) {
            w.append(new byte[10]);
            w.sync();
        }
        fs.delete(p);
        fs.crash();
        assertThat(Files.exists(p)).isFalse();
    }

    @Test
    void freeSpaceRunsOutLikeEnospcAndIsGivenBackByDeletes() throws IOException {
        fs.setFreeSpace(10);
        Path a = dir.resolve("a.sst");
        try (WritableFile w = fs.newWritableFile(a)) {
            w.append(new byte[6]);
            assertThatThrownBy(() -> w.append(bytes(7, 1)))
                    .isInstanceOf(NoSpaceLeftException.class)
                    .hasMessageContaining("No space left on device")
                    .hasMessageContaining("a.sst");
            assertThat(w.size()).as("the 4 bytes that fitted are written").isEqualTo(10);
            assertThat(fs.freeSpace()).isZero();
            assertThatThrownBy(() -> w.append(new byte[1])).isInstanceOf(NoSpaceLeftException.class);
        }
        assertThat(Files.size(a)).isEqualTo(10);
        Path b = dir.resolve("b.sst");
        try (WritableFile w = fs.newWritableFile(b)) {
            assertThatThrownBy(() -> w.append(new byte[1])).isInstanceOf(NoSpaceLeftException.class);
        }
        fs.delete(a);
        assertThat(fs.freeSpace()).as("deleting a gives its 10 bytes back").isEqualTo(10);
        try (WritableFile w = fs.newWritableFile(b)) {
            w.append(new byte[8]);
        }
        try (WritableFile w = fs.newWritableFile(b)) {
            assertThat(fs.freeSpace()).as("truncating b gives its 8 bytes back").isEqualTo(10);
            w.append(new byte[3]);
        }
        Path c = dir.resolve("c.sst");
        Files.write(c, new byte[5]);
        fs.rename(b, c);
        assertThat(fs.freeSpace()).as("replacing c gives its 5 bytes back").isEqualTo(12);
        fs.clearFreeSpaceLimit();
        assertThat(fs.freeSpace()).isEqualTo(Long.MAX_VALUE);
        try (WritableFile w = fs.newWritableFile(dir.resolve("d.sst"))) {
            w.append(new byte[1000]);
        }
    }
}

package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Stats#walBytesWritten()} against the bytes the file system saw appended to {@code *.log} files: write groups
 * from two threads, memtable switches (each new log starts with a log-start record), the mapped WAL and the
 * {@code write(2)} one, every sync mode. Replay with -Dbloomkv.seed=N.
 */
class WalBytesTest {
    @TempDir
    Path dir;

    /** Counts the bytes appended to log files, whichever way the engine opens them. */
    private static final class LogBytes extends ForwardingFileSystem {
        final AtomicLong appended = new AtomicLong();

        LogBytes(FileSystem inner) {
            super(inner);
        }

        @Override
        public WritableFile newWritableFile(Path p) throws IOException {
            return counted(p, delegate().newWritableFile(p));
        }

        @Override
        public boolean supportsMappedWrites() {
            return delegate().supportsMappedWrites();
        }

        @Override
        public WritableFile newMappedWritableFile(Path p) throws IOException {
            return counted(p, delegate().newMappedWritableFile(p));
        }

        private WritableFile counted(Path p, WritableFile f) {
            if (!p.getFileName().toString().endsWith(".log")) {
                return f;
            }
            return new ForwardingWritableFile(f) {
                @Override
                public void append(byte[] b, int off, int len) throws IOException {
                    super.append(b, off, len);
                    appended.addAndGet(len);
                }
            };
        }
    }

    @ParameterizedTest
    @EnumSource(SyncMode.class)
    void walBytesAreTheBytesAppendedToLogs(SyncMode mode) throws Exception {
        long seed = TestKeys.seed("WalBytesTest." + mode);
        for (boolean mmapWal : new boolean[] {true, false}) {
            LogBytes fs = new LogBytes(FileSystem.disk());
            Options o = Options.defaults()
                    .fileSystem(fs)
                    .syncMode(mode)
                    .useMmapWal(mmapWal)
                    .writeBufferSize(64 << 10);
            Path d = dir.resolve(mode + "-" + mmapWal);
            try (Db db = Db.open(d, o)) {
                Thread[] writers = new Thread[2];
                Throwable[] failure = new Throwable[1];
                for (int t = 0; t < writers.length; t++) {
                    int id = t;
                    writers[t] = new Thread(() -> {
                        Random rnd = new Random(seed + id);
                        try {
                            for (int i = 0; i < 600; i++) {
                                db.put(TestKeys.key(id * 100_000L + i), TestKeys.value(rnd, 700));
                            }
                        } catch (Throwable e) {
                            failure[0] = e;
                        }
                    });
                    writers[t].start();
                }
                for (Thread w : writers) {
                    w.join();
                }
                assertThat(failure[0]).as("seed %d", seed).isNull();
                Stats s = db.stats();
                assertThat(s.flushes())
                        .as("memtable switches happened (seed %d)", seed)
                        .isPositive();
                assertThat(s.walBytesWritten())
                        .as("mode %s, mmap %s, seed %d", mode, mmapWal, seed)
                        .isPositive()
                        .isEqualTo(fs.appended.get());
                assertThat(s.walBytesWritten())
                        .as("framing on top of the user bytes")
                        .isGreaterThan(s.userBytesWritten());
                assertThat(s.toString())
                        .contains("wal: records " + s.walRecords() + " (" + s.walBytesWritten() + " bytes)");
            }
        }
    }
}

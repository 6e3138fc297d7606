package io.bloomkv.engine.fs;

import static io.bloomkv.engine.fs.PosixFaults.onPreparer;
import static io.bloomkv.engine.fs.PosixFaults.openWith;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.record.LogReader;
import io.bloomkv.engine.internal.record.LogWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MappedWritableFile} when a system call fails: an mmap that fails is an {@link IOException} (so the WAL writer stops and the log stays readable), and a close on an interrupted thread still cuts the file to its bytes. Failures and delays are injected with {@link PosixFaults}.
 */
@EnabledIf(
        value = "io.bloomkv.engine.fs.MappedWritableFile#supported",
        disabledReason = "mapped writes need Linux with native access")
class MappedWritableFileFailureTest {
    @TempDir
    Path dir;

    /**
     * Chronicle's {@code mmap} does not return -1 on failure: it throws {@code PosixRuntimeException}. When the writer
     * maps a region itself (none prepared, or the preparation failed) and the mmap fails (ENOMEM: vm.max_map_count or
     * an address-space limit), the append throws that unchecked exception, not the {@link IOException} that
     * {@code map} promises. The {@code a == -1 || a == 0} test never sees a failure.
     */
    @Test
    void aFailedMmapOfTheWritersOwnRegionIsAnIOException() throws Exception {
        Path p = dir.resolve("mmapfail.log");
        // every mmap of this file fails, really, in Chronicle: it is asked for an invalid descriptor (EBADF)
        MappedWritableFile f = openWith(p, (method, args, real) -> {
            if (method.equals("mmap") && args.length == 6) {
                return real.mmap((long) args[0], (long) args[1], (int) args[2], (int) args[3], -1, (long) args[5]);
            }
            return null;
        });
        long before = MappedWritableFile.liveMappings();
        try {
            assertThatThrownBy(() -> f.append(new byte[100]))
                    .as("a failed mmap fails the append with an IOException, as a full disk does")
                    .isInstanceOf(IOException.class);
        } finally {
            f.close();
        }
        assertThat(MappedWritableFile.liveMappings()).isEqualTo(before);
    }

    /**
     * The consequence through a {@link LogWriter}: it must not go on appending records behind a record cut at the
     * region boundary (a FIRST fragment without its LAST), or the closed log would not read back (corruption) though
     * every record after the failure was acknowledged. A transient mmap failure (one call) at the second region is
     * enough. Whether the writer refused the records after the failure or went on, the log reads back as exactly the
     * records acknowledged, in order (a cut record is a torn tail, dropped). The loop is bounded: a writer that
     * neither refuses nor grows the log fails the test instead of spinning until the timeout.
     */
    @Test
    void aLogWithATransientMmapFailureReadsBackOrRefusesFurtherRecords() throws Exception {
        Path p = dir.resolve("000009.log");
        AtomicInteger writerFailures = new AtomicInteger();
        MappedWritableFile f = openWith(p, (method, args, real) -> {
            if (method.equals("mmap") && args.length == 6 && (long) args[5] == MappedWritableFile.FIRST_REGION) {
                if (onPreparer()) {
                    // the preparation of the second region fails too (it is caught there; the writer maps it)
                    return real.mmap((long) args[0], (long) args[1], (int) args[2], (int) args[3], -1, (long) args[5]);
                }
                if (writerFailures.getAndIncrement() == 0) {
                    return real.mmap((long) args[0], (long) args[1], (int) args[2], (int) args[3], -1, (long) args[5]);
                }
            }
            return null;
        });
        LogWriter w = new LogWriter(f);
        List<byte[]> acknowledged = new ArrayList<>();
        List<Throwable> unchecked = new ArrayList<>();
        boolean refused = false;
        int recordSize = 1000;
        // enough records to fill two regions, and as many again for records that fail without refusing the rest
        int maxRecords = 2 * (int) (2L * MappedWritableFile.FIRST_REGION / recordSize);
        try {
            for (int i = 0; i < maxRecords && w.size() < 2L * MappedWritableFile.FIRST_REGION; i++) {
                byte[] r = new byte[recordSize];
                Arrays.fill(r, (byte) (i + 1));
                try {
                    w.addRecord(r);
                    acknowledged.add(r);
                } catch (IOException e) {
                    refused = true; // LogWriter refuses the rest: the log ends at the cut record, as a torn tail
                    break;
                } catch (RuntimeException e) {
                    unchecked.add(e); // not an IOException: this record failed, the next one is tried
                }
            }
        } finally {
            w.close();
        }
        assertThat(writerFailures.get())
                .as("the writer's own mmap of the second region failed")
                .isPositive();
        assertThat(refused || w.size() >= 2L * MappedWritableFile.FIRST_REGION)
                .as(
                        "the writer refused further records or filled two regions (refused %s, size %d, unchecked %s)",
                        refused, w.size(), unchecked)
                .isTrue();
        assertThat(acknowledged).as("records before the second region").isNotEmpty();
        List<byte[]> read = new ArrayList<>();
        try (LogReader r = new LogReader(FileSystem.disk().newReadableFile(p))) {
            byte[] rec;
            while ((rec = r.readRecord()) != null) {
                read.add(rec);
            }
        }
        assertThat(read.stream().map(MappedWritableFileFailureTest::describe))
                .as(
                        "the log reads back as the acknowledged records (refused %s, unchecked failures %s)",
                        refused, unchecked)
                .containsExactlyElementsOf(acknowledged.stream()
                        .map(MappedWritableFileFailureTest::describe)
                        .toList());
    }

    /** A record, short enough for a failure message: its length, first byte and hash. */
    private static String describe(byte[] r) {
        return r.length + " bytes, first " + (r.length == 0 ? "-" : r[0]) + ", hash " + Arrays.hashCode(r);
    }

    /**
     * Close on a thread with its interrupt status set (as {@code Preparation.take} deliberately leaves it when the
     * writer was interrupted while waiting): {@code FileChannel.truncate} is interruptible, so it closes the channel
     * and throws ClosedByInterruptException; the closed file keeps its allocated zero tail instead of being cut to
     * the bytes appended (FORMAT.md: "is cut to its records when it is closed").
     */
    @Test
    void closeOnAnInterruptedThreadStillCutsTheFileToItsBytes() throws Exception {
        Path p = dir.resolve("interrupted-close.log");
        MappedWritableFile f = MappedWritableFile.open(p);
        long before = MappedWritableFile.liveMappings();
        f.append(new byte[] {1, 2, 3});
        Throwable[] thrown = {null};
        Thread t = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                f.close();
            } catch (Throwable e) {
                thrown[0] = e;
            }
        });
        t.start();
        t.join();
        assertThat(MappedWritableFile.liveMappings()).isLessThanOrEqualTo(before);
        assertThat(Files.size(p))
                .as("closed: cut to its bytes (close threw %s)", thrown[0])
                .isEqualTo(3);
    }

    /**
     * The same through a database: one failed mmap of a WAL region (ENOMEM at the process's mapping limit, which the
     * engine's mapped table reads approach) fails one put with an unchecked PosixRuntimeException; the pipeline sets no
     * background error (it turns only IOExceptions into one), later puts are acknowledged into the damaged WAL, and the
     * reopen does not recover them.
     */
    @Test
    void aDatabaseReopensWithEveryAcknowledgedWriteAfterAFailedWalMmap() throws Exception {
        AtomicInteger writerFailures = new AtomicInteger();
        FileSystem fs = new ForwardingFileSystem(FileSystem.disk()) {
            @Override
            public boolean supportsMappedWrites() {
                return true;
            }

            @Override
            public WritableFile newMappedWritableFile(Path p) throws IOException {
                try {
                    return openWith(p, (method, args, real) -> {
                        if (method.equals("mmap")
                                && args.length == 6
                                && (long) args[5] == MappedWritableFile.FIRST_REGION
                                && (onPreparer() || writerFailures.getAndIncrement() == 0)) {
                            return real.mmap(
                                    (long) args[0], (long) args[1], (int) args[2], (int) args[3], -1, (long) args[5]);
                        }
                        return null;
                    });
                } catch (IOException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IOException(e);
                }
            }
        };
        Path d = dir.resolve("db");
        List<Integer> acknowledged = new ArrayList<>();
        Throwable failedPut = null;
        try (io.bloomkv.engine.Db db = io.bloomkv.engine.Db.open(
                d, io.bloomkv.engine.Options.defaults().fileSystem(fs))) {
            for (int i = 0; i < 200; i++) {
                byte[] v = new byte[1000];
                Arrays.fill(v, (byte) i);
                try {
                    db.put(("k" + i).getBytes(), v);
                    acknowledged.add(i);
                } catch (RuntimeException e) {
                    if (failedPut == null) {
                        failedPut = e;
                    }
                }
            }
        }
        assertThat(writerFailures.get())
                .as("the WAL's own mmap of its second region failed")
                .isPositive();
        try (io.bloomkv.engine.Db db = io.bloomkv.engine.Db.open(d, io.bloomkv.engine.Options.defaults())) {
            for (int i : acknowledged) {
                assertThat(db.get(("k" + i).getBytes()))
                        .as("acknowledged put %d after the failed one (%s)", i, failedPut)
                        .isNotNull();
            }
        }
    }

    /**
     * Where jnr-ffi cannot load, Chronicle's {@code PosixAPI.posix()} returns a binding whose every call throws
     * (NoOpPosixAPI) instead of failing: the probe must call it, or mapped writes would be reported supported and the
     * first log's open would throw an unchecked exception instead of falling back to {@code write(2)}.
     */
    @Test
    void aBindingWithoutItsNativeStubIsNotUsable() {
        assertThat(MappedWritableFile.usable(net.openhft.posix.PosixAPI.posix()))
                .isTrue();
        assertThat(MappedWritableFile.usable(new net.openhft.posix.internal.noop.NoOpPosixAPI("jnr-ffi not loaded")))
                .isFalse();
    }
}

package io.bloomkv.engine;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Random;

/**
 * The child process of {@link CrashKillTest}: writes keys {@code start, start+1, ...} with
 * {@link SyncMode#EVERY_WRITE}, or the sync mode given (values from {@link #valueOf}), some in batches, and prints
 * "ack N" once the write of key N has returned. Runs until killed.
 * Arguments: directory, first key id, seed[, sync mode[, "paused"]]. Paused: background work is paused
 * ({@link Db#pauseBackgroundWork}) once the database is open, so the writes stall once the memtables are full; the
 * child prints "stalled" then (a write stall event).
 */
public final class CrashWriter {
    private CrashWriter() {}

    static Options options() {
        return options(SyncMode.EVERY_WRITE);
    }

    static Options options(SyncMode sync) {
        return Options.defaults()
                .syncMode(sync)
                .writeBufferSize(32 << 10)
                .targetFileSize(32 << 10)
                .maxBytesForLevelBase(128 << 10)
                .l0CompactionTrigger(2);
    }

    static byte[] valueOf(long id) {
        Random r = new Random(id * 0x9E3779B97F4A7C15L);
        byte[] v = new byte[20 + r.nextInt(80)];
        r.nextBytes(v);
        return v;
    }

    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        long id = Long.parseLong(args[1]);
        Random rnd = new Random(Long.parseLong(args[2]));
        SyncMode sync = args.length > 3 ? SyncMode.valueOf(args[3]) : SyncMode.EVERY_WRITE;
        boolean paused = args.length > 4 && args[4].equals("paused");
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false);
        Options options = options(sync);
        if (paused) {
            options.listeners(new EventListener() {
                @Override
                public void onWriteStallChanged(WriteStallInfo info) {
                    if (info.stalled()) {
                        synchronized (out) {
                            out.println("stalled");
                            out.flush();
                        }
                    }
                }
            });
        }
        try (Db db = Db.open(dir, options)) {
            if (paused) {
                db.pauseBackgroundWork();
            }
            out.println("open");
            out.flush();
            while (true) {
                if (rnd.nextInt(10) == 0) {
                    int n = 1 + rnd.nextInt(10);
                    WriteBatch b = new WriteBatch();
                    for (int i = 0; i < n; i++) {
                        b.put(TestKeys.key(id + i), valueOf(id + i));
                    }
                    db.write(b);
                    synchronized (out) {
                        for (int i = 0; i < n; i++) {
                            out.println("ack " + (id + i));
                        }
                        out.flush();
                    }
                    id += n;
                } else {
                    db.put(TestKeys.key(id), valueOf(id));
                    synchronized (out) {
                        out.println("ack " + id);
                        out.flush();
                    }
                    id++;
                }
            }
        }
    }
}

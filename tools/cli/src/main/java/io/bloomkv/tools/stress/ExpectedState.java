package io.bloomkv.tools.stress;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The expected state of a stress run (RocksDB db_stress's "expected state"), kept in a memory-mapped
 * file that survives the process: a kill -9 loses nothing written to a shared mapping (the page
 * cache keeps it). Per key: the committed state (the last acknowledged write) and, while a write is
 * in flight, a pending state and the id of the write, so that after a crash the database may hold
 * either (an unacknowledged write may or may not have landed) but nothing else, and the keys of one
 * batch must all show the old or all the new state.
 *
 * <p>A state is {@code version << 1 | exists}: version 0 (absent) means never written; every write of
 * a key takes the next version, and its value is {@link StressValue#of(int, long)}.
 *
 * <p>Layout (little-endian): a 4096-byte header (magic "BKVSTRS1", key count, then per thread slot
 * 0..63 its operation and acknowledged-write counters; from byte 2048 per thread slot its key-range deletions, at byte
 * 2560 the memtable rewrites counted by the runs; files made before these counters read them as 0), then 24 bytes per key: committed, pending
 * (bit 63 set while pending), pending write id. Each key has one writer thread at a time (keys are
 * partitioned by thread), so the slots need no locks; readers of another thread's keys use them only
 * to bound what they may see.
 */
public final class ExpectedState implements AutoCloseable {
    static final long MAGIC = 0x315352545356_4B42L; // "BKVSTRS1" little-endian
    static final int HEADER = 4096;
    static final int MAX_THREADS = 64;
    private static final int SLOT = 24;
    static final long PENDING = 1L << 63;

    private final Path path;
    private final FileChannel channel;
    private final MappedByteBuffer map;
    private final int keys;

    private ExpectedState(Path path, FileChannel channel, MappedByteBuffer map, int keys) {
        this.path = path;
        this.channel = channel;
        this.map = map;
        this.keys = keys;
    }

    /**
     * Opens the expected-state file {@code path}, creating it (every key never written) when it does not
     * exist. An existing file must be for {@code keys} keys.
     */
    public static ExpectedState open(Path path, int keys) throws IOException {
        if (keys < 1 || keys > 50_000_000) {
            throw new IllegalArgumentException("keys must be in [1, 50000000]: " + keys);
        }
        boolean exists = Files.exists(path) && Files.size(path) > 0;
        long size = HEADER + (long) SLOT * keys;
        FileChannel ch =
                FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            if (exists && ch.size() != size) {
                throw new IllegalArgumentException(path + " is an expected state of " + ((ch.size() - HEADER) / SLOT)
                        + " keys, not " + keys + " (use the same --keys, or a new --expected file)");
            }
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
            map.order(ByteOrder.LITTLE_ENDIAN);
            if (exists) {
                if (map.getLong(0) != MAGIC) {
                    throw new IllegalArgumentException(path + " is not an expected-state file");
                }
            } else {
                map.putLong(0, MAGIC);
                map.putInt(8, keys);
                map.force();
            }
            return new ExpectedState(path, ch, map, keys);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    public int keys() {
        return keys;
    }

    public Path path() {
        return path;
    }

    private static int at(int key) {
        return HEADER + key * SLOT;
    }

    public long committed(int key) {
        return map.getLong(at(key));
    }

    /** The pending state with {@link #PENDING} cleared, or -1 when no write of {@code key} is in flight. */
    public long pending(int key) {
        long p = map.getLong(at(key) + 8);
        return (p & PENDING) == 0 ? -1 : p & ~PENDING;
    }

    public long pendingWrite(int key) {
        return map.getLong(at(key) + 16);
    }

    /** Marks a write of {@code state} to {@code key} in flight, as part of write {@code writeId}. */
    public void setPending(int key, long state, long writeId) {
        map.putLong(at(key) + 16, writeId);
        map.putLong(at(key) + 8, state | PENDING);
    }

    /** The write of {@code key} landed (or, with {@code state} = the committed one, resolves to it): no longer pending. */
    public void commit(int key, long state) {
        map.putLong(at(key), state);
        map.putLong(at(key) + 8, 0);
        map.putLong(at(key) + 16, 0);
    }

    public static long state(long version, boolean exists) {
        return version << 1 | (exists ? 1 : 0);
    }

    public static long version(long state) {
        return state >>> 1;
    }

    public static boolean exists(long state) {
        return (state & 1) != 0;
    }

    /** Adds to thread slot {@code thread}'s counters (operations done, writes acknowledged). */
    public void count(int thread, long ops, long acked) {
        int off = 64 + (thread % MAX_THREADS) * 16;
        map.putLong(off, map.getLong(off) + ops);
        map.putLong(off + 8, map.getLong(off + 8) + acked);
    }

    /** Operations counted in thread slot {@code thread} over every run on this file. */
    public long threadOps(int thread) {
        return map.getLong(64 + (thread % MAX_THREADS) * 16);
    }

    /** Adds one to thread slot {@code thread}'s key-range deletions. */
    public void countKeyRangeDeletion(int thread) {
        int off = 2048 + (thread % MAX_THREADS) * 8;
        map.putLong(off, map.getLong(off) + 1);
    }

    /** Key-range deletions counted over every run on this file. */
    public long totalKeyRangeDeletions() {
        long n = 0;
        for (int t = 0; t < MAX_THREADS; t++) {
            n += map.getLong(2048 + t * 8);
        }
        return n;
    }

    /** Adds {@code n} memtable rewrites (one caller per run: the run's main thread). */
    public void addMemtableRewrites(long n) {
        map.putLong(2560, map.getLong(2560) + n);
    }

    /** Memtable rewrites counted over every run on this file. */
    public long totalMemtableRewrites() {
        return map.getLong(2560);
    }

    /** Operations counted over every run on this file. */
    public long totalOps() {
        long n = 0;
        for (int t = 0; t < MAX_THREADS; t++) {
            n += map.getLong(64 + t * 16);
        }
        return n;
    }

    /** Acknowledged writes counted over every run on this file. */
    public long totalAcked() {
        long n = 0;
        for (int t = 0; t < MAX_THREADS; t++) {
            n += map.getLong(64 + t * 16 + 8);
        }
        return n;
    }

    @Override
    public void close() throws IOException {
        map.force();
        channel.close();
    }
}

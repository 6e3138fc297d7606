package io.bloomkv.bench.range;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.Stats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * Bounded seeks into short ranges, the workloads of issue 41's range filters: {@code seekempty} (ranges 2..64 ids wide
 * that hold no key, inside every table's key range) and {@code seekshort} (ranges 2..64 ids wide starting at a key,
 * holding about half as many keys), on three engines loaded with the same keys: bloomkv with range filters
 * ({@code Options.rangeFilterBitsPerKey}), bloomkv without, and RocksDB with the best it has for these queries: a
 * 11-byte fixed prefix extractor with its prefix Bloom (every range lies within one 11-byte prefix) and
 * {@code iterate_upper_bound}.
 *
 * <p>Layout: 12-byte keys, a 4-byte tenant tag then the id (big-endian); id block b = id >>> 8 (the 11-byte prefix)
 * holds the 64 ids b·256 + 2j, j &lt; 64; ids b·256 + 128 .. b·256 + 255 are never written, so an empty range shares
 * its prefix with 64 keys and only a range filter can rule a table out. Each key's value is {@link #value}. Engines run
 * in turn, each phase {@code rounds} times alternating; the report gives the median ops/s and the spread (min..max)
 * per engine.
 *
 * <p>Every answer is checked entry by entry ({@link RangeCheck}): a seek hands out each entry it steps over, its key
 * and its value, and must hand out exactly the loaded keys of its range, in order, each with its loaded value. A wrong
 * answer stops the run ({@link #pass}).
 *
 * <pre>java -jar bloomkv-bench.jar rangeseek [--num=1000000] [--seeks=100000] [--rounds=3] [--range-bits=16]
 *      [--bits=10] [--cache-mb=8] [--dir=/tmp/rangeseek] [--seed=1]</pre>
 */
public final class RangeSeekBench {
    static final int KEY_SIZE = 12;
    static final int PER_BLOCK = 64;
    /** The widest range, in ids (a range holds at most this many keys, and at most half as many loaded ones). */
    static final int MAX_WIDTH = 64;
    /** Bytes of each loaded value. */
    static final int VALUE_SIZE = 100;
    /** Tenant tag and the id's first 7 bytes: one prefix per block of 256 ids. */
    static final int PREFIX = 11;

    /** One engine under test. */
    interface Engine extends AutoCloseable {
        String name();

        void put(byte[] k, byte[] v) throws IOException;

        void settle() throws IOException;

        /**
         * A bounded seek to {@code lo} with the exclusive upper bound {@code hi}, stepping over the entries in
         * [lo, hi) and handing out each one's key and value into {@code keysOut[i]}, {@code valuesOut[i]}, at most
         * {@code keysOut.length} of them (it stops there). Returns how many it handed out. Each entry's key and value
         * are fetched once (a copy each; for RocksDB a JNI crossing each).
         */
        int scan(byte[] lo, byte[] hi, byte[][] keysOut, byte[][] valuesOut) throws IOException;

        @Override
        void close() throws IOException;
    }

    /** A 4-byte tenant tag, then the id big-endian (so a range of ids is a range of keys). */
    public static byte[] key(long id) {
        byte[] k = new byte[KEY_SIZE];
        k[0] = 'b';
        k[1] = 'k';
        k[2] = 'v';
        k[3] = '1';
        for (int i = 0; i < 8; i++) {
            k[4 + i] = (byte) (id >>> (56 - 8 * i));
        }
        return k;
    }

    /** A seek bound at an id: its key. */
    static byte[] bound(long id) {
        return key(id);
    }

    /** The id of load index {@code j}: strictly increasing in {@code j}. */
    static long loadedId(long j) {
        return ((j / PER_BLOCK) << 8) + 2 * (j % PER_BLOCK);
    }

    /** The value loaded for {@code id}: {@link #VALUE_SIZE} bytes, the first the id's low byte, the rest zeros. */
    static byte[] value(long id) {
        byte[] v = new byte[VALUE_SIZE];
        v[0] = (byte) id;
        return v;
    }

    /** Writes load indices {@code 0 .. num-1} (key and value of each id) into {@code e}, then settles it. */
    static void load(Engine e, long num) throws IOException {
        for (long j = 0; j < num; j++) {
            long id = loadedId(j);
            e.put(key(id), value(id));
        }
        e.settle();
    }

    static final class BloomKv implements Engine {
        private final Db db;
        private final String name;

        BloomKv(Path dir, double rangeBits, double bits, long cacheBytes) {
            this.name = rangeBits > 0 ? "bloomkv+range" + (int) rangeBits : "bloomkv";
            this.db = Db.open(
                    dir,
                    Options.defaults()
                            .bitsPerKey(bits)
                            .blockCacheSize(cacheBytes)
                            .rangeFilterBitsPerKey(rangeBits));
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void put(byte[] k, byte[] v) {
            db.put(k, v);
        }

        @Override
        public void settle() {
            db.flush();
            db.waitForBackgroundWork();
        }

        @Override
        public int scan(byte[] lo, byte[] hi, byte[][] keysOut, byte[][] valuesOut) {
            int n = 0;
            try (DbIterator it =
                    db.iterator(io.bloomkv.engine.ReadOptions.defaults().iterateUpperBound(hi))) {
                for (it.seek(lo); n < keysOut.length && it.valid(); it.next()) {
                    keysOut[n] = it.key();
                    valuesOut[n] = it.value();
                    n++;
                }
            }
            return n;
        }

        Stats stats() {
            return db.stats();
        }

        @Override
        public void close() {
            db.close();
        }
    }

    static final class Rocks implements Engine {
        private final RocksDB db;
        private final org.rocksdb.Options options;
        private final LRUCache cache;
        private final BloomFilter filter;

        Rocks(Path dir, double bits, long cacheBytes) throws IOException {
            RocksDB.loadLibrary();
            cache = new LRUCache(cacheBytes);
            filter = new BloomFilter(bits);
            BlockBasedTableConfig t = new BlockBasedTableConfig()
                    .setBlockCache(cache)
                    .setFilterPolicy(filter)
                    .setWholeKeyFiltering(true)
                    .setFormatVersion(6);
            options = new org.rocksdb.Options()
                    .setCreateIfMissing(true)
                    .setCompressionType(CompressionType.NO_COMPRESSION)
                    .useFixedLengthPrefixExtractor(PREFIX)
                    .setTableFormatConfig(t);
            try {
                db = RocksDB.open(options, dir.toString());
            } catch (RocksDBException e) {
                throw new IOException(e);
            }
        }

        @Override
        public String name() {
            return "rocksdb+prefix";
        }

        @Override
        public void put(byte[] k, byte[] v) throws IOException {
            try {
                db.put(k, v);
            } catch (RocksDBException e) {
                throw new IOException(e);
            }
        }

        @Override
        public void settle() throws IOException {
            try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
                db.flush(fo);
                db.compactRange();
            } catch (RocksDBException e) {
                throw new IOException(e);
            }
        }

        @Override
        public int scan(byte[] lo, byte[] hi, byte[][] keysOut, byte[][] valuesOut) throws IOException {
            int n = 0;
            try (Slice upper = new Slice(hi);
                    ReadOptions ro =
                            new ReadOptions().setIterateUpperBound(upper).setPrefixSameAsStart(true);
                    RocksIterator it = db.newIterator(ro)) {
                for (it.seek(lo); n < keysOut.length && it.isValid(); it.next()) {
                    keysOut[n] = it.key();
                    valuesOut[n] = it.value();
                    n++;
                }
                it.status();
            } catch (RocksDBException e) {
                throw new IOException(e);
            }
            return n;
        }

        @Override
        public void close() {
            db.close();
            options.close();
            filter.close();
            cache.close();
        }
    }

    /** The ranges of a phase: range {@code i} is ids [loId[i], hiId[i]), asked as keys [lo[i], hi[i]). */
    record Ranges(long[] loId, long[] hiId, byte[][] lo, byte[][] hi) {
        /** The ranges of ids [loId[i], hiId[i]), their bounds made ahead of the timed loop. */
        static Ranges of(long[] loId, long[] hiId) {
            byte[][] lo = new byte[loId.length][];
            byte[][] hi = new byte[loId.length][];
            for (int i = 0; i < loId.length; i++) {
                lo[i] = bound(loId[i]);
                hi[i] = bound(hiId[i]);
            }
            return new Ranges(loId, hiId, lo, hi);
        }

        int count() {
            return loId.length;
        }
    }

    /**
     * {@code count} ranges 2..{@link #MAX_WIDTH} ids wide in the first {@code num / PER_BLOCK} blocks, each inside
     * one block: {@code empty}, in a block's never-written half (they hold no key); else starting at a loaded key
     * (they hold about half as many keys as ids).
     */
    static Ranges ranges(boolean empty, long num, int count, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        long blocks = num / PER_BLOCK;
        long[] lo = new long[count];
        long[] hi = new long[count];
        for (int i = 0; i < count; i++) {
            long b = rnd.nextLong(blocks);
            int w = 2 + rnd.nextInt(MAX_WIDTH - 1);
            long start;
            if (empty) {
                start = (b << 8) + 128 + rnd.nextInt(128 - w + 1);
            } else {
                int j = rnd.nextInt(PER_BLOCK - w / 2);
                start = (b << 8) + 2L * j;
            }
            lo[i] = start;
            hi[i] = start + w;
        }
        return Ranges.of(lo, hi);
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();

    /**
     * One pass: ops/s, and this thread's CPU time and heap allocation per seek (the JVM's per-thread accounting, which
     * other tenants of a loaded machine distort far less than wall-clock time); throws if an answer is wrong.
     */
    record Pass(double ops, double cpuNsPerSeek, double allocBytesPerSeek) {}

    /**
     * Runs every range of {@code r} on {@code e}, timed, and checks each answer entry by entry ({@link RangeCheck})
     * inside the timed loop, right after its seek: the same check, at the same place, for all three engines. So the
     * ops/s, CPU and allocation per seek include handing out each entry (a copy of its key and of its value) and
     * checking it (a comparison of 12 key bytes and 100 value bytes, no allocation); figures from before the check
     * (runs that only counted entries) paid neither.
     *
     * @throws IllegalStateException naming the engine, the range's index and ids, and what differed, at the first
     *     wrong answer
     */
    static Pass pass(Engine e, Ranges r, long num) throws IOException {
        byte[][] ks = new byte[MAX_WIDTH + 1][]; // room for every id of a range and one more: an extra entry shows
        byte[][] vs = new byte[ks.length][];
        int count = r.count();
        long tid = Thread.currentThread().getId();
        long c0 = THREADS.getCurrentThreadCpuTime();
        long a0 = THREADS.getThreadAllocatedBytes(tid);
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            int n = e.scan(r.lo()[i], r.hi()[i], ks, vs);
            String wrong = RangeCheck.wrong(ks, vs, n, r.loId()[i], r.hiId()[i], num);
            if (wrong != null) {
                throw new IllegalStateException(
                        e.name() + ": range " + i + " (ids [" + r.loId()[i] + ", " + r.hiId()[i] + ")): " + wrong);
            }
        }
        long t1 = System.nanoTime();
        long c1 = THREADS.getCurrentThreadCpuTime();
        long a1 = THREADS.getThreadAllocatedBytes(tid);
        return new Pass(count / ((t1 - t0) / 1e9), (double) (c1 - c0) / count, (double) (a1 - a0) / count);
    }

    /** One row of the report. */
    record Result(
            String workload,
            String engine,
            double medianOps,
            double minOps,
            double maxOps,
            double blockReadsPerSeek,
            double rangeChecksPerSeek,
            double rangeUsefulPerSeek,
            double medianCpuNs,
            double minCpuNs,
            double maxCpuNs,
            double medianAllocBytes) {}

    public static List<Result> run(
            Path dir, long num, int seeks, int rounds, double rangeBits, double bits, long cacheBytes, long seed)
            throws IOException {
        Files.createDirectories(dir);
        List<Engine> engines = new ArrayList<>();
        try {
            engines.add(new BloomKv(dir.resolve("bloomkv-range"), rangeBits, bits, cacheBytes));
            engines.add(new BloomKv(dir.resolve("bloomkv"), 0, bits, cacheBytes));
            engines.add(new Rocks(dir.resolve("rocksdb"), bits, cacheBytes));
            for (Engine e : engines) {
                load(e, num);
            }
            List<Result> out = new ArrayList<>();
            for (String w : new String[] {"seekempty", "seekshort"}) {
                Ranges warm = ranges(w.equals("seekempty"), num, Math.max(1, seeks / 10), seed ^ 0x5EED);
                for (Engine e : engines) {
                    pass(e, warm, num);
                }
                double[][] ops = new double[engines.size()][rounds];
                double[][] cpu = new double[engines.size()][rounds];
                double[][] alloc = new double[engines.size()][rounds];
                long[] reads = new long[engines.size()];
                long[] useful = new long[engines.size()];
                long[] checks = new long[engines.size()];
                for (int round = 0; round < rounds; round++) {
                    Ranges r = ranges(w.equals("seekempty"), num, seeks, seed + 31L * round + w.hashCode());
                    for (int k = 0; k < engines.size(); k++) {
                        Engine e = engines.get(k);
                        Stats before = e instanceof BloomKv b ? b.stats() : null;
                        Pass p = pass(e, r, num);
                        ops[k][round] = p.ops();
                        cpu[k][round] = p.cpuNsPerSeek();
                        alloc[k][round] = p.allocBytesPerSeek();
                        if (before != null) {
                            Stats after = ((BloomKv) e).stats();
                            reads[k] += after.blockReads() - before.blockReads();
                            useful[k] += after.rangeFilterUseful() - before.rangeFilterUseful();
                            checks[k] += after.rangeFilterChecks() - before.rangeFilterChecks();
                        }
                    }
                }
                for (int k = 0; k < engines.size(); k++) {
                    double[] s = ops[k].clone();
                    Arrays.sort(s);
                    double[] c = cpu[k].clone();
                    Arrays.sort(c);
                    double[] a = alloc[k].clone();
                    Arrays.sort(a);
                    boolean isBloom = engines.get(k) instanceof BloomKv;
                    out.add(new Result(
                            w,
                            engines.get(k).name(),
                            s[s.length / 2],
                            s[0],
                            s[s.length - 1],
                            isBloom ? (double) reads[k] / ((long) seeks * rounds) : Double.NaN,
                            isBloom ? (double) checks[k] / ((long) seeks * rounds) : Double.NaN,
                            isBloom ? (double) useful[k] / ((long) seeks * rounds) : Double.NaN,
                            c[c.length / 2],
                            c[0],
                            c[c.length - 1],
                            a[a.length / 2]));
                }
            }
            return out;
        } finally {
            for (Engine e : engines) {
                e.close();
            }
        }
    }

    public static void main(String[] args) throws IOException {
        long num = 1_000_000;
        int seeks = 100_000;
        int rounds = 3;
        double rangeBits = 16;
        double bits = 10;
        long cacheMb = 8;
        long seed = 1;
        Path dir = Path.of(System.getProperty("java.io.tmpdir"), "bloomkv-rangeseek");
        for (String a : args) {
            String v = a.substring(a.indexOf('=') + 1);
            switch (a.substring(0, Math.max(0, a.indexOf('=')))) {
                case "--num" -> num = Long.parseLong(v);
                case "--seeks" -> seeks = Integer.parseInt(v);
                case "--rounds" -> rounds = Integer.parseInt(v);
                case "--range-bits" -> rangeBits = Double.parseDouble(v);
                case "--bits" -> bits = Double.parseDouble(v);
                case "--cache-mb" -> cacheMb = Long.parseLong(v);
                case "--seed" -> seed = Long.parseLong(v);
                case "--dir" -> dir = Path.of(v);
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        if (Files.exists(dir)) {
            throw new IllegalArgumentException(dir + " exists: give a fresh --dir");
        }
        System.out.printf(
                Locale.ROOT,
                "rangeseek: %d keys, %d seeks x %d rounds per engine, range filters at %.0f bits/key, "
                        + "point filters %.0f bits/key, block caches %d MiB%n",
                num,
                seeks,
                rounds,
                rangeBits,
                bits,
                cacheMb);
        List<Result> rs = run(dir, num, seeks, rounds, rangeBits, bits, cacheMb << 20, seed);
        System.out.printf(
                Locale.ROOT,
                "%-10s %-16s %12s %24s %18s %18s %18s %14s %20s %14s%n",
                "workload",
                "engine",
                "ops/s (med)",
                "spread (min..max)",
                "block reads/seek",
                "range checks/seek",
                "range useful/seek",
                "cpu ns/seek",
                "cpu spread",
                "alloc B/seek");
        for (Result r : rs) {
            System.out.printf(
                    Locale.ROOT,
                    "%-10s %-16s %12.0f %11.0f..%-12.0f %18.3f %18.3f %18.3f %14.0f %9.0f..%-10.0f %14.0f%n",
                    r.workload(),
                    r.engine(),
                    r.medianOps(),
                    r.minOps(),
                    r.maxOps(),
                    r.blockReadsPerSeek(),
                    r.rangeChecksPerSeek(),
                    r.rangeUsefulPerSeek(),
                    r.medianCpuNs(),
                    r.minCpuNs(),
                    r.maxCpuNs(),
                    r.medianAllocBytes());
        }
    }
}

package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * {@link DbIterator#refresh()} and {@link DbIterator#refresh(Snapshot)} against rocksdbjni's {@code
 * RocksIterator.refresh()} and {@code refresh(Snapshot)} (half the refreshes, when a snapshot is open, go to a random
 * one of them, older or newer than what the iterator read): one seeded history of puts,
 * deletes, range deletions, flushes, range compactions and snapshots, with up to five iterators held open on each side
 * (at the latest state or at a snapshot, with or without bounds, some in prefix mode), refreshed at random points
 * between the writes and positioned and walked in both directions; every position is compared (key and value, or not
 * valid), and after each refresh both iterators must be not valid. A prefix-mode iterator is positioned by seeks of a
 * target of at least the prefix length and compared with RocksDB's total-order iterator confined to the target's
 * prefix (as in {@link RocksMixedHistoryDifferentialTest}). At the end, with the iterators and snapshots closed: no
 * iterator open, one live Version, every table file on disk a live table, and (after the close) no table reader alive.
 *
 * <p>Replay with -Dbloomkv.seed=N; -Dbloomkv.modelOps=N for longer histories (default 1500 operations).
 */
@ExtendWith(NoTableLeak.class)
class IteratorRefreshDifferentialTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 1500);
    private static final int PREFIX = 2;
    private static final byte[] GROUPS = {0x00, 0x41, 0x7f, (byte) 0x80, (byte) 0xff};

    @Test
    void refreshedIteratorsMatchRocksDb() throws Exception {
        new Run(SmallLevels.options().prefixLength(PREFIX), "plain").run();
    }

    /** Range filters on: bounded positionings of the refreshed view rule tables out before reading them. */
    @Test
    void refreshedIteratorsWithRangeFiltersMatchRocksDb() throws Exception {
        new Run(SmallLevels.options().prefixLength(PREFIX).rangeFilterBitsPerKey(10), "rangeFilters").run();
    }

    /** One iterator of each side, what it was opened with, and whether it still reads at its snapshot. */
    private static final class Pair {
        final DbIterator ours;
        final RocksIterator theirs;
        final org.rocksdb.ReadOptions readOptions;
        final List<AutoCloseable> resources;
        final boolean prefixMode;
        final String what;
        /** The snapshot it reads at (its index), or -1: none (the latest state), also after a refresh() since. */
        int snapshot;

        Pair(
                DbIterator ours,
                RocksIterator theirs,
                org.rocksdb.ReadOptions readOptions,
                List<AutoCloseable> resources,
                boolean prefixMode,
                String what,
                int snapshot) {
            this.ours = ours;
            this.theirs = theirs;
            this.readOptions = readOptions;
            this.resources = resources;
            this.prefixMode = prefixMode;
            this.what = what;
            this.snapshot = snapshot;
        }

        void close() throws Exception {
            ours.close();
            theirs.close();
            readOptions.close();
            for (AutoCloseable c : resources) {
                c.close();
            }
        }
    }

    private final class Run {
        final Options options;
        final long seed;
        final Random rnd;
        final List<String> history = new ArrayList<>();
        final List<Pair> iterators = new ArrayList<>();
        final List<Snapshot> ourSnapshots = new ArrayList<>();
        final List<org.rocksdb.Snapshot> theirSnapshots = new ArrayList<>();
        Db db;
        RocksDB rocks;
        int refreshes;
        int compared;

        Run(Options options, String name) {
            this.options = options;
            this.seed = TestSeeds.seed("IteratorRefreshDifferentialTest." + name);
            this.rnd = new Random(seed);
        }

        String ctx(int op) {
            return "seed " + seed + " (-Dbloomkv.seed=" + seed + ") op " + op + "; last steps "
                    + history.subList(Math.max(0, history.size() - 12), history.size());
        }

        void run() throws Exception {
            try (org.rocksdb.Options ro = new org.rocksdb.Options()
                            .setCreateIfMissing(true)
                            .setWriteBufferSize(16 << 10)
                            .useFixedLengthPrefixExtractor(PREFIX);
                    FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
                rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                db = Db.open(dir.resolve("bloomkv"), options);
                try {
                    for (int op = 0; op < OPS; op++) {
                        step(op, flush);
                    }
                    for (Pair p : iterators) {
                        p.close();
                    }
                    iterators.clear();
                    for (int i = 0; i < ourSnapshots.size(); i++) {
                        ourSnapshots.get(i).close();
                        rocks.releaseSnapshot(theirSnapshots.get(i));
                    }
                    db.waitForBackgroundWork();
                    Stats s = db.stats();
                    assertThat(s.openIterators())
                            .as("seed " + seed + ": open iterators")
                            .isZero();
                    assertThat(s.liveVersions())
                            .as("seed " + seed + ": live Versions")
                            .isEqualTo(1);
                    assertThat(tableFilesOnDisk(dir.resolve("bloomkv")))
                            .as("seed " + seed + ": table files on disk are the live tables")
                            .isEqualTo(liveTables(db));
                    System.out.println("IteratorRefreshDifferentialTest: seed " + seed + ", " + refreshes
                            + " refreshes, " + compared + " positions compared, " + s.flushes() + " flushes, "
                            + s.compactions() + " compactions");
                } finally {
                    for (Pair p : iterators) {
                        p.close();
                    }
                    db.close();
                    rocks.close();
                }
            }
        }

        void step(int op, FlushOptions flush) throws Exception {
            int r = rnd.nextInt(100);
            if (r < 35) {
                byte[] k = key();
                byte[] v = value();
                history.add("put " + hex(k));
                db.put(k, v);
                rocks.put(k, v);
            } else if (r < 43) {
                byte[] k = key();
                history.add("delete " + hex(k));
                db.delete(k);
                rocks.delete(k);
            } else if (r < 46) {
                byte[] a = key();
                byte[] b = key();
                if (Arrays.compareUnsigned(a, b) > 0) {
                    byte[] t = a;
                    a = b;
                    b = t;
                }
                if (Arrays.compareUnsigned(a, b) < 0) {
                    history.add("deleteRange " + hex(a) + ".." + hex(b));
                    db.deleteRange(a, b);
                    rocks.deleteRange(a, b);
                }
            } else if (r < 49) {
                history.add("flush");
                db.flush();
                rocks.flush(flush);
            } else if (r < 50) {
                byte[] a = rnd.nextBoolean() ? null : key();
                byte[] b = a == null || rnd.nextBoolean() ? null : key();
                if (a != null && b != null && Arrays.compareUnsigned(a, b) > 0) {
                    byte[] t = a;
                    a = b;
                    b = t;
                }
                history.add("compactRange " + hex(a) + ".." + hex(b));
                db.compactRange(a, b);
                if (a == null || b == null) {
                    rocks.compactRange(); // what reads see is the same whatever the range
                } else {
                    rocks.compactRange(a, b);
                }
            } else if (r < 53) {
                if (ourSnapshots.size() < 4) {
                    history.add("snapshot " + ourSnapshots.size());
                    ourSnapshots.add(db.getSnapshot());
                    theirSnapshots.add(rocks.getSnapshot());
                }
            } else if (r < 55) {
                releaseSnapshot();
            } else if (r < 61) {
                if (iterators.size() < 5) {
                    openIterator();
                }
            } else if (r < 64) {
                if (!iterators.isEmpty()) {
                    int i = rnd.nextInt(iterators.size());
                    history.add("close iterator " + i);
                    iterators.remove(i).close();
                }
            } else if (r < 76) {
                if (!iterators.isEmpty()) {
                    int i = rnd.nextInt(iterators.size());
                    Pair p = iterators.get(i);
                    int sn = ourSnapshots.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(ourSnapshots.size());
                    history.add("refresh " + i + " (" + p.what + ")" + (sn >= 0 ? " to snapshot " + sn : ""));
                    if (sn >= 0) {
                        p.ours.refresh(ourSnapshots.get(sn));
                        p.theirs.refresh(theirSnapshots.get(sn));
                    } else {
                        p.ours.refresh();
                        p.theirs.refresh();
                    }
                    p.snapshot = sn;
                    refreshes++;
                    assertThat(p.ours.valid())
                            .as(ctx(op) + ": ours valid after refresh")
                            .isFalse();
                    assertThat(p.theirs.isValid())
                            .as(ctx(op) + ": RocksDB's valid after refresh")
                            .isFalse();
                }
            } else {
                if (iterators.isEmpty()) {
                    openIterator();
                }
                use(op, iterators.get(rnd.nextInt(iterators.size())));
            }
        }

        /** Releases a snapshot no iterator reads at (an iterator needs its snapshot until refreshed). */
        void releaseSnapshot() {
            if (ourSnapshots.isEmpty()) {
                return;
            }
            int s = rnd.nextInt(ourSnapshots.size());
            for (Pair p : iterators) {
                if (p.snapshot == s) {
                    return;
                }
            }
            history.add("release snapshot " + s);
            ourSnapshots.remove(s).close();
            rocks.releaseSnapshot(theirSnapshots.remove(s));
            for (Pair p : iterators) {
                if (p.snapshot > s) {
                    p.snapshot--;
                }
            }
        }

        void openIterator() {
            int sn = ourSnapshots.isEmpty() || rnd.nextBoolean() ? -1 : rnd.nextInt(ourSnapshots.size());
            boolean prefixMode = rnd.nextInt(3) == 0;
            byte[] lower = rnd.nextInt(3) == 0 ? key() : null;
            byte[] upper = rnd.nextInt(3) == 0 ? key() : null;
            if (lower != null && upper != null && Arrays.compareUnsigned(lower, upper) >= 0) {
                byte[] t = lower; // bounds in order, as RocksDB requires
                lower = Arrays.equals(lower, upper) ? null : upper;
                upper = t;
            }
            ReadOptions o = ReadOptions.defaults().prefixSameAsStart(prefixMode);
            org.rocksdb.ReadOptions rro = new org.rocksdb.ReadOptions().setTotalOrderSeek(true);
            List<AutoCloseable> resources = new ArrayList<>();
            if (sn >= 0) {
                o.snapshot(ourSnapshots.get(sn));
                rro.setSnapshot(theirSnapshots.get(sn));
            }
            if (lower != null) {
                o.iterateLowerBound(lower);
                Slice sl = new Slice(lower);
                resources.add(sl);
                rro.setIterateLowerBound(sl);
            }
            if (upper != null) {
                o.iterateUpperBound(upper);
                Slice sl = new Slice(upper);
                resources.add(sl);
                rro.setIterateUpperBound(sl);
            }
            String what = "at " + sn + " in [" + hex(lower) + ", " + hex(upper) + ")" + (prefixMode ? " prefix" : "");
            history.add("open " + iterators.size() + ": " + what);
            iterators.add(new Pair(db.iterator(o), rocks.newIterator(rro), rro, resources, prefixMode, what, sn));
        }

        /**
         * A positioning, then up to 12 (now and then 100) random moves either way, each position compared; a walk ends
         * where both iterators are not valid. In prefix mode: a seek or seekForPrev of a target of at least the prefix
         * length, RocksDB's total-order answer confined to the target's prefix.
         */
        void use(int op, Pair p) {
            int how = p.prefixMode ? rnd.nextInt(2) : rnd.nextInt(4);
            byte[] target = p.prefixMode ? prefixTarget() : key();
            byte[] prefix = p.prefixMode ? Arrays.copyOf(target, PREFIX) : null;
            String name = new String[] {"seek", "seekForPrev", "seekToFirst", "seekToLast"}[how];
            switch (how) {
                case 0 -> {
                    p.ours.seek(target);
                    p.theirs.seek(target);
                }
                case 1 -> {
                    p.ours.seekForPrev(target);
                    p.theirs.seekForPrev(target);
                }
                case 2 -> {
                    p.ours.seekToFirst();
                    p.theirs.seekToFirst();
                }
                default -> {
                    p.ours.seekToLast();
                    p.theirs.seekToLast();
                }
            }
            String where = ctx(op) + ": " + p.what + " " + name + (how < 2 ? " " + hex(target) : "");
            for (int m = 0, n = rnd.nextInt(rnd.nextInt(8) == 0 ? 100 : 12); ; m++) {
                String mine = position(p.ours);
                String theirs = position(p.theirs, prefix);
                assertThat(mine).as(where + " after " + m + " moves").isEqualTo(theirs);
                compared++;
                if (mine.equals("-") || m == n) {
                    return;
                }
                if (rnd.nextInt(4) == 0) {
                    p.ours.prev();
                    p.theirs.prev();
                    where += " <";
                } else {
                    p.ours.next();
                    p.theirs.next();
                    where += " >";
                }
            }
        }

        String position(DbIterator it) {
            return it.valid() ? hex(it.key()) + "=" + hex(it.value()) : "-";
        }

        String position(RocksIterator it, byte[] prefix) {
            if (!it.isValid()) {
                return "-";
            }
            byte[] k = it.key();
            if (prefix != null
                    && (k.length < prefix.length || !Arrays.equals(k, 0, prefix.length, prefix, 0, prefix.length))) {
                return "-";
            }
            return hex(k) + "=" + hex(it.value());
        }

        /** A key: a prefix of {@link #PREFIX} bytes ('k' and a group), then 0-3 bytes of a small alphabet. */
        byte[] key() {
            byte[] k = new byte[PREFIX + rnd.nextInt(4)];
            k[0] = 'k';
            k[1] = GROUPS[rnd.nextInt(GROUPS.length)];
            for (int i = PREFIX; i < k.length; i++) {
                k[i] = (byte) ("aemz\u00ff".charAt(rnd.nextInt(5)));
            }
            return k;
        }

        /** A seek target for prefix mode: at least the prefix length. */
        byte[] prefixTarget() {
            byte[] k = key();
            return k.length >= PREFIX ? k : Arrays.copyOf(k, PREFIX);
        }

        byte[] value() {
            byte[] v = new byte[rnd.nextInt(24)];
            rnd.nextBytes(v);
            return v;
        }
    }

    private static String hex(byte[] b) {
        return b == null ? "null" : HexFormat.of().formatHex(b);
    }

    /** Numbers of the table files in {@code d} (shared with IteratorRefreshTest). */
    static Set<Long> tableFilesOnDisk(Path d) throws IOException {
        Set<Long> out = new TreeSet<>();
        try (Stream<Path> s = Files.list(d)) {
            for (Path p : s.toList()) {
                String name = p.getFileName().toString();
                if (name.endsWith(".sst")) {
                    out.add(Long.parseLong(name.substring(0, name.length() - 4)));
                }
            }
        }
        return out;
    }

    /** Numbers of the live tables of {@code db}. */
    static Set<Long> liveTables(Db db) {
        Set<Long> out = new TreeSet<>();
        for (TableInfo t : db.tables()) {
            out.add(t.fileNumber());
        }
        return out;
    }
}

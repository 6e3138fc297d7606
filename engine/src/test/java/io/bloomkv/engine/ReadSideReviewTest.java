package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.StringAppendOperator;

/**
 * Read-side review against RocksDB (rocksdbjni) as the oracle, over a tiny key space built for the edges of the byte
 * order: keys that are prefixes of each other ({@code a}, {@code a\0}, {@code a\0\0}), keys of 0xff and 0x80 bytes,
 * from an alphabet of six bytes and lengths 1 to 3 (the engine refuses empty keys, unlike RocksDB; an empty seek
 * target and an empty iterator bound are accepted and compared). One seeded history of puts, deletes, merge
 * operands (string append both sides), range deletions (also in batches), flushes and manual compactions; every read
 * is compared: get and multiGet (duplicated keys, latest and at snapshots) and iterators with random bounds (the empty
 * key and 0xff keys among them), positioned by all four seeks and then walked by a random mix of next and prev,
 * with prefix mode ({@code prefixSameAsStart}, prefix length 1) against RocksDB's total order confined to the prefix;
 * some iterator pairs are held open and walked again after later writes, flushes and compactions.
 * Replay with -Dbloomkv.seed=N.
 */
@ExtendWith(NoTableLeak.class)
class ReadSideReviewTest {
    static {
        RocksDB.loadLibrary();
    }

    @TempDir
    Path dir;

    private static final int OPS = Integer.getInteger("bloomkv.modelOps", 1500);

    private static final byte[] ALPHABET = {0x00, 0x01, 'a', (byte) 0x80, (byte) 0xfe, (byte) 0xff};

    private static Options small() {
        return SmallLevels.options().mergeOperator(MergeOperators.stringAppend(','));
    }

    @Test
    void edgeKeysMatchRocksDb() throws Exception {
        run(small(), "plain");
    }

    /**
     * No range deletion ever: multiGet takes its batched path (memtables, then each table's filter over all pending
     * keys, Version.multiGet) instead of a point lookup per key, which it takes while any range tombstone exists.
     */
    @Test
    void edgeKeysWithoutRangeDeletionsMatchRocksDb() throws Exception {
        run(small(), "noRangeDeletions");
    }

    @Test
    void edgeKeysWithRangeFiltersMatchRocksDb() throws Exception {
        run(small().rangeFilterBitsPerKey(10), "rangeFilters");
    }

    @Test
    void edgeKeysWithPrefixesAndPartitionsMatchRocksDb() throws Exception {
        run(small().prefixLength(1).tablePartitionPrefixLength(1).rangeFilterBitsPerKey(8), "prefixes");
    }

    /**
     * Keys of 7 to 12 bytes sharing a stem that ends with 0x00 and 0xff bytes around the eighth byte, where
     * word-at-a-time key comparisons (memtable, level search, multiGet's sort) and the range filters' fixed-width
     * windows cut the keys; range filters on.
     */
    @Test
    void longKeysAcrossEightBytesMatchRocksDb() throws Exception {
        stem = new byte[] {'s', 't', 'e', 'm', 0x00, (byte) 0xff, 0x00, (byte) 0xff, (byte) 0xff};
        run(small().rangeFilterBitsPerKey(10), "longKeys");
    }

    /** {@link #longKeysAcrossEightBytesMatchRocksDb} without range deletions: multiGet's batched path sorts keys. */
    @Test
    void longKeysWithoutRangeDeletionsMatchRocksDb() throws Exception {
        stem = new byte[] {'s', 't', 'e', 'm', 0x00, (byte) 0xff, 0x00, (byte) 0xff, (byte) 0xff};
        run(small().rangeFilterBitsPerKey(10), "noRangeDeletionsLongKeys");
    }

    /** A prefix length of 2: one-byte keys lie outside the prefix extractor's domain, and tables are cut at 2 bytes. */
    @Test
    void keysShorterThanThePrefixMatchRocksDb() throws Exception {
        run(small().prefixLength(2).tablePartitionPrefixLength(2), "shortKeys");
    }

    private static String s(byte[] k) {
        return k == null ? "null" : "'" + HexFormat.of().formatHex(k) + "'";
    }

    /** Prepended (some of it) to every key when not empty: {@link #longKeysAcrossEightBytesMatchRocksDb}. */
    private byte[] stem = new byte[0];

    /**
     * A key: 1 to 3 bytes of the alphabet (the engine refuses empty keys, as documented); with a {@link #stem}, its
     * first {@code stem.length - 2} to {@code stem.length} bytes, then 0 to 3 of the alphabet.
     */
    private byte[] key(Random rnd) {
        if (stem.length == 0) {
            return bytes(rnd, 1 + rnd.nextInt(3));
        }
        byte[] head = Arrays.copyOf(stem, stem.length - rnd.nextInt(3));
        byte[] tail = bytes(rnd, rnd.nextInt(4));
        byte[] k = Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, k, head.length, tail.length);
        return k;
    }

    /** A seek target or bound: as {@link #key}, or sometimes empty. */
    private byte[] target(Random rnd) {
        return rnd.nextInt(10) == 0 ? new byte[0] : key(rnd);
    }

    private static byte[] bytes(Random rnd, int len) {
        byte[] k = new byte[len];
        for (int i = 0; i < len; i++) {
            k[i] = ALPHABET[rnd.nextInt(ALPHABET.length)];
        }
        return k;
    }

    private byte[][] range(Random rnd) {
        byte[] a = key(rnd);
        byte[] b = key(rnd);
        int c = Arrays.compareUnsigned(a, b);
        if (c == 0) {
            b = Arrays.copyOf(b, b.length + 1); // b || 0x00: the range of a alone
            c = -1;
        }
        return c < 0 ? new byte[][] {a, b} : new byte[][] {b, a};
    }

    private void run(Options options, String name) throws Exception {
        long seed = TestKeys.seed("ReadSideReviewTest." + name);
        Random rnd = new Random(seed);
        String ctx = name + " seed " + seed + " (-Dbloomkv.seed=" + seed + ")";
        boolean prefixes = options.prefixLength() > 0;
        boolean rangeDeletions = !name.startsWith("noRangeDeletions");
        List<String> history = new ArrayList<>();
        try (StringAppendOperator rop = new StringAppendOperator(',');
                org.rocksdb.Options ro = new org.rocksdb.Options()
                        .setCreateIfMissing(true)
                        .setMergeOperator(rop)
                        .setWriteBufferSize(64 << 10);
                RocksDB rocks = RocksDB.open(ro, dir.resolve("rocksdb").toString());
                Db db = Db.open(dir.resolve("bloomkv"), options)) {
            List<Snapshot> ours = new ArrayList<>();
            List<org.rocksdb.Snapshot> theirs = new ArrayList<>();
            held.clear();
            try {
                for (int op = 0; op < OPS; op++) {
                    String where = ctx + " op " + op + " after " + tail(history);
                    int r = rnd.nextInt(1000);
                    if (r < 250) {
                        byte[] k = key(rnd);
                        byte[] v = ("v" + op).getBytes();
                        history.add("put " + s(k));
                        db.put(k, v);
                        rocks.put(k, v);
                    } else if (r < 320) {
                        byte[] k = key(rnd);
                        history.add("delete " + s(k));
                        db.delete(k);
                        rocks.delete(k);
                    } else if (r < 450) {
                        byte[] k = key(rnd);
                        byte[] v = ("m" + op).getBytes();
                        history.add("merge " + s(k));
                        db.merge(k, v);
                        rocks.merge(k, v);
                    } else if (r < 480 && rangeDeletions) {
                        byte[][] g = range(rnd);
                        history.add("deleteRange " + s(g[0]) + " " + s(g[1]));
                        db.deleteRange(g[0], g[1]);
                        rocks.deleteRange(g[0], g[1]);
                    } else if (r < 510) {
                        WriteBatch b = new WriteBatch();
                        StringBuilder sb = new StringBuilder("batch");
                        try (org.rocksdb.WriteBatch rb = new org.rocksdb.WriteBatch();
                                org.rocksdb.WriteOptions wo = new org.rocksdb.WriteOptions()) {
                            for (int i = 0, n = 1 + rnd.nextInt(6); i < n; i++) {
                                int t = rnd.nextInt(4);
                                byte[] k = key(rnd);
                                byte[] v = ("b" + op + "." + i).getBytes();
                                if (t == 0) {
                                    b.put(k, v);
                                    rb.put(k, v);
                                    sb.append(" put ").append(s(k));
                                } else if (t == 1) {
                                    b.delete(k);
                                    rb.delete(k);
                                    sb.append(" delete ").append(s(k));
                                } else if (t == 2) {
                                    b.merge(k, v);
                                    rb.merge(k, v);
                                    sb.append(" merge ").append(s(k));
                                } else if (rangeDeletions) {
                                    byte[][] g = range(rnd);
                                    b.deleteRange(g[0], g[1]);
                                    rb.deleteRange(g[0], g[1]);
                                    sb.append(" deleteRange ")
                                            .append(s(g[0]))
                                            .append(' ')
                                            .append(s(g[1]));
                                }
                            }
                            history.add(sb.toString());
                            db.write(b);
                            rocks.write(wo, rb);
                        }
                    } else if (r < 530) {
                        history.add("flush");
                        db.flush();
                    } else if (r < 540) {
                        byte[][] g = rnd.nextBoolean() ? new byte[][] {null, null} : range(rnd);
                        history.add("compactRange " + s(g[0]) + " " + s(g[1]));
                        db.compactRange(g[0], g[1]);
                    } else if (r < 560) {
                        if (ours.size() < 4 && rnd.nextBoolean()) {
                            history.add("snapshot #" + ours.size());
                            ours.add(db.getSnapshot());
                            theirs.add(rocks.getSnapshot());
                        } else if (!ours.isEmpty()) {
                            int i = rnd.nextInt(ours.size());
                            history.add("release #" + i);
                            db.releaseSnapshot(ours.remove(i));
                            rocks.releaseSnapshot(theirs.remove(i));
                        }
                    } else {
                        int sn = ours.isEmpty() || rnd.nextInt(3) > 0 ? -1 : rnd.nextInt(ours.size());
                        ReadOptions our = ReadOptions.defaults().snapshot(sn < 0 ? null : ours.get(sn));
                        try (org.rocksdb.ReadOptions their = new org.rocksdb.ReadOptions().setTotalOrderSeek(true)) {
                            if (sn >= 0) {
                                their.setSnapshot(theirs.get(sn));
                            }
                            String at = where + (sn < 0 ? " latest" : " at snapshot #" + sn);
                            if (r < 680) {
                                byte[] k = key(rnd);
                                assertThat(db.get(k, our))
                                        .as(at + " get " + s(k))
                                        .isEqualTo(rocks.get(their, k));
                            } else if (r < 760) {
                                List<byte[]> keys = new ArrayList<>();
                                int size = rnd.nextInt(10) == 0 ? 65 + rnd.nextInt(60) : 1 + rnd.nextInt(8);
                                for (int i = 0, n = size; i < n; i++) {
                                    keys.add(i > 0 && rnd.nextInt(3) == 0 ? keys.get(rnd.nextInt(i)) : key(rnd));
                                }
                                List<byte[]> got = db.multiGet(our, keys);
                                List<byte[]> want = rocks.multiGetAsList(their, keys);
                                for (int i = 0; i < keys.size(); i++) {
                                    assertThat(got.get(i))
                                            .as(at + " multiGet[" + i + "] " + s(keys.get(i)) + " of " + keys.size())
                                            .isEqualTo(want.get(i));
                                }
                            } else if (!held.isEmpty() && rnd.nextInt(3) == 0) {
                                int i = rnd.nextInt(held.size());
                                Held h = held.get(i);
                                walk(h, rnd, new StringBuilder(where + " held " + h.what() + ":"));
                                if (rnd.nextBoolean()) {
                                    held.remove(i).close();
                                }
                            } else {
                                compareIterators(
                                        db,
                                        rocks,
                                        our,
                                        their,
                                        prefixes && rnd.nextInt(3) == 0 ? options.prefixLength() : 0,
                                        rnd,
                                        at);
                            }
                        }
                    }
                }
            } finally {
                for (Held h : held) {
                    h.close();
                }
                held.clear();
                for (Snapshot sn : ours) {
                    db.releaseSnapshot(sn);
                }
                for (org.rocksdb.Snapshot sn : theirs) {
                    rocks.releaseSnapshot(sn);
                }
            }
        }
    }

    private static String tail(List<String> history) {
        return history.subList(Math.max(0, history.size() - 6), history.size()).toString();
    }

    private void compareIterators(
            Db db,
            RocksDB rocks,
            ReadOptions our,
            org.rocksdb.ReadOptions their,
            int prefixLength,
            Random rnd,
            String at)
            throws Exception {
        boolean prefixMode = prefixLength > 0;
        byte[] lower = null;
        byte[] upper = null;
        int b = rnd.nextInt(4);
        if (b == 1) {
            lower = target(rnd);
        } else if (b == 2) {
            upper = target(rnd);
        } else if (b == 3) {
            byte[][] g = range(rnd);
            lower = g[0];
            upper = g[1];
        }
        our.iterateLowerBound(lower).iterateUpperBound(upper).prefixSameAsStart(prefixMode);
        List<Slice> slices = new ArrayList<>();
        if (lower != null) {
            Slice sl = new Slice(lower);
            slices.add(sl);
            their.setIterateLowerBound(sl);
        }
        if (upper != null) {
            Slice sl = new Slice(upper);
            slices.add(sl);
            their.setIterateUpperBound(sl);
        }
        String what = "iterator [" + s(lower) + ", " + s(upper) + ")" + (prefixMode ? " prefix" : "");
        List<AutoCloseable> resources = new ArrayList<>(slices);
        org.rocksdb.ReadOptions copy = new org.rocksdb.ReadOptions(their); // outlives the caller's, if held
        resources.add(copy);
        Held h = new Held(db.iterator(our), rocks.newIterator(copy), resources, prefixLength, what);
        boolean hold = held.size() < 3 && rnd.nextInt(4) == 0;
        try {
            walk(h, rnd, new StringBuilder(at + " " + what + ":"));
        } finally {
            if (hold) {
                held.add(h); // walked again later, across writes, flushes and compactions
            } else {
                h.close();
            }
        }
    }

    /** Iterators open across operations (both made at the same point, with the same snapshot and bounds). */
    private final List<Held> held = new ArrayList<>();

    private record Held(
            DbIterator it, RocksIterator rit, List<AutoCloseable> resources, int prefixLength, String what) {
        void close() throws Exception {
            it.close();
            rit.close();
            for (AutoCloseable r : resources) {
                r.close();
            }
        }
    }

    /** Three positionings of both iterators, each followed by up to 8 steps of next or prev, compared at each. */
    private void walk(Held h, Random rnd, StringBuilder steps) {
        DbIterator it = h.it();
        RocksIterator rit = h.rit();
        int prefixLength = h.prefixLength();
        boolean prefixMode = prefixLength > 0;
        for (int round = 0; round < 3; round++) {
            int how = rnd.nextInt(4);
            // sometimes empty: seek("") lands on the first key, seekForPrev("") on none, as in RocksDB
            byte[] target = target(rnd);
            while (prefixMode && how <= 1 && target.length < prefixLength) {
                target = key(rnd); // shorter targets are outside the extractor's domain: order unspecified
            }
            byte[] prefix = prefixMode && how <= 1 ? Arrays.copyOf(target, prefixLength) : null;
            if (how == 0) {
                steps.append(" seek ").append(s(target));
                it.seek(target);
                rit.seek(target);
            } else if (how == 1) {
                steps.append(" seekForPrev ").append(s(target));
                it.seekForPrev(target);
                rit.seekForPrev(target);
            } else if (how == 2) {
                steps.append(" seekToFirst");
                it.seekToFirst();
                rit.seekToFirst();
            } else {
                steps.append(" seekToLast");
                it.seekToLast();
                rit.seekToLast();
            }
            if (prefixMode && prefix == null && rit.isValid()) {
                prefix = rit.key().length < prefixLength ? null : Arrays.copyOf(rit.key(), prefixLength);
            }
            for (int step = 0; ; step++) {
                boolean want = rit.isValid() && (!prefixMode || inPrefix(rit.key(), prefix));
                if (prefixMode && prefix == null && how >= 2 && rit.isValid()) {
                    break; // landed on a key shorter than the prefix: outside the extractor's domain
                }
                assertThat(it.valid()).as(steps + " valid").isEqualTo(want);
                if (!want) {
                    break;
                }
                assertThat(s(it.key())).as(steps + " key").isEqualTo(s(rit.key()));
                assertThat(it.value()).as(steps + " value of " + s(it.key())).isEqualTo(rit.value());
                if (step >= 8) {
                    break;
                }
                if (rnd.nextInt(3) == 0) {
                    steps.append(" prev");
                    it.prev();
                    rit.prev();
                } else {
                    steps.append(" next");
                    it.next();
                    rit.next();
                }
            }
        }
    }

    private static boolean inPrefix(byte[] key, byte[] prefix) {
        return prefix != null
                && key.length >= prefix.length
                && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }
}

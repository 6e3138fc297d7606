package io.bloomkv.engine;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.ReadCounters;
import io.bloomkv.engine.internal.table.TableReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@link Db#multiGet}: the answers of a get on each key, found batch-wise. Each key is looked up in the memtables,
 * then all keys are hashed once, and every table (in get's order) filters all its candidate keys together before
 * reading the blocks of the keys its filter let through ({@code Version.multiGet}).
 */
final class MultiGet {
    private MultiGet() {}

    /** Counts of one call, for the database's counters. */
    record Outcome(List<byte[]> values, int hits, int memtableHits) {}

    static Outcome run(
            SuperVersion sv, List<byte[]> keys, long sequence, MergeOperator operator, ReadCounters counters) {
        int n = keys.size();
        byte[][] userKeys = new byte[n][];
        // A key longer than Db.MAX_KEY_SIZE is not found, as in RocksDB (no stored key is that long): it is resolved
        // here, absent, and asks no memtable, filter or table (null: every key is looked up).
        boolean[] tooLong = null;
        for (int i = 0; i < n; i++) {
            byte[] k = keys.get(i);
            if (!LongKeys.mayBeStored(k)) {
                if (tooLong == null) {
                    tooLong = new boolean[n];
                }
                tooLong[i] = true;
            }
            userKeys[i] = k;
        }
        if (sv.hasRangeTombstones()) {
            // Range tombstones are weighed per key, as a get does (PointLookup); one hash per key still.
            List<byte[]> values = new ArrayList<>(n);
            int hits = 0;
            for (int i = 0; i < n; i++) {
                byte[] v = tooLong != null && tooLong[i]
                        ? null
                        : PointLookup.get(sv, userKeys[i], Hashing.hash64(userKeys[i]), sequence, operator, counters);
                values.add(v);
                hits += v != null ? 1 : 0;
            }
            return new Outcome(values, hits, 0);
        }
        TableReader.Entry[] found = new TableReader.Entry[n];
        boolean[] resolved = new boolean[n];
        long[] hashes = new long[n];
        int memtableHits = 0;
        int pending = 0;
        for (int i = 0; i < n; i++) {
            if (tooLong != null && tooLong[i]) {
                resolved[i] = true; // found[i] stays null: absent
                continue;
            }
            hashes[i] = Hashing.hash64(userKeys[i]); // the one hash every filter (memtables' and tables') is asked with
            TableReader.Entry e = sv.mem.get(userKeys[i], hashes[i], sequence);
            for (int j = 0; e == null && j < sv.imms.size(); j++) {
                e = sv.imms.get(j).get(userKeys[i], hashes[i], sequence);
            }
            if (e != null) {
                found[i] = e;
                resolved[i] = true;
                memtableHits++;
            } else {
                pending++;
            }
        }
        if (pending > 0) {
            int[] order = new int[pending];
            for (int i = 0, p = 0; i < n; i++) {
                if (!resolved[i]) {
                    order[p++] = i;
                }
            }
            sortByKey(order, userKeys);
            sv.version.multiGet(userKeys, hashes, order, sequence, found, resolved);
        }
        List<byte[]> values = new ArrayList<>(n);
        int hits = 0;
        for (int i = 0; i < n; i++) {
            TableReader.Entry e = found[i];
            if (e != null && e.type() == ValueType.MERGE) {
                // The newest entry is an operand: the key's older entries are read as a get does (PointLookup).
                byte[] merged = PointLookup.get(sv, userKeys[i], hashes[i], sequence, operator, counters);
                values.add(merged);
                hits += merged != null ? 1 : 0;
            } else if (e != null && e.type() == ValueType.PUT) {
                values.add(e.value());
                hits++;
            } else {
                values.add(null);
            }
        }
        return new Outcome(values, hits, memtableHits);
    }

    /** Batches up to this size are sorted by insertion (no boxing, no comparator objects). */
    static final int INSERTION_SORT_MAX = 64;

    /**
     * Sorts the key indices {@code order} by their keys (unsigned bytes): first by the keys' first 8 bytes as one
     * unsigned long, whole keys only among equal words. Insertion sort for a typical batch, a boxed sort beyond.
     */
    static void sortByKey(int[] order, byte[][] keys) {
        int n = order.length;
        long[] words = new long[n];
        for (int i = 0; i < n; i++) {
            words[i] = word(keys[order[i]]);
        }
        if (n > INSERTION_SORT_MAX) {
            Integer[] boxed = new Integer[n];
            for (int i = 0; i < n; i++) {
                boxed[i] = i;
            }
            Arrays.sort(boxed, (x, y) -> compare(words[x], keys[order[x]], words[y], keys[order[y]]));
            int[] sorted = new int[n];
            for (int i = 0; i < n; i++) {
                sorted[i] = order[boxed[i]];
            }
            System.arraycopy(sorted, 0, order, 0, n);
            return;
        }
        for (int i = 1; i < n; i++) {
            int k = order[i];
            long w = words[i];
            int j = i - 1;
            while (j >= 0 && compare(words[j], keys[order[j]], w, keys[k]) > 0) {
                order[j + 1] = order[j];
                words[j + 1] = words[j];
                j--;
            }
            order[j + 1] = k;
            words[j + 1] = w;
        }
    }

    private static int compare(long wordA, byte[] a, long wordB, byte[] b) {
        int c = Long.compareUnsigned(wordA, wordB);
        return c != 0 ? c : Arrays.compareUnsigned(a, b);
    }

    /** The first 8 bytes of {@code key}, big-endian, zero-padded: where two words differ they order as the keys. */
    private static long word(byte[] key) {
        long w = 0;
        int m = Math.min(8, key.length);
        for (int i = 0; i < m; i++) {
            w = (w << 8) | (key[i] & 0xFFL);
        }
        return w << (8 * (8 - m));
    }
}

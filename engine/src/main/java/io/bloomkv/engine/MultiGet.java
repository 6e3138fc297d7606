package io.bloomkv.engine;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.TableReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * {@link Db#multiGet}: the answers of a get on each key, found batch-wise. Each key is looked up in the memtables,
 * then all keys are hashed once, and every table (in get's order) filters all its candidate keys together before
 * reading the blocks of the keys its filter let through ({@code Version.multiGet}).
 */
final class MultiGet {
    private MultiGet() {
    }

    /** Counts of one call, for the database's counters. */
    record Outcome(List<byte[]> values, int hits, int memtableHits) {
    }

    static Outcome run(SuperVersion sv, List<byte[]> keys, long sequence) {
        int n = keys.size();
        byte[][] userKeys = new byte[n][];
        for (int i = 0; i < n; i++) {
            byte[] k = keys.get(i);
            WriteBatch.checkKey(k);
            userKeys[i] = k;
        }
        TableReader.Entry[] found = new TableReader.Entry[n];
        boolean[] resolved = new boolean[n];
        int memtableHits = 0;
        int pending = 0;
        for (int i = 0; i < n; i++) {
            TableReader.Entry e = sv.mem.get(userKeys[i], sequence);
            for (int j = 0; e == null && j < sv.imms.size(); j++) {
                e = sv.imms.get(j).get(userKeys[i], sequence);
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
            long[] hashes = new long[n];
            Integer[] boxed = new Integer[pending];
            for (int i = 0, p = 0; i < n; i++) {
                if (!resolved[i]) {
                    hashes[i] = Hashing.hash64(userKeys[i]);
                    boxed[p++] = i;
                }
            }
            Arrays.sort(boxed, Comparator.comparing((Integer i) -> userKeys[i], Arrays::compareUnsigned));
            int[] order = new int[pending];
            for (int p = 0; p < pending; p++) {
                order[p] = boxed[p];
            }
            sv.version.multiGet(userKeys, hashes, order, sequence, found, resolved);
        }
        List<byte[]> values = new ArrayList<>(n);
        int hits = 0;
        for (int i = 0; i < n; i++) {
            TableReader.Entry e = found[i];
            if (e != null && e.type() == ValueType.PUT) {
                values.add(e.value());
                hits++;
            } else {
                values.add(null);
            }
        }
        return new Outcome(values, hits, memtableHits);
    }
}

package io.bloomkv.engine.internal.rangedel;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

/**
 * A set of range tombstones cut into non-overlapping fragments (RocksDB's {@code FragmentedRangeTombstoneList}):
 * sorted by start key, each fragment [start, end) carrying the sequence numbers (descending) of every tombstone that
 * covers it. Answers "the newest tombstone visible at a snapshot that covers this key" with one binary search.
 * Immutable, thread-safe.
 */
public final class RangeTombstoneList {
    /** The empty list. */
    public static final RangeTombstoneList EMPTY =
            new RangeTombstoneList(new byte[0][], new byte[0][], new long[0][], 0);

    private final byte[][] starts;
    private final byte[][] ends;
    /** Per fragment, descending. */
    private final long[][] sequences;

    private final int tombstones;

    private RangeTombstoneList(byte[][] starts, byte[][] ends, long[][] sequences, int tombstones) {
        this.starts = starts;
        this.ends = ends;
        this.sequences = sequences;
        this.tombstones = tombstones;
    }

    /** Fragments {@code tombstones} (any order, overlaps allowed; empty ranges ignored). */
    public static RangeTombstoneList of(Collection<RangeTombstone> tombstones) {
        List<RangeTombstone> sorted = new ArrayList<>();
        for (RangeTombstone t : tombstones) {
            if (Arrays.compareUnsigned(t.begin(), t.end()) < 0) {
                sorted.add(t);
            }
        }
        if (sorted.isEmpty()) {
            return EMPTY;
        }
        sorted.sort(Comparator.comparing(RangeTombstone::begin, Arrays::compareUnsigned));
        TreeSet<byte[]> points = new TreeSet<>(Arrays::compareUnsigned);
        for (RangeTombstone t : sorted) {
            points.add(t.begin());
            points.add(t.end());
        }
        List<byte[]> s = new ArrayList<>();
        List<byte[]> e = new ArrayList<>();
        List<long[]> q = new ArrayList<>();
        List<RangeTombstone> active = new ArrayList<>();
        int next = 0;
        byte[] prev = null;
        for (byte[] p : points) {
            if (prev != null && !active.isEmpty()) {
                long[] seqs = new long[active.size()];
                for (int i = 0; i < seqs.length; i++) {
                    seqs[i] = active.get(i).sequence();
                }
                Arrays.sort(seqs);
                reverse(seqs);
                s.add(prev);
                e.add(p);
                q.add(seqs);
            }
            final byte[] at = p;
            active.removeIf(t -> Arrays.compareUnsigned(t.end(), at) <= 0);
            while (next < sorted.size()
                    && Arrays.compareUnsigned(sorted.get(next).begin(), p) <= 0) {
                active.add(sorted.get(next++));
            }
            prev = p;
        }
        return new RangeTombstoneList(
                s.toArray(new byte[0][]), e.toArray(new byte[0][]), q.toArray(new long[0][]), sorted.size());
    }

    private static void reverse(long[] a) {
        for (int i = 0, j = a.length - 1; i < j; i++, j--) {
            long t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    public boolean isEmpty() {
        return starts.length == 0;
    }

    /**
     * False when no tombstone of the list covers {@code userKey}, by its span alone ({@code userKey} below the first
     * fragment's start or at or after the last fragment's end): one or two comparisons, no search. True when some
     * may (then {@link #maxCovering} says which).
     */
    public boolean mayCover(byte[] userKey) {
        int n = starts.length;
        return n > 0
                && Arrays.compareUnsigned(userKey, starts[0]) >= 0
                && Arrays.compareUnsigned(userKey, ends[n - 1]) < 0;
    }

    /** Tombstones the list was built from (non-empty ones). */
    public int tombstoneCount() {
        return tombstones;
    }

    /** The sequence of the newest tombstone with sequence {@code <= snapshot} covering {@code userKey}; 0 when none. */
    public long maxCovering(byte[] userKey, long snapshot) {
        int i = fragmentOf(userKey);
        if (i < 0) {
            return 0;
        }
        for (long seq : sequences[i]) {
            if (seq <= snapshot) {
                return seq;
            }
        }
        return 0;
    }

    /**
     * {@link #maxCovering(byte[], long)} of the user key {@code key[0, keyLength)} (a flush passes the user-key part of
     * an internal key it does not own, without copying it).
     */
    public long maxCovering(byte[] key, int keyLength, long snapshot) {
        int i = fragmentOf(key, keyLength);
        if (i < 0) {
            return 0;
        }
        for (long seq : sequences[i]) {
            if (seq <= snapshot) {
                return seq;
            }
        }
        return 0;
    }

    /** Index of the fragment holding {@code userKey}, or -1. */
    private int fragmentOf(byte[] userKey) {
        return fragmentOf(userKey, userKey.length);
    }

    /** Index of the fragment holding the user key {@code key[0, keyLength)}, or -1. */
    private int fragmentOf(byte[] key, int keyLength) {
        int lo = 0;
        int hi = starts.length;
        while (lo < hi) { // first fragment whose end is > the key
            int mid = (lo + hi) >>> 1;
            byte[] end = ends[mid];
            if (Arrays.compareUnsigned(end, 0, end.length, key, 0, keyLength) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo == starts.length) {
            return -1;
        }
        byte[] start = starts[lo];
        return Arrays.compareUnsigned(start, 0, start.length, key, 0, keyLength) <= 0 ? lo : -1;
    }

    /**
     * The end of the fragment holding {@code userKey} when a tombstone of sequence in ({@code above}, {@code snapshot}]
     * covers it, else null: every key up to that end is then covered at least as newly (an iterator may skip there).
     */
    public byte[] coveredUntil(byte[] userKey, long snapshot) {
        int i = fragmentOf(userKey);
        return i >= 0 && maxCovering(userKey, snapshot) > 0 ? ends[i] : null;
    }

    /**
     * Every fragment as tombstones (one per fragment and sequence), in the order a range-deletion block stores them:
     * start ascending, then sequence descending. Fragments are disjoint, so the result is non-overlapping per sequence.
     */
    public List<RangeTombstone> fragments() {
        List<RangeTombstone> out = new ArrayList<>();
        for (int i = 0; i < starts.length; i++) {
            for (long seq : sequences[i]) {
                out.add(new RangeTombstone(starts[i], ends[i], seq));
            }
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * True when tombstones of sequences in ({@code newerThan}, {@code atMost}] cover every key of [{@code from},
     * {@code to}] (inclusive user keys): a table whose keys lie in that range and whose entries are all at or below
     * {@code newerThan} reads as empty for every reader at {@code atMost} or later (RocksDB drops such a file whole).
     */
    public boolean coversRange(byte[] from, byte[] to, long newerThan, long atMost) {
        int i = fragmentOf(from);
        if (i < 0) {
            return false;
        }
        // Walk adjacent fragments from `from` while each has a qualifying sequence and they touch.
        byte[] reached = null;
        for (int j = i; j < starts.length; j++) {
            if (reached != null && Arrays.compareUnsigned(starts[j], reached) != 0) {
                return false;
            }
            boolean ok = false;
            for (long seq : sequences[j]) {
                if (seq > newerThan && seq <= atMost) {
                    ok = true;
                    break;
                }
            }
            if (!ok) {
                return false;
            }
            if (Arrays.compareUnsigned(to, ends[j]) < 0) {
                return true;
            }
            reached = ends[j];
        }
        return false;
    }
}

package io.bloomkv.bench.workload;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The check of a recordsscan answer: a scan from a loaded record's key for up to {@code length} records while other
 * threads insert new records.
 *
 * <p>What exists at a scan is decided without a key set. The loaded records (even ids below {@code 2 * num}) are never
 * deleted in the family. An inserting records workload writes id {@code base + k} for each operation index {@code k}
 * its plan makes an insert ({@link InsertRange}): a workload that ran earlier on the database wrote all of them; the
 * running phase's thread {@code u} runs the operations of its slice {@code [sliceStart[u], sliceStart[u+1])} one after
 * the other, in increasing {@code k}, and publishes {@link #starting} before each insert's put and {@link #done} after
 * it. So an insert of thread {@code u} with {@code k} below its done bound read before the scan ({@link #readDone})
 * certainly exists for the whole scan; one with {@code k} at or above its started bound read after the scan had not
 * begun its put, so the scan cannot have seen it; those in between may or may not appear.
 *
 * <p>An answer is right when its keys are, byte for byte ({@link KeySpace#matches}), keys that may exist, in strictly
 * increasing key order, the first at or after the target; no key that certainly exists lies between the target and
 * the last key returned without being returned; it has {@code length} entries, or fewer only when no key that
 * certainly exists lies after its last; and each value is the record its key may hold ({@link RecordSource#matches}):
 * an inserted record's version 0, a loaded record's version 0 or, when a workload that updates records ran earlier on
 * the database, {@link BenchRunner#UPDATE_VERSION}, as a records read accepts. Not checked: whether the in-between
 * inserts a scan saw form a consistent snapshot (one of them seen, an earlier one of the same thread not), and which
 * of its two legitimate versions a loaded record holds.
 */
final class RecordsScanCheck {
    /** Progress slots per thread, apart so the threads' writes do not share a cache line. */
    private static final int PAD = 16;

    /**
     * The ids one inserting records workload may have written: {@code base + index[i]}, {@code index} ascending, all
     * below {@code span} (the workload's operations). {@code earlier}: the workload ran before this phase on the same
     * database (every one exists); {@code own}: it is the running phase (they exist as its threads' progress says).
     */
    record InsertRange(long base, long span, int[] index, boolean earlier, boolean own) {}

    private final KeySpace keys;
    private final RecordSource records;
    private final boolean loadedMayBeUpdated;
    private final long[] sliceStart;
    /** The ranges in id order (ascending base), each of them earlier or own. */
    private final InsertRange[] ranges;
    /** Thread u's started bound at {@code u * PAD}, its done bound at {@code u * PAD + PAD / 2}. */
    private final AtomicLongArray progress;

    /**
     * @param sliceStart the running phase's thread slices: thread {@code u} runs operations {@code [sliceStart[u],
     *     sliceStart[u+1])}; one entry more than threads
     * @param ranges the inserting workloads that wrote or write records on this database (the others are left out)
     */
    RecordsScanCheck(
            KeySpace keys,
            RecordSource records,
            boolean loadedMayBeUpdated,
            long[] sliceStart,
            List<InsertRange> ranges) {
        this.keys = keys;
        this.records = records;
        this.loadedMayBeUpdated = loadedMayBeUpdated;
        this.sliceStart = sliceStart.clone();
        this.ranges = ranges.stream()
                .filter(r -> r.earlier() || r.own())
                .sorted((a, b) -> Long.compare(a.base(), b.base()))
                .toArray(InsertRange[]::new);
        for (InsertRange r : this.ranges) {
            if (r.base() < 2 * keys.num()) {
                throw new IllegalArgumentException("inserts must lie beyond every loaded id: " + r.base());
            }
        }
        this.progress = new AtomicLongArray(threads() * PAD);
    }

    int threads() {
        return sliceStart.length - 1;
    }

    /** The running phase is about to put its insert of operation {@code k}. */
    void starting(long k) {
        progress.set(threadOf(k) * PAD, k + 1);
    }

    /** The running phase's put of operation {@code k} has returned. */
    void done(long k) {
        progress.set(threadOf(k) * PAD + PAD / 2, k + 1);
    }

    /** Before a scan: each thread's done bound into {@code doneOut} (length {@link #threads}). */
    void readDone(long[] doneOut) {
        for (int u = 0; u < doneOut.length; u++) {
            doneOut[u] = progress.get(u * PAD + PAD / 2);
        }
    }

    /**
     * Whether a scan from loaded id {@code target} for up to {@code length} records that handed out {@code seen}
     * entries in {@code ks} / {@code vs} is right, {@code doneBefore} read by {@link #readDone} before the scan began.
     * Called after the scan returned. Allocates nothing.
     */
    boolean check(byte[][] ks, byte[][] vs, int seen, long target, int length, long[] doneBefore) {
        if (seen < 0 || seen > length) {
            return false;
        }
        long next = target; // every key below next is accounted for
        for (int i = 0; i < seen; i++) {
            byte[] k = ks[i];
            if (k == null || k.length != keys.keySize()) {
                return false;
            }
            long id = KeySpace.idOf(k);
            if (id < next || !keys.matches(k, id) || nextCertain(next, doneBefore) < id) {
                return false;
            }
            byte[] v = vs[i];
            if (keys.isLoaded(id)) {
                if (v == null
                        || !records.matches(v, id, 0)
                                && !(loadedMayBeUpdated && records.matches(v, id, BenchRunner.UPDATE_VERSION))) {
                    return false;
                }
            } else if (!mayExist(id) || v == null || !records.matches(v, id, 0)) {
                return false;
            }
            next = id + 1;
        }
        return seen == length || nextCertain(next, doneBefore) == Long.MAX_VALUE;
    }

    /** The smallest id at or after {@code from} that certainly exists through the scan, or Long.MAX_VALUE. */
    long nextCertain(long from, long[] doneBefore) {
        long lastLoaded = 2 * (keys.num() - 1);
        if (from <= lastLoaded) {
            return from <= 0 ? 0 : from + (from & 1);
        }
        for (InsertRange r : ranges) {
            if (from >= r.base() + r.span()) {
                continue;
            }
            int[] index = r.index();
            int at = lowerBound(index, Math.max(0, from - r.base()));
            if (r.earlier()) {
                if (at < index.length) {
                    return r.base() + index[at];
                }
                continue;
            }
            while (at < index.length) {
                int k = index[at];
                int u = threadOf(k);
                if (k < doneBefore[u]) {
                    return r.base() + k;
                }
                at = lowerBound(index, sliceStart[u + 1]); // the rest of u's slice had not finished
            }
        }
        return Long.MAX_VALUE;
    }

    /** Whether an id beyond the loaded ones may exist for a scan that has returned (read after it). */
    boolean mayExist(long id) {
        for (InsertRange r : ranges) {
            long k = id - r.base();
            if (k < 0 || k >= r.span()) {
                continue;
            }
            if (Arrays.binarySearch(r.index(), (int) k) < 0) {
                return false;
            }
            return r.earlier() || k < progress.get(threadOf(k) * PAD);
        }
        return false;
    }

    private int threadOf(long k) {
        int u = 0;
        while (u + 1 < threads() && k >= sliceStart[u + 1]) {
            u++;
        }
        return u;
    }

    /** The first position of {@code a} (ascending) holding a value >= {@code x}. */
    private static int lowerBound(int[] a, long x) {
        int lo = 0;
        int hi = a.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (a[mid] < x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}

package io.bloomkv.tools.stress;

import io.bloomkv.engine.Db;
import io.bloomkv.engine.DbIterator;
import io.bloomkv.engine.Holder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * Checks a database against an {@link ExpectedState} after a (re)open, as db_stress does before it
 * starts: every key by {@code get}, {@code keyMayExist}, {@code keyExists} and a bounded seek, and the whole database
 * by a full scan. A key must read as its
 * committed state or, when a write of it was in flight, as that pending state; the keys of one
 * in-flight batch must all read old or all new. Then the pending markers are resolved to what the
 * database holds, so the next run starts from an exact expected state.
 */
public final class StressVerifier {
    private StressVerifier() {}

    /** What a verification found. {@code lost}: keys matching neither state; {@code wrong}: any other wrong answer. */
    public record Result(
            int keys, long lost, long wrong, long pendingLanded, long pendingDropped, List<String> problems) {
        public boolean ok() {
            return lost == 0 && wrong == 0;
        }

        @Override
        public String toString() {
            return keys + " keys verified: lost " + lost + ", wrong " + wrong + ", in-flight writes landed "
                    + pendingLanded + ", dropped " + pendingDropped
                    + (problems.isEmpty() ? "" : "; first problems: " + problems);
        }
    }

    /** {@link #verifyAndResolve(Db, ExpectedState, LongConsumer)} without a progress report. */
    public static Result verifyAndResolve(Db db, ExpectedState es) {
        return verifyAndResolve(db, es, checked -> {});
    }

    /** How many keys are checked between two reports to the progress callback. */
    static final int REPORT_EVERY = 1024;

    /**
     * Checks every key in order, each by a {@code get}, the full scan up to it, {@code keyMayExist} and
     * {@code keyExists} (which must agree with the get: keyMayExist true where it found a value, any value it hands
     * back equal to the get's, keyExists exactly whether it found one) and a bounded seek of it (forward and backward),
     * then resolves the pending markers. {@code progress} hears the keys checked so far on the calling
     * thread: 0 before the first, then every {@link #REPORT_EVERY} keys, and all of them at the end.
     */
    public static Result verifyAndResolve(Db db, ExpectedState es, LongConsumer progress) {
        int n = es.keys();
        long lost = 0;
        long wrong = 0;
        long landed = 0;
        long dropped = 0;
        List<String> problems = new ArrayList<>();
        byte[][] got = new byte[n][];
        // 1 = reads as the committed state only, 2 = the pending state only, 3 = both.
        byte[] outcome = new byte[n];
        Map<Long, Integer> batchOutcome = new HashMap<>();
        int seen = 0;
        progress.accept(0);
        // One pass over the keys, so that the keys checked are a count of all that is done: the full scan advances
        // with the gets (it stops before the next key, so every entry it reaches is of a key already read by get) and
        // must show exactly what they saw, and only stress keys.
        try (DbIterator scan = db.iterator()) {
            scan.seekToFirst();
            for (int k = 0; k < n; k++) {
                byte[] v = db.get(StressValue.key(k));
                got[k] = v;
                long c = es.committed(k);
                long p = es.pending(k);
                boolean mc = StressValue.matches(k, c, v);
                boolean mp = p >= 0 && StressValue.matches(k, p, v);
                outcome[k] = (byte) ((mc ? 1 : 0) | (mp ? 2 : 0));
                if (!mc && !mp) {
                    if (v != null && StressValue.versionOf(k, v) < 0) {
                        wrong++;
                        note(problems, "key " + k + ": malformed value of " + v.length + " bytes");
                    } else {
                        lost++;
                        note(
                                problems,
                                "key " + k + ": expected state " + describe(c)
                                        + (p >= 0 ? " or in-flight " + describe(p) : "") + ", database has "
                                        + (v == null ? "nothing" : "version " + StressValue.versionOf(k, v)));
                    }
                }
                if (p >= 0 && (mc != mp)) {
                    long id = es.pendingWrite(k);
                    int o = mc ? 1 : 2;
                    Integer prev = batchOutcome.putIfAbsent(id, o);
                    if (prev != null && prev != o) {
                        wrong++;
                        note(
                                problems,
                                "write " + Long.toHexString(id) + " half applied (key " + k + " reads "
                                        + (mc ? "old" : "new") + ", another key of the batch the other)");
                    }
                }
                // The scan's entries before the next key (after the last key: all the rest, foreign keys included).
                byte[] next = k + 1 < n ? StressValue.key(k + 1) : null;
                for (; scan.valid() && (next == null || Arrays.compareUnsigned(scan.key(), next) < 0); scan.next()) {
                    int j = StressValue.keyNumber(scan.key());
                    if (j < 0 || j >= n) {
                        wrong++;
                        note(
                                problems,
                                "scan: foreign key "
                                        + new String(scan.key(), java.nio.charset.StandardCharsets.ISO_8859_1));
                        continue;
                    }
                    seen++;
                    if (got[j] == null || !Arrays.equals(got[j], scan.value())) {
                        wrong++;
                        note(problems, "scan: key " + j + " differs from get");
                    }
                }
                // keyMayExist and keyExists: no writer runs, so they must agree with the get.
                Holder<byte[]> held = new Holder<>();
                boolean may = db.keyMayExist(StressValue.key(k), held);
                boolean exists = db.keyExists(StressValue.key(k));
                if ((got[k] != null && !may)
                        || (held.getValue() != null && !Arrays.equals(held.getValue(), got[k]))
                        || exists != (got[k] != null)) {
                    wrong++;
                    note(
                            problems,
                            "key " + k + ": keyMayExist " + may + (held.getValue() != null ? " with a value" : "")
                                    + ", keyExists " + exists + ", get " + (got[k] != null ? "found" : "missed"));
                }
                // A bounded seek: it reads through the tables' range filters (Options.rangeFilterBitsPerKey), which
                // must never hide a key in [k, k + 1), forward or backward.
                io.bloomkv.engine.ReadOptions ro = io.bloomkv.engine.ReadOptions.defaults()
                        .iterateLowerBound(StressValue.key(k))
                        .iterateUpperBound(StressValue.key(k + 1));
                try (DbIterator it = db.iterator(ro)) {
                    it.seek(StressValue.key(k));
                    boolean forward = it.valid();
                    it.seekForPrev(StressValue.key(k));
                    boolean backward = it.valid();
                    if (forward != (got[k] != null) || backward != (got[k] != null)) {
                        wrong++;
                        note(
                                problems,
                                "bounded seek of key " + k + ": forward " + (forward ? "found" : "missed")
                                        + ", backward " + (backward ? "found" : "missed") + ", get "
                                        + (got[k] != null ? "found" : "missed"));
                    }
                }
                if ((k + 1) % REPORT_EVERY == 0 && k + 1 < n) {
                    progress.accept(k + 1);
                }
            }
        }
        int present = 0;
        for (byte[] v : got) {
            if (v != null) {
                present++;
            }
        }
        if (seen != present) {
            wrong++;
            note(problems, "scan saw " + seen + " keys, gets found " + present);
        }
        // Resolve the in-flight writes to what the database holds.
        for (int k = 0; k < n; k++) {
            long p = es.pending(k);
            if (p < 0) {
                continue;
            }
            if (outcome[k] == 2) {
                es.commit(k, p);
                landed++;
            } else {
                es.commit(k, es.committed(k));
                dropped++;
            }
        }
        progress.accept(n);
        return new Result(n, lost, wrong, landed, dropped, problems);
    }

    static String describe(long state) {
        return ExpectedState.exists(state)
                ? "version " + ExpectedState.version(state)
                : "absent (version " + ExpectedState.version(state) + ")";
    }

    private static void note(List<String> problems, String p) {
        if (problems.size() < 5) {
            problems.add(p);
        }
    }
}

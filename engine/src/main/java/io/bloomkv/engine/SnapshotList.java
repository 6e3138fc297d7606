package io.bloomkv.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/** The open snapshots' sequence numbers, as a multiset, so compaction can ask for the oldest. Thread-safe. */
final class SnapshotList {
    private final ConcurrentSkipListMap<Long, Integer> counts = new ConcurrentSkipListMap<>();

    synchronized void add(long sequence) {
        counts.merge(sequence, 1, Integer::sum);
    }

    synchronized void remove(long sequence) {
        counts.computeIfPresent(sequence, (k, n) -> n == 1 ? null : n - 1);
    }

    /** Oldest open snapshot's sequence, or {@code fallback} when none is open. */
    long oldest(long fallback) {
        Map.Entry<Long, Integer> e = counts.firstEntry();
        return e == null ? fallback : e.getKey();
    }

    /** The newest live snapshot's sequence, or {@code fallback} when there is none. */
    long newest(long fallback) {
        Map.Entry<Long, Integer> e = counts.lastEntry();
        return e == null ? fallback : e.getKey();
    }

    int size() {
        return counts.values().stream().mapToInt(Integer::intValue).sum();
    }
}

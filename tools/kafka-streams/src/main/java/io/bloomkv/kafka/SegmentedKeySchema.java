package io.bloomkv.kafka;

import org.apache.kafka.common.utils.Bytes;

/**
 * How a segmented store lays out its composite keys: which timestamp places a key in a segment, the
 * scan bounds of a fetch and the filter of the entries a scan passes over (Kafka's
 * {@code SegmentedBytesStore.KeySchema}). Implemented by {@link WindowKeyLayout} and {@link SessionKeyLayout}.
 */
interface SegmentedKeySchema {
    /** The timestamp that chooses the segment of a stored key (window start; session end). */
    long segmentTimestamp(byte[] storeKey);

    /** Inclusive lower scan bound of a key-range fetch from {@code key}; null when {@code key} is null (open). */
    byte[] lowerRange(Bytes key, long from);

    /** Inclusive upper scan bound of a key-range fetch to {@code key}; null when {@code key} is null (open). */
    byte[] upperRange(Bytes key, long to);

    /** Inclusive lower scan bound of a single-key fetch: the key's composite key at time {@code from}. */
    byte[] lowerRangeFixedSize(Bytes key, long from);

    /** Inclusive upper scan bound of a single-key fetch: the key's composite key at time {@code to}. */
    byte[] upperRangeFixedSize(Bytes key, long to);

    /** True when the stored key belongs to the answer of a fetch (key in [keyFrom, keyTo], null open; time in range). */
    boolean matches(byte[] storeKey, Bytes keyFrom, Bytes keyTo, long from, long to);

    /** The latest segment timestamp a fetch up to {@code to} must search (a window: {@code to}; a session: any end). */
    long searchUpperTime(long to);

    /** A fetch with {@code to} before the first live time is empty without a search (window stores only). */
    boolean emptyWhenToBeforeFrom();
}

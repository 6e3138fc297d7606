package io.bloomkv.kafka;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The versions of one key held in one segment of a {@link BloomKvVersionedStore}: the value of the segment
 * database's row for that key. Counterpart of Kafka's {@code RocksDBVersionedStoreSegmentValueFormatter}, whose
 * semantics it keeps exactly (including the "degenerate" row of a lone tombstone, and the truncation that
 * reconciles a partial two-segment write), in its own layout.
 *
 * <pre>
 * offset  width  field
 * 0       1      format      0x01 ({@link #FORMAT_V1})
 * 1       8      next_ts     validTo of the newest version in the row (big-endian, as Kafka's timestamps)
 * 9       8      min_ts      validFrom of the oldest version in the row
 * 17      4      count       number of versions, >= 1
 * 21      12*n   versions    newest first: validFrom (8) then value size (4, signed; -1 = tombstone)
 * ...     sum    values      the values' bytes, newest first (a tombstone has none)
 * </pre>
 *
 * The validTo of version i is the validFrom of version i-1 (next_ts for version 0). A row is degenerate when
 * {@code next_ts == min_ts}: a single tombstone put when no version of the key was in reach; such a row only
 * answers {@link #nextTimestamp} / {@link #minTimestamp} and is replaced (never searched) by the writes below.
 * A decoded row keeps its versions in two parallel arrays (validFrom and value, newest first), grown in place: a row
 * rewritten many times (a restore batch, a hot key) is not copied per change. Not thread-safe: one put at a time
 * uses it.
 */
final class VersionedSegmentValue {
    /** The format byte of the layout above. */
    static final byte FORMAT_V1 = 0x01;

    private static final int HEADER = 1 + 8 + 8 + 4;
    private static final int ENTRY = 8 + 4;

    private long nextTimestamp;
    private long minTimestamp;
    private boolean degenerate;
    /** validFrom of versions {@code [0, count)}, newest first. */
    private long[] timestamps;
    /** value of versions {@code [0, count)}, newest first; null = tombstone. */
    private byte[][] values;

    private int count;

    private VersionedSegmentValue() {
        this(1);
    }

    /** Room for {@code capacity} versions plus the one a put adds, so a decoded row is not regrown. */
    private VersionedSegmentValue(int capacity) {
        timestamps = new long[capacity + 1];
        values = new byte[capacity + 1][];
    }

    /** A row holding one version (degenerate when {@code validFrom == validTo}, as Kafka's newSegmentValueWithRecord). */
    static VersionedSegmentValue withRecord(byte[] value, long validFrom, long validTo) {
        VersionedSegmentValue v = new VersionedSegmentValue();
        v.initialize(value, validFrom, validTo);
        return v;
    }

    static long nextTimestamp(byte[] raw) {
        check(raw);
        return BigEndian.getLong(raw, 1);
    }

    static long minTimestamp(byte[] raw) {
        check(raw);
        return BigEndian.getLong(raw, 9);
    }

    private static void check(byte[] raw) {
        if (raw.length < HEADER || raw[0] != FORMAT_V1) {
            throw new IllegalStateException("not a bloomkv versioned segment row (length " + raw.length + ")");
        }
    }

    private static int count(byte[] raw) {
        int count = BigEndian.getInt(raw, 17);
        if (count < 1 || HEADER + (long) count * ENTRY > raw.length) {
            throw new IllegalStateException(
                    "corrupt bloomkv versioned segment row: count " + count + ", length " + raw.length);
        }
        return count;
    }

    /**
     * {@link #find} on the encoded row, without decoding it: only the found version's value is copied (the read path
     * of {@code get(key, asOf)}, which touches one version of a row that may hold hundreds). Same precondition:
     * {@code minTimestamp <= timestamp < nextTimestamp}.
     */
    static Found find(byte[] raw, long timestamp) {
        check(raw);
        long next = BigEndian.getLong(raw, 1);
        long min = BigEndian.getLong(raw, 9);
        if (timestamp < min) {
            throw new IllegalArgumentException("Timestamp is too small to be found in this segment.");
        }
        if (timestamp >= next) {
            throw new IllegalArgumentException("Timestamp is too large to be found in this segment.");
        }
        int count = count(raw);
        int valuePos = HEADER + count * ENTRY;
        long validTo = next;
        for (int i = 0; i < count; i++) {
            long ts = BigEndian.getLong(raw, HEADER + i * ENTRY);
            int size = BigEndian.getInt(raw, HEADER + i * ENTRY + 8);
            if (ts <= timestamp) {
                if (size < 0) {
                    return new Found(i, ts, validTo, null);
                }
                if (valuePos + (long) size > raw.length) {
                    throw new IllegalStateException("corrupt bloomkv versioned segment row: value past the end");
                }
                return new Found(i, ts, validTo, Arrays.copyOfRange(raw, valuePos, valuePos + size));
            }
            validTo = ts;
            valuePos += Math.max(size, 0);
        }
        throw new IllegalStateException("Search in segment expected to find result but did not.");
    }

    /**
     * The row with one more version, the newest, when it follows the row's newest without a gap
     * ({@code validFrom == nextTimestamp}) on a row that is not degenerate: the common move of an in-order put (the
     * previous latest value goes into the segment of its new validTo). Built with two block copies of the old row
     * instead of a decode and encode; returns null when the case is not that one (use {@link #insertAsLatest}).
     * Same result as {@code decode(raw).insertAsLatest(validFrom, validTo, value).encode()}.
     */
    static byte[] withNewest(byte[] raw, long validFrom, long validTo, byte[] value) {
        check(raw);
        long next = BigEndian.getLong(raw, 1);
        long min = BigEndian.getLong(raw, 9);
        if (next != validFrom || next == min) {
            return null;
        }
        int count = count(raw);
        int entriesEnd = HEADER + count * ENTRY;
        int valueSize = value == null ? 0 : value.length;
        byte[] out = new byte[raw.length + ENTRY + valueSize];
        out[0] = FORMAT_V1;
        BigEndian.putLong(out, 1, validTo);
        BigEndian.putLong(out, 9, min);
        BigEndian.putInt(out, 17, count + 1);
        BigEndian.putLong(out, HEADER, validFrom);
        BigEndian.putInt(out, HEADER + 8, value == null ? -1 : value.length);
        System.arraycopy(raw, HEADER, out, HEADER + ENTRY, count * ENTRY);
        int pos = entriesEnd + ENTRY;
        if (value != null) {
            System.arraycopy(value, 0, out, pos, valueSize);
            pos += valueSize;
        }
        System.arraycopy(raw, entriesEnd, out, pos, raw.length - entriesEnd);
        return out;
    }

    static VersionedSegmentValue decode(byte[] raw) {
        check(raw);
        int count = count(raw);
        VersionedSegmentValue v = new VersionedSegmentValue(count);
        v.nextTimestamp = BigEndian.getLong(raw, 1);
        v.minTimestamp = BigEndian.getLong(raw, 9);
        int valuePos = HEADER + count * ENTRY;
        for (int i = 0; i < count; i++) {
            v.timestamps[i] = BigEndian.getLong(raw, HEADER + i * ENTRY);
            int size = BigEndian.getInt(raw, HEADER + i * ENTRY + 8);
            if (size >= 0) {
                if (valuePos + (long) size > raw.length) {
                    throw new IllegalStateException("corrupt bloomkv versioned segment row: value past the end");
                }
                v.values[i] = Arrays.copyOfRange(raw, valuePos, valuePos + size);
                valuePos += size;
            }
        }
        v.count = count;
        v.degenerate = v.nextTimestamp == v.minTimestamp;
        return v;
    }

    byte[] encode() {
        int size = HEADER + count * ENTRY;
        for (int i = 0; i < count; i++) {
            size += values[i] == null ? 0 : values[i].length;
        }
        byte[] out = new byte[size];
        out[0] = FORMAT_V1;
        BigEndian.putLong(out, 1, nextTimestamp);
        BigEndian.putLong(out, 9, minTimestamp);
        BigEndian.putInt(out, 17, count);
        int pos = HEADER + count * ENTRY;
        for (int i = 0; i < count; i++) {
            byte[] value = values[i];
            BigEndian.putLong(out, HEADER + i * ENTRY, timestamps[i]);
            BigEndian.putInt(out, HEADER + i * ENTRY + 8, value == null ? -1 : value.length);
            if (value != null) {
                System.arraycopy(value, 0, out, pos, value.length);
                pos += value.length;
            }
        }
        return out;
    }

    long nextTimestamp() {
        return nextTimestamp;
    }

    long minTimestamp() {
        return minTimestamp;
    }

    /** One version found in a row: its index (0 = newest), validity interval and value (null = tombstone). */
    record Found(int index, long validFrom, long validTo, byte[] value) {}

    /**
     * The newest version with validFrom {@code <= timestamp}; requires {@code minTimestamp <= timestamp < nextTimestamp}
     * (so never on a degenerate row), else IllegalArgumentException as Kafka's {@code find}.
     */
    Found find(long timestamp) {
        if (timestamp < minTimestamp) {
            throw new IllegalArgumentException("Timestamp is too small to be found in this segment.");
        }
        if (timestamp >= nextTimestamp) {
            throw new IllegalArgumentException("Timestamp is too large to be found in this segment.");
        }
        long validTo = nextTimestamp;
        for (int i = 0; i < count; i++) {
            long ts = timestamps[i];
            if (ts <= timestamp) {
                return new Found(i, ts, validTo, values[i]);
            }
            validTo = ts;
        }
        throw new IllegalStateException("Search in segment expected to find result but did not.");
    }

    /** The non-tombstone versions valid at some time in {@code [fromTime, toTime]}, newest first (Kafka's findAll). */
    List<Found> findAll(long fromTime, long toTime) {
        List<Found> out = new ArrayList<>();
        long validTo = nextTimestamp;
        for (int i = 0; i < count; i++) {
            long ts = timestamps[i];
            byte[] value = values[i];
            if (value != null && ts <= toTime && validTo > fromTime) {
                out.add(new Found(i, ts, validTo, value));
            }
            validTo = ts;
        }
        return out;
    }

    /**
     * Adds a version as the newest of the row. A validFrom older than the row's next_ts means an earlier put wrote
     * the older segment but not the newer one: the row is first truncated to validFrom (Kafka's recovery of a
     * partial write). A gap between next_ts and validFrom becomes a tombstone at next_ts.
     */
    void insertAsLatest(long validFrom, long validTo, byte[] value) {
        if (validFrom < nextTimestamp) {
            truncateToTimestamp(validFrom);
        }
        if (nextTimestamp == validFrom) {
            if (degenerate) {
                initialize(value, validFrom, validTo);
            } else {
                insertAt(0, validFrom, value);
            }
        } else {
            if (degenerate) {
                initialize(null, nextTimestamp, validFrom);
            } else {
                insertAt(0, nextTimestamp, null);
            }
            insertAt(0, validFrom, value);
        }
        nextTimestamp = validTo;
    }

    /** Adds a version older than every version of the row (a degenerate row is replaced, keeping its next_ts). */
    void insertAsEarliest(long timestamp, byte[] value) {
        if (degenerate) {
            initialize(value, timestamp, nextTimestamp);
        } else {
            insertAt(count, timestamp, value);
        }
    }

    /** Inserts at {@code index} (as found by {@link #find}); appending makes it the oldest (min_ts follows). */
    void insert(long timestamp, byte[] value, int index) {
        if (degenerate || index < 0 || index > count) {
            throw new IllegalStateException("Cannot insert at index " + index + " of this segment row");
        }
        insertAt(index, timestamp, value);
    }

    /** Replaces the version at {@code index}; replacing the oldest moves min_ts. */
    void update(long timestamp, byte[] value, int index) {
        if (index < 0 || index >= count) {
            throw new IllegalArgumentException("no version at index " + index);
        }
        timestamps[index] = timestamp;
        values[index] = value;
        if (index == count - 1) {
            minTimestamp = timestamp;
        }
    }

    private void insertAt(int index, long timestamp, byte[] value) {
        if (degenerate) {
            throw new IllegalStateException("Cannot insert at negative index or into degenerate segment.");
        }
        boolean oldest = index == count;
        if (count == timestamps.length) {
            int capacity = Math.max(4, count + (count >> 1));
            timestamps = Arrays.copyOf(timestamps, capacity);
            values = Arrays.copyOf(values, capacity);
        }
        System.arraycopy(timestamps, index, timestamps, index + 1, count - index);
        System.arraycopy(values, index, values, index + 1, count - index);
        timestamps[index] = timestamp;
        values[index] = value;
        count++;
        if (oldest) {
            minTimestamp = timestamp;
        }
    }

    private void initialize(byte[] value, long validFrom, long validTo) {
        Arrays.fill(values, 0, count, null);
        timestamps[0] = validFrom;
        values[0] = value;
        count = 1;
        minTimestamp = validFrom;
        nextTimestamp = validTo;
        degenerate = nextTimestamp == minTimestamp;
    }

    /** Drops every version at or after {@code timestamp} and ends the row there (next_ts = timestamp). */
    private void truncateToTimestamp(long timestamp) {
        if (timestamp <= minTimestamp) {
            initialize(null, timestamp, timestamp);
            return;
        }
        Found f = find(timestamp);
        int drop = f.index() + (f.validFrom() == timestamp ? 1 : 0);
        System.arraycopy(timestamps, drop, timestamps, 0, count - drop);
        System.arraycopy(values, drop, values, 0, count - drop);
        Arrays.fill(values, count - drop, count, null);
        count -= drop;
        nextTimestamp = timestamp;
    }
}

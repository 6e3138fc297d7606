package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.ValueType;

/**
 * One point read on its way through the tables, the argument of {@link TableReader#get(PointRead)} (LevelDB's
 * {@code LookupKey} and {@code Saver}, RocksDB's {@code GetContext}): the user key, its one {@code Hashing.hash64}
 * (every table's filter is asked with it), the snapshot, the sink the tables feed the key's visible entries to, and
 * the filter probes made so far.
 *
 * <p>Two sinks. Made with {@link #newest}, the read wants only the newest visible entry: the first one a table finds
 * ends it and is {@link #entry()} (a value, a tombstone, or a merge operand the caller reads on past). Made with
 * {@link #collecting}, every visible entry goes to a {@link KeyLookup} (merge operands, range tombstones) until it is
 * done.
 *
 * <p>Counting: each probe's filter answer is tallied here and added to the database's {@link ReadCounters} once per
 * read ({@link #recordProbes()}): every counter update is an atomic read-modify-write, which also fences the next
 * table's filter load. Not thread-safe: one read, one thread.
 */
public final class PointRead {
    private final byte[] userKey;
    private final long hash;
    private final long snapshot;
    /** The collecting sink, or null: the read ends at the newest visible entry. */
    private final KeyLookup lookup;

    private TableReader.Entry entry;
    private int filterChecks;
    private int filterUseful;
    /** The counters of the tables probed (one database's, shared by all its tables); null until a table is probed. */
    private ReadCounters counters;

    private PointRead(byte[] userKey, long hash, long snapshot, KeyLookup lookup) {
        this.userKey = userKey;
        this.hash = hash;
        this.snapshot = snapshot;
        this.lookup = lookup;
    }

    /** A read of the newest entry of {@code userKey} visible at {@code snapshot}; {@code hash} = its hash64. */
    public static PointRead newest(byte[] userKey, long hash, long snapshot) {
        return new PointRead(userKey, hash, snapshot, null);
    }

    /** A read feeding {@code lookup} every visible entry of its key, newest first, until it is done. */
    public static PointRead collecting(KeyLookup lookup, long hash) {
        return new PointRead(lookup.userKey(), hash, lookup.snapshot(), lookup);
    }

    public byte[] userKey() {
        return userKey;
    }

    public long hash() {
        return hash;
    }

    public long snapshot() {
        return snapshot;
    }

    /** The entry that ended a {@link #newest} read, or null while none was found. */
    public TableReader.Entry entry() {
        return entry;
    }

    /** True when the read needs no more sources. */
    public boolean isDone() {
        return lookup == null ? entry != null : lookup.isDone();
    }

    /**
     * Feeds the next older visible entry of the key ({@code value} null for a tombstone); true when the read is done.
     * Called by the table's block search only.
     */
    boolean add(ValueType type, long sequence, byte[] value) {
        if (lookup == null) {
            entry = new TableReader.Entry(type, sequence, value);
            return true;
        }
        return lookup.add(type, sequence, value);
    }

    /**
     * Ends a {@link #collecting} read at a table that would need a file read to go on ({@link KeyLookup#incomplete()}).
     * Called by the table's cache-only search only ({@link TableReader#getCached}).
     */
    void incomplete() {
        if (lookup == null) {
            throw new IllegalStateException("a cache-only read collects into a KeyLookup");
        }
        lookup.incomplete();
    }

    /** Tallies one filter probe of a table counting into {@code c}; {@code ruledOut} when it answered "definitely not". */
    void probed(ReadCounters c, boolean ruledOut) {
        counters = c;
        filterChecks++;
        if (ruledOut) {
            filterUseful++;
        }
    }

    /** Adds the probes tallied so far to the counters of the tables probed (once per read), and clears the tally. */
    public void recordProbes() {
        if (counters != null && filterChecks != 0) {
            counters.recordProbes(filterChecks, filterUseful);
        }
        filterChecks = 0;
        filterUseful = 0;
    }
}

package io.bloomkv.engine.internal;

import io.bloomkv.engine.MergeOperator;
import io.bloomkv.engine.MergeOperatorException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The state of one point read that may have to look past the newest entry of its key (RocksDB's {@code GetContext}):
 * merge operands collected until a value or a tombstone (or the oldest source) is reached, and the newest range
 * tombstone covering the key seen so far. Sources (memtables, then tables, newest first) feed it each visible entry of
 * the key, newest first, until {@link #add} answers done.
 *
 * <p>Invariant relied on: every entry of a user key in a deeper source is older than every entry of it in a shallower
 * one (a range tombstone counts as an entry of each key it covers: table bounds include their tombstones' extent, so
 * a compaction never moves an entry below a tombstone that is newer).
 */
public final class KeyLookup {
    private final byte[] userKey;
    private final long snapshot;
    private final MergeOperator operator;
    /** Newest first. */
    private final List<byte[]> operands = new ArrayList<>(4);

    private long coveringTombstone;
    private boolean done;
    /** Set by {@link #incomplete()}: a source could not answer without a file read (a cache-only lookup). */
    private boolean incomplete;

    private byte[] value;

    /** @param operator the database's merge operator, or null (then a MERGE entry is an error) */
    public KeyLookup(byte[] userKey, long snapshot, MergeOperator operator) {
        this.userKey = userKey;
        this.snapshot = snapshot;
        this.operator = operator;
    }

    public byte[] userKey() {
        return userKey;
    }

    public long snapshot() {
        return snapshot;
    }

    /** Notes a range tombstone of sequence {@code sequence} (visible at the snapshot) covering the key. */
    public void coveredBy(long sequence) {
        if (sequence > coveringTombstone) {
            coveringTombstone = sequence;
        }
    }

    /** The sequence of the newest covering range tombstone seen so far; 0 = none. */
    public long coveringTombstone() {
        return coveringTombstone;
    }

    /**
     * True when the key's answer is known without asking a source whose newest entry has sequence
     * {@code largestSequence}: a covering range tombstone is newer than all of it (and than all deeper sources).
     * The lookup is then finished as at a tombstone.
     */
    public boolean coversAllOf(long largestSequence) {
        if (coveringTombstone > largestSequence) {
            add(ValueType.DELETE, 0, null);
            return true;
        }
        return false;
    }

    public boolean isDone() {
        return done;
    }

    /**
     * Feeds the next older visible entry ({@code sequence <= snapshot}); {@code value} is the PUT's value or the MERGE's
     * operand. An entry older than a covering range tombstone counts as a DELETE. Returns true when the answer is known.
     */
    public boolean add(ValueType type, long sequence, byte[] value) {
        if (done) {
            return true;
        }
        ValueType t = sequence < coveringTombstone ? ValueType.DELETE : type;
        switch (t) {
            case PUT:
                this.value = operands.isEmpty() ? value : merge(value);
                done = true;
                break;
            case DELETE:
                this.value = operands.isEmpty() ? null : merge(null);
                done = true;
                break;
            case MERGE:
                operands.add(value);
                break;
            default:
                throw new IllegalStateException("type " + t);
        }
        return done;
    }

    /**
     * Ends a cache-only lookup ({@code Version#collectCached}, for {@code Db.keyMayExist}) at a source that would need
     * a file read to go on (a data block the block cache does not hold): the lookup is done, its answer unknown.
     * Entries fed before stay collected but make no value; {@link #finish()} must not be called.
     */
    public void incomplete() {
        incomplete = true;
        done = true;
    }

    /** True when {@link #incomplete()} ended the lookup: the key's value is unknown (it may or may not exist). */
    public boolean isIncomplete() {
        return incomplete;
    }

    /** Ends the lookup after the oldest source: operands left are merged onto no value. Returns the value or null. */
    public byte[] finish() {
        if (incomplete) {
            throw new IllegalStateException("an incomplete lookup has no value");
        }
        if (!done) {
            value = operands.isEmpty() ? null : merge(null);
            done = true;
        }
        return value;
    }

    /** True once any merge operand was met. */
    public boolean sawOperands() {
        return !operands.isEmpty();
    }

    private byte[] merge(byte[] base) {
        List<byte[]> oldestFirst = new ArrayList<>(operands);
        Collections.reverse(oldestFirst);
        return fullMerge(operator, userKey, base, oldestFirst);
    }

    /**
     * {@code operator.fullMerge}, its failures (a throw, a null result, no operator) as {@link MergeOperatorException}.
     */
    public static byte[] fullMerge(MergeOperator operator, byte[] userKey, byte[] base, List<byte[]> oldestFirst) {
        if (operator == null) {
            throw new MergeOperatorException(
                    "the database holds merge operands but was opened without a merge operator");
        }
        byte[] out;
        try {
            out = operator.fullMerge(userKey, base, Collections.unmodifiableList(oldestFirst));
        } catch (RuntimeException e) {
            throw new MergeOperatorException("merge operator " + operator.name() + " failed", e);
        }
        if (out == null) {
            throw new MergeOperatorException("merge operator " + operator.name() + " returned null from fullMerge");
        }
        return out;
    }

    /** {@code operator.partialMerge}; null when it declines; a throw as {@link MergeOperatorException}. */
    public static byte[] partialMerge(MergeOperator operator, byte[] userKey, byte[] older, byte[] newer) {
        try {
            return operator.partialMerge(userKey, older, newer);
        } catch (RuntimeException e) {
            throw new MergeOperatorException("merge operator " + operator.name() + " failed in partialMerge", e);
        }
    }
}

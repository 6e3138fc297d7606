package io.bloomkv.engine.internal.iterator;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import java.util.Arrays;
import java.util.NoSuchElementException;

/**
 * One table's iterator behind its range filter, for an iterator bounded by [lower, upper) (user keys; either may be
 * null): a seek asks the table's range filter whether [target, upper) (forward; upper exclusive, as the iterator's, so
 * a table whose next key is the bound itself can still be ruled out) or [lower, target] (backward; [lower, upper) when
 * the target is at the upper bound) may hold a key, and when it says no the table is left unread, its index included (the inner table iterator is opened lazily,
 * on the first seek the filter lets through). The bounded {@code DbIterator} never returns a key outside
 * [lower, upper), and entries outside it cannot shadow keys inside (shadowing is per user key), so a table with no key
 * in the range contributes nothing: it may as well be positioned at its end. Counterpart: none in RocksDB or LevelDB
 * (RocksDB's prefix Bloom skips a table only for a seek within one fixed-length prefix); SuRF in the research RocksDB
 * fork filtered seeks this way.
 *
 * <p>Only the table's point entries (puts, deletes, merge operands) sit behind the range filter. Its range tombstones
 * do not: a read gathers every table's tombstones into its {@code SuperVersion} apart from the point iterators, so
 * skipping a table here never lets a key its tombstones cover show through. The caller keeps the table alive (its
 * Version).
 */
public final class RangeFilteredIterator implements InternalIterator {
    private final TableReader table;
    private final byte[] lower;
    private final byte[] upper;
    /** The answer the positioning in progress already has for this table, or null. */
    private final RangeProbeMemo memo;

    private InternalIterator inner;
    /** The last seek was ruled out by the range filter: not valid. */
    private boolean skipped;
    /**
     * The last positioning went on because the range filter said "may hold" (asked now or by the up-front check), so
     * finding no key in the range is the filter's false positive; false when the filter was not asked.
     */
    private boolean filterSaidMaybe;

    public RangeFilteredIterator(TableReader table, byte[] lower, byte[] upper) {
        this(table, lower, upper, null);
    }

    /** As {@link #RangeFilteredIterator(TableReader, byte[], byte[])}, taking answers already had from {@code memo}. */
    public RangeFilteredIterator(TableReader table, byte[] lower, byte[] upper, RangeProbeMemo memo) {
        this.table = table;
        this.lower = lower;
        this.upper = upper;
        this.memo = memo;
    }

    private InternalIterator inner() {
        if (inner == null) {
            inner = table.iterator();
        }
        skipped = false;
        return inner;
    }

    /** Length of an internal key's user part (the key is passed with it, never copied). */
    private static int userKeyLength(byte[] internalKey) {
        return internalKey.length >= InternalKey.TRAILER_SIZE
                ? internalKey.length - InternalKey.TRAILER_SIZE
                : internalKey.length;
    }

    /** True (and the iterator not valid) when the table's range filter rules out [lo, hi] ([lo, hi) if not inclusive). */
    private boolean ruledOut(byte[] lo, byte[] hi, boolean hiInclusive) {
        return ruledOut(lo, lo == null ? 0 : lo.length, hi, hi == null ? 0 : hi.length, hiInclusive);
    }

    /**
     * An answer the positioning already has ({@link RangeProbeMemo}) is taken as it is; a range outside the table's
     * [smallest, largest] user keys is ruled out on the table's properties, with no probe (and none counted); otherwise
     * the filter is asked when the table says a probe is worthwhile ({@link TableReader#rangeProbeWorthwhile}), and
     * the table read without one when not.
     */
    private boolean ruledOut(byte[] lo, int loLength, byte[] hi, int hiLength, boolean hiInclusive) {
        filterSaidMaybe = false;
        if (!table.hasRangeFilter() || (lo == null && hi == null)) {
            return false;
        }
        if (memo != null && memo.saidMaybe(table, lo, loLength, hi, hiLength, hiInclusive)) {
            filterSaidMaybe = memo.probed();
            return false;
        }
        if (outsideKeyRange(lo, loLength, hi, hiLength, hiInclusive)) {
            skipped = true;
            return true;
        }
        if (!table.rangeProbeWorthwhile()) {
            return false;
        }
        if (table.rangeMayContainRetained(lo, loLength, hi, hiLength, hiInclusive)) {
            filterSaidMaybe = true;
            return false;
        }
        skipped = true;
        return true;
    }

    private boolean outsideKeyRange(byte[] lo, int loLength, byte[] hi, int hiLength, boolean hiInclusive) {
        byte[] small = table.properties().smallestUserKey();
        byte[] large = table.properties().largestUserKey();
        if (small == null || large == null) {
            return false;
        }
        if (lo != null && Arrays.compareUnsigned(large, 0, large.length, lo, 0, loLength) < 0) {
            return true;
        }
        if (hi == null) {
            return false;
        }
        int cmp = Arrays.compareUnsigned(small, 0, small.length, hi, 0, hiLength);
        return cmp > 0 || (cmp == 0 && !hiInclusive);
    }

    /**
     * After a forward positioning the filter let through: no entry below upper means it was a false positive. The key
     * is only compared, so it is borrowed ({@link InternalIterator#lendKey}), not copied.
     */
    private void checkForward() {
        if (filterSaidMaybe
                && upper != null
                && (!inner.valid() || InternalKey.compareUserKey(inner.lendKey(), upper) >= 0)) {
            table.recordRangeFalsePositive();
        }
    }

    private void checkBackward() {
        if (filterSaidMaybe
                && lower != null
                && (!inner.valid() || InternalKey.compareUserKey(inner.lendKey(), lower) < 0)) {
            table.recordRangeFalsePositive();
        }
    }

    @Override
    public boolean valid() {
        return !skipped && inner != null && inner.valid();
    }

    @Override
    public void seekToFirst() {
        if (upper != null && ruledOut(null, upper, false)) {
            return;
        }
        inner().seekToFirst();
        checkForward();
    }

    @Override
    public void seek(byte[] target) {
        if (upper != null && ruledOut(target, userKeyLength(target), upper, upper.length, false)) {
            return;
        }
        inner().seek(target);
        checkForward();
    }

    @Override
    public void seekToLast() {
        if (lower != null && ruledOut(lower, null, true)) {
            return;
        }
        inner().seekToLast();
        checkBackward();
    }

    @Override
    public void seekForPrev(byte[] target) {
        if (lower != null && seekForPrevRuledOut(target)) {
            return;
        }
        inner().seekForPrev(target);
        checkBackward();
    }

    /**
     * The range a backward positioning at {@code target} (an internal key) may return keys of: [lower, target's user
     * key], or [lower, upper) when that user key is at or above the exclusive upper bound (the bounded iterator's
     * {@code seekToLast} seeks to the bound itself).
     */
    private boolean seekForPrevRuledOut(byte[] target) {
        int n = userKeyLength(target);
        if (upper != null && Arrays.compareUnsigned(target, 0, n, upper, 0, upper.length) >= 0) {
            return ruledOut(lower, lower.length, upper, upper.length, false);
        }
        return ruledOut(lower, lower.length, target, n, true);
    }

    @Override
    public void next() {
        if (!valid()) {
            throw new NoSuchElementException("iterator is not valid");
        }
        inner.next();
    }

    @Override
    public void prev() {
        if (!valid()) {
            throw new NoSuchElementException("iterator is not valid");
        }
        inner.prev();
    }

    @Override
    public byte[] key() {
        if (!valid()) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return inner.key();
    }

    @Override
    public byte[] value() {
        if (!valid()) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return inner.value();
    }

    @Override
    public void close() {
        if (inner != null) {
            inner.close();
            inner = null;
        }
        skipped = false;
    }
}

package io.bloomkv.engine.internal.iterator;

import io.bloomkv.engine.internal.table.TableReader;
import java.util.Arrays;

/**
 * The one range-filter answer a bounded {@code DbIterator} positioning already has when it goes on to build or seek
 * its merged iterator: its up-front check ({@code Version.tablesRuleOut}) stops at the first table whose filter says
 * the range may hold a key, and that table's {@link RangeFilteredIterator} then takes the answer from here instead of
 * probing the filter a second time for the same range (and counting the check twice). The answer may also be that
 * the check passed the table without asking its filter ({@code TableReader.rangeProbeWorthwhile} said no): the
 * iterator then reads the table without asking either, so a positioning decides once per table whether to probe.
 * Holds one answer, for the positioning in progress only: the iterator {@link #clear}s it when the positioning ends.
 * Confined to the thread moving its iterator, as the iterator is.
 */
public final class RangeProbeMemo {
    private TableReader table;
    private byte[] lo;
    private byte[] hi;
    private boolean hiInclusive;
    private boolean probed;

    /**
     * Records that [lo, hi] ([lo, hi) when not {@code hiInclusive}; user keys, null = open) may hold a key of
     * {@code table}: its range filter said so ({@code probed}), or the filter was not asked.
     */
    public void maybe(TableReader table, byte[] lo, byte[] hi, boolean hiInclusive, boolean probed) {
        this.table = table;
        this.lo = lo;
        this.hi = hi;
        this.hiInclusive = hiInclusive;
        this.probed = probed;
    }

    public void clear() {
        table = null;
        lo = null;
        hi = null;
        probed = false;
    }

    /** Whether the answer {@link #saidMaybe} matched came from the filter (a probe), not from passing it by. */
    boolean probed() {
        return probed;
    }

    /**
     * True when the answer recorded is "may hold" for {@code table} and exactly the range from lo[0, loLength) to
     * hi[0, hiLength), hi inclusive or not as {@code hiInclusive} says (an open hi matches either way).
     */
    boolean saidMaybe(TableReader table, byte[] lo, int loLength, byte[] hi, int hiLength, boolean hiInclusive) {
        return this.table == table
                && sameBound(this.lo, lo, loLength)
                && sameBound(this.hi, hi, hiLength)
                && (hi == null || this.hiInclusive == hiInclusive);
    }

    private static boolean sameBound(byte[] recorded, byte[] b, int length) {
        if (recorded == null || b == null) {
            return recorded == null && b == null;
        }
        return Arrays.equals(recorded, 0, recorded.length, b, 0, length);
    }
}

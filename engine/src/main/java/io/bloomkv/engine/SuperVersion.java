package io.bloomkv.engine;

import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import io.bloomkv.engine.internal.util.RefCount;
import io.bloomkv.engine.internal.version.Version;
import java.util.List;

/**
 * Everything a reader needs, captured at once: the mutable memtable, the immutable memtables
 * (newest first) and the current {@link Version}. Reference-counted; the database holds one
 * reference of the installed one, each get or iterator one more while it reads.
 */
final class SuperVersion {
    final MemTable mem;
    final List<MemTable> imms;
    final Version version;
    private final RefCount refs = new RefCount("super version");
    private final boolean immsOrVersionHaveTombstones;
    /**
     * The smallest begin and the largest end of the immutable memtables' and the tables' range tombstones (null when
     * there are none): a key outside [spanBegin, spanEnd) is covered by none of them.
     */
    private final byte[] spanBegin;

    private final byte[] spanEnd;

    /** Takes over one reference of {@code version}. */
    SuperVersion(MemTable mem, List<MemTable> imms, Version version) {
        this.mem = mem;
        this.imms = List.copyOf(imms);
        this.version = version;
        boolean ts = version.hasRangeTombstones();
        for (MemTable m : this.imms) {
            ts |= m.hasRangeTombstones();
        }
        this.immsOrVersionHaveTombstones = ts;
        byte[] begin = null;
        byte[] end = null;
        if (ts) {
            List<io.bloomkv.engine.internal.rangedel.RangeTombstone> all = new java.util.ArrayList<>();
            all.addAll(version.rangeTombstones());
            for (MemTable m : this.imms) {
                all.addAll(m.rangeTombstones());
            }
            for (io.bloomkv.engine.internal.rangedel.RangeTombstone t : all) {
                if (begin == null || java.util.Arrays.compareUnsigned(t.begin(), begin) < 0) {
                    begin = t.begin();
                }
                if (end == null || java.util.Arrays.compareUnsigned(t.end(), end) > 0) {
                    end = t.end();
                }
            }
        }
        this.spanBegin = begin;
        this.spanEnd = end;
    }

    /**
     * True when a range tombstone may affect a read: in the memtable (checked live, it may gain one), an immutable
     * memtable or a table. Point reads then take {@link PointLookup}, which weighs tombstones against entries.
     */
    boolean hasRangeTombstones() {
        if (immsOrVersionHaveTombstones || mem.hasRangeTombstones()) {
            return true;
        }
        return false;
    }

    /**
     * True when a range tombstone may cover {@code userKey}: {@link #hasRangeTombstones()} narrowed by the tombstones'
     * key span, so a database whose tombstones cover other key ranges (a store's expired segments) keeps its point
     * reads on the plain path. False only when none can: every tombstone ends at or before the key or begins after it.
     */
    boolean rangeTombstonesMayCover(byte[] userKey) {
        if (spanBegin != null
                && java.util.Arrays.compareUnsigned(userKey, spanBegin) >= 0
                && java.util.Arrays.compareUnsigned(userKey, spanEnd) < 0) {
            return true;
        }
        return mem.hasRangeTombstones() && mem.rangeTombstoneList().mayCover(userKey);
    }

    /**
     * The fragmented list of every range tombstone of this SuperVersion, kept while the memtable gains none: {@code
     * memToken} is the memtable's own fragmented list when it was made (a new object once a tombstone is added) and
     * {@code maxSequence} the newest tombstone's sequence, so a reader at or above it gets {@code all} as it is.
     */
    private record AllTombstones(RangeTombstoneList memToken, long maxSequence, RangeTombstoneList all) {}

    private volatile AllTombstones allTombstones;

    /**
     * All range tombstones visible at {@code sequence}, fragmented (for an iterator). An iterator made at the latest
     * sequence (the common case) reuses the list the previous one built until a range tombstone is added: a store that
     * expires by range deletion (Kafka's window and session stores) opens an iterator per fetch.
     */
    RangeTombstoneList rangeTombstones(long sequence) {
        if (!hasRangeTombstones()) {
            return RangeTombstoneList.EMPTY;
        }
        RangeTombstoneList memToken = mem.rangeTombstoneList();
        AllTombstones cached = allTombstones;
        if (cached != null && cached.memToken() == memToken && sequence >= cached.maxSequence()) {
            return cached.all();
        }
        List<RangeTombstone> all = new java.util.ArrayList<>();
        all.addAll(mem.rangeTombstones());
        for (MemTable m : imms) {
            all.addAll(m.rangeTombstones());
        }
        all.addAll(version.rangeTombstones());
        long maxSequence = 0;
        for (RangeTombstone t : all) {
            maxSequence = Math.max(maxSequence, t.sequence());
        }
        if (sequence >= maxSequence) {
            // Read after the memtable's list (memToken): a tombstone added meanwhile is in `all` but changes the
            // token, so the next reader rebuilds; a list kept here never lacks a tombstone its token stands for.
            RangeTombstoneList list = RangeTombstoneList.of(all);
            allTombstones = new AllTombstones(memToken, maxSequence, list);
            return list;
        }
        all.removeIf(t -> t.sequence() > sequence);
        return RangeTombstoneList.of(all);
    }

    boolean tryRetain() {
        return refs.tryRetain();
    }

    void release() {
        if (refs.release()) {
            version.release();
        }
    }
}

package io.bloomkv.engine;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.iterator.MergingIterator;
import io.bloomkv.engine.internal.iterator.RangeProbeMemo;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.rangedel.RangeTombstoneList;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * An iterator over the user keys and values of a {@link Db} at one point in time (the latest write
 * when it was created, or a {@link Snapshot}; after each {@link #refresh()} the latest write again, after a
 * {@link #refresh(Snapshot)} that snapshot), in unsigned
 * lexicographic key order, in both directions: {@link #next()} and {@link #prev()} may alternate at any point; deleted
 * keys are skipped. {@link ReadOptions#iterateLowerBound} / {@link ReadOptions#iterateUpperBound} limit what it
 * sees. It keeps the memtables and tables it reads alive until closed or refreshed, across flushes and
 * compactions. One thread at a time should move it; its methods are nevertheless mutually
 * exclusive, so {@link Db#close()} from another thread is safe: close waits for a call in progress
 * on each open iterator to return, then invalidates the iterator and releases what it holds; every
 * later call on it throws {@link DbClosedException} (never a {@code NullPointerException}, never a
 * read of released memory). Closing an iterator is idempotent, also after its database closed.
 *
 * <pre>{@code
 * try (DbIterator it = db.iterator()) {
 *     for (it.seek(from); it.valid(); it.next()) { use(it.key(), it.value()); }
 *     for (it.seekForPrev(to); it.valid(); it.prev()) { use(it.key(), it.value()); } // to, down
 * }
 * }</pre>
 *
 * <p>Direction handling is LevelDB's {@code DBIter}: going forward, the merged internal iterator sits
 * on the newest visible entry of the current key; going backward, it sits before every entry of the
 * current key, whose key and value were saved while walking back over its versions.
 */
public final class DbIterator implements AutoCloseable {
    private final Db db;
    /** The view read: retained from creation (or the last {@link #refresh}) until the next refresh or close. */
    private SuperVersion sv;
    /** The iterator positioned now: {@link #full} or a prefix seek's; null until the first positioning that needs one. */
    private MergingIterator merged;
    /** Prefix seeks (ReadOptions.prefixSameAsStart), or null; {@link #full} is the unrestricted iterator. */
    private PrefixSeek prefixSeek;
    /** Makes the unrestricted iterator over every memtable and table of {@link #sv}. */
    private Function<RangeProbeMemo, MergingIterator> makeFull;
    /** The range-filter answer the positioning in progress already has ({@link #provablyEmpty}), for its tables. */
    private final RangeProbeMemo memo = new RangeProbeMemo();
    /**
     * The unrestricted iterator; made on first use (a prefix seek never needs it, nor a bounded positioning
     * {@link #provablyEmpty} decided).
     */
    private MergingIterator full;
    /**
     * The prefix the current position is confined to, or null: a seek's or seekForPrev's target prefix, or the prefix
     * of the key seekToFirst or seekToLast found (RocksDB's {@code prefix_same_as_start} in both directions).
     */
    private byte[] prefix;

    private long sequence;
    /**
     * Inclusive lower and exclusive upper user-key bounds; null = open. The read options' bounds as
     * {@link LongKeys#iteratorBounds} reduces them: never longer than {@link Db#MAX_KEY_SIZE}.
     */
    private final byte[] lower;

    private final byte[] upper;
    /** The current entry (copies), or null when not valid. */
    private byte[] key;

    private byte[] value;
    /** True while moving backward (the merged iterator is before the current key's entries). */
    private boolean reverse;
    /** The range tombstones visible at {@link #sequence}, fragmented; null when there are none. */
    private RangeTombstoneList tombstones;
    /** Going forward after a merge: the merged iterator is already past the current key's newest entry. */
    private boolean pastCurrent;
    /**
     * The internal key of the last tombstone a forward scan passed, copied here because the merged iterator lends its
     * keys ({@link MergingIterator#lendingKeys}); refilled in place while tombstones keep one key length, so a scan
     * past many removed keys (a session store's removed sessions) allocates nothing per tombstone.
     */
    private byte[] skipScratch;

    private boolean closed;
    private boolean closedByDb;
    /** {@link Options#ttl}, or null; expired values are skipped as deleted ones, judged at {@link #now}. */
    private final Ttl ttl;
    /** The time the iterator judges expiry at: its creation or last {@link #refresh} (it reads one point in time). */
    private long now;

    /** Takes over the view's SuperVersion reference (released by {@link #refresh} or close). */
    DbIterator(Db db, Db.IteratorView view, ReadOptions readOptions, byte[] lower, byte[] upper) {
        this.db = db;
        this.sv = view.sv();
        this.makeFull = view.makeFull();
        this.sequence = view.sequence();
        this.ttl = db.ttl();
        this.now = ttl == null ? 0 : ttl.now();
        this.prefixSeek = PrefixSeek.of(db.prefixLength(), readOptions, sv);
        // The unrestricted iterator is made by the first positioning that needs it (scope): a bounded seek whose range
        // no memtable entry and no table can hold (provablyEmpty) never makes it.
        this.tombstones = tombstonesOf(sv, sequence);
        this.lower = lower;
        this.upper = upper;
    }

    /** The range tombstones of {@code sv} visible at {@code sequence}, or null when there are none. */
    private static RangeTombstoneList tombstonesOf(SuperVersion sv, long sequence) {
        RangeTombstoneList ts = sv.rangeTombstones(sequence);
        return ts.isEmpty() ? null : ts;
    }

    /**
     * Drops the iterator's view and takes the database's current one (RocksDB's {@code Iterator::Refresh()}): the
     * memtables and tables now, at the latest sequence, as a new iterator would see them. The iterator is then not
     * valid until positioned ({@link #seek}, {@link #seekToFirst} ...), as RocksDB's. The bounds and prefix mode of its
     * {@link ReadOptions} stay. An iterator made with a {@link ReadOptions#snapshot} reads the latest state after a
     * refresh, no longer the snapshot, as RocksDB's {@code Refresh()} does whatever snapshot the iterator had
     * ({@link #refresh(Snapshot)} moves it to a snapshot instead). With {@link Options#ttl} expiry is judged at the
     * time of the refresh.
     *
     * <p>What the old view held (its SuperVersion reference, with the memtables and tables it kept alive, and the table
     * iterators and blocks the positioned iterator pinned) is released once, here: tables that compactions made
     * obsolete meanwhile are deleted now if no other reader holds them (on this thread, as a close of the iterator
     * would). A long-lived iterator refreshed now and then thus reads recent data without holding old files, as a new
     * iterator per scan would, while keeping its bounds.
     *
     * @throws DbClosedException if the iterator is closed, or its database (the same exception every other call of a
     *     closed iterator throws)
     */
    public synchronized void refresh() {
        checkOpen();
        install(db.latestIteratorView(lower, upper));
    }

    /**
     * {@link #refresh()}, reading at {@code snapshot} instead of the latest state (rocksdbjni's
     * {@code RocksIterator.refresh(Snapshot)}, RocksDB's {@code Iterator::Refresh(const Snapshot*)}): the iterator
     * drops its view and takes the database's current memtables and tables, and from then on sees what a new iterator
     * made with {@link ReadOptions#snapshot}{@code (snapshot)} would see, bounds and prefix mode kept, whatever
     * snapshot it read at before. The snapshot may be older or newer than the one the iterator had; it must stay
     * unreleased while the iterator reads at it, as for an iterator made at a snapshot. A null snapshot is
     * {@link #refresh()}: the latest state. The iterator is then not valid until positioned. What the old view held is
     * released here, as by {@link #refresh()}. On an exception the iterator keeps its old view and position.
     *
     * @throws InvalidArgumentException if {@code snapshot} was released or belongs to another database (as
     *     {@link ReadOptions#snapshot} is checked when an iterator is made)
     * @throws DbClosedException if the iterator is closed, or its database
     */
    public synchronized void refresh(Snapshot snapshot) {
        checkOpen();
        install(db.refreshedIteratorView(snapshot, lower, upper));
    }

    /** Takes over {@code view} (retained for this iterator) in place of the current one, released here. */
    private void install(Db.IteratorView view) {
        RangeTombstoneList nextTombstones;
        PrefixSeek nextPrefixSeek;
        try {
            nextTombstones = tombstonesOf(view.sv(), view.sequence());
            nextPrefixSeek = prefixSeek == null ? null : prefixSeek.over(view.sv());
        } catch (RuntimeException e) {
            view.sv().release(); // the old view stays, the iterator as it was
            throw e;
        }
        SuperVersion oldSv = sv;
        MergingIterator oldMerged = merged;
        MergingIterator oldFull = full;
        sv = view.sv();
        makeFull = view.makeFull();
        sequence = view.sequence();
        tombstones = nextTombstones;
        prefixSeek = nextPrefixSeek;
        now = ttl == null ? 0 : ttl.now();
        merged = null;
        full = null;
        prefix = null;
        memo.clear();
        positionNowhere();
        try {
            if (oldMerged != null && oldMerged != oldFull) {
                oldMerged.close();
            }
            if (oldFull != null) {
                oldFull.close();
            }
        } finally {
            oldSv.release();
        }
    }

    /**
     * Confines the iterator to {@code target}'s prefix (a seek or seekForPrev with prefix seeks on), or lifts the
     * confinement (null target: seekToFirst, seekToLast, which confine to the key they find: {@link #confineToFound}).
     */
    private void scope(byte[] target) {
        byte[] next = prefixSeek == null || target == null ? null : prefixSeek.prefixOf(target);
        if (next == null && prefix == null && merged != null) {
            return;
        }
        if (merged != null && merged != full) {
            merged.close();
        }
        prefix = next;
        if (next != null) {
            merged = prefixSeek.iterator(next);
        } else {
            if (full == null) {
                full = makeFull.apply(memo);
            }
            merged = full;
        }
    }

    /**
     * After seekToFirst or seekToLast with prefix seeks on: confines next and prev to the prefix of the key found, as
     * RocksDB's {@code prefix_same_as_start} does (a key shorter than the prefix length confines nothing). The
     * unrestricted iterator stays positioned: it holds every table, so the walk within the prefix misses none.
     */
    private void confineToFound() {
        if (prefixSeek != null && key != null) {
            prefix = prefixSeek.prefixOf(key);
        }
    }

    /**
     * True when no point entry of any memtable or table can have a user key in [lo, hi], or in [lo, hi) when not
     * {@code hiInclusive} (the iterator's exclusive upper bound; a null bound is open; not both): the memtables are asked with one seek each (an empty one not at all), the tables by their
     * key ranges and range filters ({@link io.bloomkv.engine.internal.version.Version#tablesRuleOut}), before any
     * table iterator, index or block is touched. A positioning over such a range finds nothing, at any snapshot and
     * whatever the range tombstones say. The memtables are asked first: when they hold the range, no filter is probed
     * here and again by the table iterators. Not made with prefix seeks (their iterators are made per prefix), nor
     * when no table has a range filter.
     */
    private boolean provablyEmpty(byte[] lo, byte[] hi, boolean hiInclusive) {
        memo.clear();
        if (prefixSeek != null || !sv.version.hasRangeFilters()) {
            return false;
        }
        if (!memTableEmptyIn(sv.mem, lo, hi, hiInclusive)) {
            return false;
        }
        for (int i = 0; i < sv.imms.size(); i++) {
            if (!memTableEmptyIn(sv.imms.get(i), lo, hi, hiInclusive)) {
                return false;
            }
        }
        return sv.version.tablesRuleOut(lo, hi, hiInclusive, memo);
    }

    private static boolean memTableEmptyIn(MemTable m, byte[] lo, byte[] hi, boolean hiInclusive) {
        if (m.hasNoPointEntries()) {
            return true;
        }
        InternalIterator it = m.iterator();
        try {
            if (lo == null) {
                it.seekToFirst();
            } else {
                it.seek(InternalKey.forSeek(lo, InternalKey.MAX_SEQUENCE));
            }
            if (!it.valid() || hi == null) {
                return !it.valid();
            }
            int cmp = InternalKey.compareUserKey(it.key(), hi);
            return cmp > 0 || (cmp == 0 && !hiInclusive);
        } finally {
            it.close();
        }
    }

    /** Leaves the iterator not valid after a positioning {@link #provablyEmpty} decided. */
    private void positionNowhere() {
        key = null;
        value = null;
        pastCurrent = false;
        reverse = false;
    }

    private void checkOpen() {
        if (closed) {
            throw new DbClosedException(
                    closedByDb ? "iterator used after its database was closed" : "iterator used after close");
        }
    }

    /**
     * Only a null seek target is refused. It may be empty (RocksDB's {@code Seek("")} and {@code SeekForPrev("")} are
     * well defined, and ports rely on them) or longer than {@link Db#MAX_KEY_SIZE} (RocksDB takes any length: the seeks
     * reduce such a target to a key of at most {@code MAX} bytes, {@link LongKeys}).
     */
    private static void checkTarget(byte[] target) {
        if (target == null) {
            throw new InvalidArgumentException("seek target is null");
        }
    }

    private void checkValid() {
        checkOpen();
        if (key == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
    }

    /** True when positioned at an entry. */
    public synchronized boolean valid() {
        checkOpen();
        return key != null;
    }

    /** Positions at the smallest key (at or above the lower bound). */
    public synchronized void seekToFirst() {
        checkOpen();
        try {
            reverse = false;
            if (upper != null && provablyEmpty(lower, upper, false)) {
                positionNowhere();
                return;
            }
            scope(null);
            if (lower != null) {
                merged.seek(InternalKey.forSeek(lower, sequence));
            } else {
                merged.seekToFirst();
            }
            memo.clear();
            findNext(null);
            confineToFound();
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /**
     * Positions at the first key >= {@code target} (and >= the lower bound). The target may be empty, as in RocksDB:
     * it sorts before every key (stored keys are never empty), so {@code seek} of it lands on the first key at or above
     * the lower bound, as {@link #seekToFirst} does, except that with prefix seeks on it confines nothing (an empty
     * target is shorter than the prefix length: {@link ReadOptions#prefixSameAsStart}). The target may also be longer
     * than {@link Db#MAX_KEY_SIZE}, as in RocksDB: no stored key is that long, so the first key {@code >= target} is
     * the first key above the target's first {@code MAX} bytes; with prefix seeks on, its prefix is its first
     * {@link Options#prefixLength} bytes, as any target's.
     *
     * @throws InvalidArgumentException when {@code target} is null
     */
    public synchronized void seek(byte[] target) {
        checkOpen();
        checkTarget(target);
        try {
            reverse = false;
            byte[] key = target;
            byte[] confineTo = target;
            if (LongKeys.tooLong(target)) {
                // k >= target iff k >= leastAbove(target) for every stored key (LongKeys says why); with none above
                // the target's first MAX bytes (all 0xFF), no key is at or above it.
                confineTo = LongKeys.head(target);
                key = LongKeys.leastAbove(target);
                if (key == null) {
                    positionNowhere();
                    return;
                }
            }
            byte[] t = lower != null && Arrays.compareUnsigned(key, lower) < 0 ? lower : key;
            byte[] from = t.length == 0 ? null : t; // nothing sorts below the empty key: an open start
            if (upper != null && provablyEmpty(from, upper, false)) {
                positionNowhere();
                return;
            }
            scope(confineTo);
            if (from == null) {
                merged.seekToFirst();
            } else {
                merged.seek(InternalKey.forSeek(from, sequence));
            }
            memo.clear();
            findNext(null);
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /** Positions at the largest key (below the upper bound). */
    public synchronized void seekToLast() {
        seekToLast(true);
    }

    /**
     * {@link #seekToLast}; with prefix seeks on, {@code confine} confines the walk from there to the prefix of the key
     * found (a seekToLast's own), and no {@code confine} confines nothing: a {@link #seekForPrev} of a target shorter
     * than the prefix length at or past the upper bound lands here, and such a target iterates in key order
     * ({@link ReadOptions#prefixSameAsStart}), as the same seekForPrev below the bound does.
     */
    private void seekToLast(boolean confine) {
        checkOpen();
        try {
            if (lower != null && provablyEmpty(lower, upper, false)) {
                positionNowhere();
                return;
            }
            reverse = true;
            scope(null);
            if (upper != null) {
                merged.seekForPrev(InternalKey.forSeek(upper, InternalKey.MAX_SEQUENCE));
            } else {
                merged.seekToLast();
            }
            memo.clear();
            findPrev();
            if (confine) {
                confineToFound();
            }
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /**
     * Positions at the last key {@code <= target} (RocksDB's {@code SeekForPrev}; below the upper bound). With
     * prefix seeks on and a target of at least the prefix length, only keys with the target's prefix are visited, in
     * both directions, as after {@link #seek}. The target may be empty, as in RocksDB: no key is {@code <=} it (stored
     * keys are never empty), so the iterator is then not valid, whatever the bounds. The target may also be longer
     * than {@link Db#MAX_KEY_SIZE}, as in RocksDB: no stored key is that long, so the last key {@code <= target} is
     * the last key {@code <=} the target's first {@code MAX} bytes, whose prefix is the target's.
     *
     * @throws InvalidArgumentException when {@code target} is null
     */
    public synchronized void seekForPrev(byte[] target) {
        checkOpen();
        checkTarget(target);
        // k <= target iff k <= its first MAX bytes, for every stored key (LongKeys says why).
        seekForPrevKey(LongKeys.head(target));
    }

    /** {@link #seekForPrev} of a target of at most {@link Db#MAX_KEY_SIZE} bytes. */
    private void seekForPrevKey(byte[] target) {
        if (target.length == 0) {
            positionNowhere(); // RocksDB's SeekForPrev("") finds no key either (it does not throw)
            return;
        }
        boolean pastUpper = upper != null && Arrays.compareUnsigned(target, upper) >= 0;
        if (pastUpper && (prefixSeek == null || !prefixSeek.inDomain(target))) {
            seekToLast(false); // the last key below the bound; a target outside the prefix domain confines nothing
            return;
        }
        try {
            // past the upper bound only a prefix seek gets here, which provablyEmpty never rules out
            if (!pastUpper && lower != null && provablyEmpty(lower, target, true)) {
                positionNowhere();
                return;
            }
            reverse = true;
            scope(target);
            if (pastUpper) {
                merged.seekForPrev(InternalKey.forSeek(upper, InternalKey.MAX_SEQUENCE));
            } else {
                // Trailer 0 sorts after every entry of target: the walk back starts at its oldest version.
                merged.seekForPrev(InternalKey.encode(target, 0, ValueType.DELETE));
            }
            memo.clear();
            findPrev();
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /** Moves to the next key. @throws NoSuchElementException when not {@link #valid()} */
    public synchronized void next() {
        checkValid();
        byte[] skip = key;
        try {
            if (reverse) {
                // The merged iterator is before this key's entries: it is re-seeked to the key (RocksDB's
                // ReverseToForward), and findNext skips the key's entries. Not a step forward: a bounded iterator's
                // range-filtered levels skip the tables wholly below the lower bound, so where the walk back stopped
                // (below the bound, or exhausted) a step forward re-seeks those levels there and can surface entries
                // below the bound that the walk never saw; a tombstone among them would end the skip of this key.
                reverse = false;
                merged.seek(InternalKey.forSeek(skip, InternalKey.MAX_SEQUENCE));
            } else if (!pastCurrent) {
                merged.next();
            }
            findNext(skip);
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /** Moves to the previous key. @throws NoSuchElementException when not {@link #valid()} */
    public synchronized void prev() {
        checkValid();
        try {
            if (!reverse) {
                // The merged iterator is on this key's newest visible entry: move before all its entries.
                // (After a merge the merged iterator is past the key's operands, maybe past the end.)
                byte[] current = key;
                if (!merged.valid()) {
                    merged.seekToLast();
                }
                while (merged.valid() && InternalKey.compareUserKey(merged.keyNoCopy(), current) >= 0) {
                    merged.prev();
                }
                pastCurrent = false;
                reverse = true;
            }
            findPrev();
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /** Current key (a copy). */
    public synchronized byte[] key() {
        checkValid();
        return key.clone();
    }

    /** Current value (a copy). */
    public synchronized byte[] value() {
        checkValid();
        return value.clone();
    }

    /**
     * The sequence number this iterator reads at: its snapshot's, or the latest one at its creation or last
     * {@link #refresh} (the snapshot's after a {@link #refresh(Snapshot)}).
     */
    public synchronized long sequence() {
        return sequence;
    }

    /**
     * Moves the merged iterator forward to the newest visible PUT of a user key greater than
     * {@code skip} (any user key when null), passing over newer-than-snapshot entries, older versions
     * and tombstones; not valid at the upper bound. A key whose newest visible entry is a merge operand is resolved
     * here (RocksDB's {@code DBIter::MergeValuesNewToOld}): its operands are collected down to a value or a
     * tombstone and merged; the merged iterator is then past the operands ({@link #pastCurrent}).
     */
    private void findNext(byte[] skip) {
        pastCurrent = false;
        byte[] skipKey = skip;
        // After a tombstone, the key to pass over is held as that entry's internal key, copied into skipScratch (the
        // merged iterator lends its keys: the array changes with its next move), reused while the length holds.
        byte[] skipInternal = null;
        while (merged.valid()) {
            byte[] ik = merged.keyNoCopy();
            if (upper != null && InternalKey.compareUserKey(ik, upper) >= 0) {
                break;
            }
            if (prefix != null && !PrefixSeek.userKeyStartsWith(ik, prefix)) {
                break; // past the prefix: a prefix seek ends here
            }
            if (InternalKey.sequence(ik) <= sequence) {
                boolean skipped = skipInternal != null
                        ? InternalKey.compareUserKeys(ik, skipInternal) == 0
                        : skipKey != null && InternalKey.compareUserKey(ik, skipKey) == 0;
                if (!skipped && InternalKey.type(ik) == ValueType.DELETE) {
                    skipInternal = copyToScratch(ik);
                    skipKey = null;
                } else if (!skipped) {
                    byte[] userKey = InternalKey.userKey(ik);
                    ValueType type = typeOf(ik, userKey);
                    if (type == ValueType.PUT) {
                        byte[] v = ttl == null ? merged.value() : ttl.visible(merged.value(), now);
                        if (v != null) {
                            key = userKey;
                            value = v;
                            return;
                        }
                    } else if (type == ValueType.MERGE) {
                        byte[] v = mergeForward(userKey);
                        if (ttl != null) {
                            v = ttl.visible(v, now);
                        }
                        if (v != null) {
                            key = userKey;
                            value = v;
                            pastCurrent = true;
                            return;
                        }
                        // Expired: the merged iterator is on the entry that ended the walk, or past the key.
                        skipKey = userKey;
                        skipInternal = null;
                        continue;
                    }
                    skipKey = userKey;
                    skipInternal = null;
                }
            }
            merged.next();
        }
        key = null;
        value = null;
    }

    /** {@code ik} copied into {@link #skipScratch} (a new array when the length differs). */
    private byte[] copyToScratch(byte[] ik) {
        byte[] s = skipScratch;
        if (s == null || s.length != ik.length) {
            s = new byte[ik.length];
            skipScratch = s;
        }
        System.arraycopy(ik, 0, s, 0, ik.length);
        return s;
    }

    /** The type of entry {@code ik}, a DELETE when a visible range tombstone newer than it covers its key. */
    private ValueType typeOf(byte[] ik) {
        return typeOf(ik, null);
    }

    /**
     * {@link #typeOf(byte[])} with {@code ik}'s user key already copied out ({@code userKey}, or null to copy it here
     * only if a range tombstone must be asked): a forward scan past point tombstones under a range tombstone (a
     * segmented Kafka store after expiry) then copies each key once, not twice.
     */
    private ValueType typeOf(byte[] ik, byte[] userKey) {
        ValueType t = InternalKey.type(ik);
        if (tombstones != null
                && t != ValueType.DELETE
                && InternalKey.sequence(ik)
                        < tombstones.maxCovering(userKey != null ? userKey : InternalKey.userKey(ik), sequence)) {
            return ValueType.DELETE;
        }
        return t;
    }

    /**
     * With the merged iterator on {@code userKey}'s newest visible entry, a merge operand: collects it and the older
     * operands down to a PUT or a DELETE (or the key's last entry) and merges them. Leaves the merged iterator on the
     * entry that ended the walk (or past the key).
     */
    private byte[] mergeForward(byte[] userKey) {
        List<byte[]> newestFirst = new ArrayList<>();
        byte[] base = null;
        while (merged.valid()) {
            byte[] ik = merged.keyNoCopy();
            if (InternalKey.compareUserKey(ik, userKey) != 0) {
                break;
            }
            if (InternalKey.sequence(ik) <= sequence) {
                ValueType type = typeOf(ik);
                if (type == ValueType.PUT) {
                    base = merged.value();
                    break;
                }
                if (type == ValueType.DELETE) {
                    break;
                }
                newestFirst.add(merged.value());
            }
            merged.next();
        }
        Collections.reverse(newestFirst);
        return KeyLookup.fullMerge(db.mergeOperator(), userKey, base, newestFirst);
    }

    /**
     * LevelDB's {@code FindPrevUserEntry}: walks the merged iterator backward over the entries of the
     * previous user key, oldest version first, keeping the newest visible one; a tombstone discards
     * what was kept, merge operands are gathered over the value kept (and merged at the end). Stops on the first
     * visible entry of a smaller key once a value is kept, leaving the merged iterator there (before the current
     * key's entries); not valid below the lower bound.
     */
    private void findPrev() {
        while (true) {
            findPrevKey();
            if (key == null || ttl == null) {
                return;
            }
            byte[] v = ttl.visible(value, now);
            if (v != null) {
                value = v;
                return;
            }
            // Expired: the merged iterator is before this key's entries; go on to the previous key.
        }
    }

    /** One step of {@link #findPrev}: the previous key with a value, expired or not. */
    private void findPrevKey() {
        pastCurrent = false;
        byte[] savedKey = null;
        byte[] savedValue = null;
        List<byte[]> operands = null; // oldest first, over savedValue (null: no value)
        while (merged.valid()) {
            byte[] ik = merged.keyNoCopy();
            if (lower != null && InternalKey.compareUserKey(ik, lower) < 0) {
                break;
            }
            if (prefix != null && !PrefixSeek.userKeyStartsWith(ik, prefix)) {
                break; // before the prefix: iteration is defined within it only
            }
            if (InternalKey.sequence(ik) <= sequence && (upper == null || InternalKey.compareUserKey(ik, upper) < 0)) {
                if (savedKey != null && InternalKey.compareUserKey(ik, savedKey) < 0) {
                    break;
                }
                ValueType type = typeOf(ik);
                if (type == ValueType.DELETE) {
                    savedKey = null;
                    savedValue = null;
                    operands = null;
                } else if (type == ValueType.PUT) {
                    savedKey = InternalKey.userKey(ik);
                    savedValue = merged.value();
                    operands = null;
                } else {
                    if (savedKey == null) {
                        savedKey = InternalKey.userKey(ik);
                    }
                    if (operands == null) {
                        operands = new ArrayList<>();
                    }
                    operands.add(merged.value());
                }
            }
            merged.prev();
        }
        key = savedKey;
        value = operands == null || savedKey == null
                ? savedValue
                : KeyLookup.fullMerge(db.mergeOperator(), savedKey, savedValue, operands);
        if (savedKey == null) {
            reverse = false;
        }
    }

    @Override
    public void close() {
        if (closeInternal(false)) {
            db.iteratorClosed(this);
        }
    }

    /** Closes and releases what the iterator holds; true the first time. */
    synchronized boolean closeInternal(boolean byDb) {
        if (closed) {
            return false;
        }
        closed = true;
        closedByDb = byDb;
        key = null;
        value = null;
        try {
            if (merged != null && merged != full) {
                merged.close();
            }
            if (full != null) {
                full.close();
            }
        } finally {
            sv.release();
        }
        return true;
    }
}

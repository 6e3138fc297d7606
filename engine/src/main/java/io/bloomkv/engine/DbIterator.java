package io.bloomkv.engine;

import io.bloomkv.engine.iterator.MergingIterator;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.NoSuchElementException;

/**
 * A forward iterator over the user keys and values of a {@link Db} at one point in time (the
 * latest write when it was created, or a {@link Snapshot}), in unsigned lexicographic key order;
 * deleted keys are skipped. It keeps the memtables and tables it reads alive until closed, across
 * flushes and compactions. One thread at a time should move it; its methods are nevertheless
 * mutually exclusive, so {@link Db#close()} from another thread is safe: close waits for a call in
 * progress on each open iterator to return, then invalidates the iterator and releases what it
 * holds; every later call on it throws {@link DbClosedException} (never a {@code NullPointerException},
 * never a read of released memory). Closing an iterator is idempotent, also after its database closed.
 *
 * <pre>{@code
 * try (DbIterator it = db.iterator()) {
 *     for (it.seek(from); it.valid(); it.next()) { use(it.key(), it.value()); }
 * }
 * }</pre>
 */
public final class DbIterator implements AutoCloseable {
    private final Db db;
    private final SuperVersion sv;
    private MergingIterator merged;
    private final long sequence;
    /** Prefix seeks (ReadOptions.prefixSameAsStart), or null; {@link #full} is the unrestricted iterator. */
    private final PrefixSeek prefixSeek;
    private final MergingIterator full;
    /** The prefix the current position is confined to, or null. */
    private byte[] prefix;
    private byte[] key;
    private byte[] value;
    private boolean closed;
    private boolean closedByDb;

    DbIterator(Db db, SuperVersion sv, MergingIterator merged, long sequence) {
        this(db, sv, merged, sequence, null);
    }

    DbIterator(Db db, SuperVersion sv, MergingIterator merged, long sequence, PrefixSeek prefixSeek) {
        this.db = db;
        this.sv = sv;
        this.merged = merged;
        this.full = merged;
        this.sequence = sequence;
        this.prefixSeek = prefixSeek;
    }

    /** Confines the iterator to {@code target}'s prefix (prefix seeks), or lifts the confinement (null target). */
    private void scope(byte[] target) {
        byte[] next = prefixSeek == null || target == null ? null : prefixSeek.prefixOf(target);
        if (merged != full) {
            merged.close();
            merged = full;
        }
        prefix = next;
        if (next != null) {
            merged = prefixSeek.iterator(next);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new DbClosedException(closedByDb ? "iterator used after its database was closed" : "iterator used after close");
        }
    }

    /** True when positioned at an entry. */
    public synchronized boolean valid() {
        checkOpen();
        return key != null;
    }

    /** Positions at the smallest key. */
    public synchronized void seekToFirst() {
        checkOpen();
        try {
            scope(null);
            merged.seekToFirst();
            findNext(null);
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /** Positions at the first key >= {@code target}. */
    public synchronized void seek(byte[] target) {
        checkOpen();
        WriteBatch.checkKey(target);
        try {
            scope(target);
            merged.seek(InternalKey.forSeek(target, sequence));
            findNext(null);
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /** Moves to the next key. @throws NoSuchElementException when not {@link #valid()} */
    public synchronized void next() {
        checkOpen();
        if (key == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        byte[] skip = key;
        try {
            merged.next();
            findNext(skip);
        } catch (UncheckedIOException e) {
            throw new BloomKvIOException("iterator read failed", e.getCause());
        }
    }

    /** Current key (a copy). */
    public synchronized byte[] key() {
        checkOpen();
        if (key == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return key.clone();
    }

    /** Current value (a copy). */
    public synchronized byte[] value() {
        checkOpen();
        if (key == null) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return value.clone();
    }

    /** The sequence number this iterator reads at. */
    public long sequence() {
        return sequence;
    }

    /**
     * Moves the merged iterator to the newest visible PUT of a user key greater than {@code skip}
     * (any user key when null), passing over newer-than-snapshot entries, older versions and tombstones.
     */
    private void findNext(byte[] skip) {
        byte[] skipKey = skip;
        while (merged.valid()) {
            byte[] ik = merged.keyNoCopy();
            if (prefix != null && !PrefixSeek.userKeyStartsWith(ik, prefix)) {
                break; // past the prefix: a prefix seek ends here
            }
            if (InternalKey.sequence(ik) <= sequence) {
                byte[] userKey = InternalKey.userKey(ik);
                if (skipKey == null || !Arrays.equals(userKey, skipKey)) {
                    if (InternalKey.type(ik) == ValueType.PUT) {
                        key = userKey;
                        value = merged.value();
                        return;
                    }
                    skipKey = userKey;
                }
            }
            merged.next();
        }
        key = null;
        value = null;
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
            if (merged != full) {
                merged.close();
            }
            full.close();
        } finally {
            sv.release();
        }
        return true;
    }
}

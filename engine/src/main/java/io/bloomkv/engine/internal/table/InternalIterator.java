package io.bloomkv.engine.internal.table;

import java.io.Closeable;

/**
 * An iterator over encoded internal keys ({@link io.bloomkv.engine.internal.InternalKey}) in
 * {@link io.bloomkv.engine.internal.InternalKey#COMPARATOR} order, in both directions (LevelDB's
 * {@code Iterator}): {@code next}/{@code prev} may alternate freely. Memtables, blocks, tables, levels
 * and the merging iterator all implement it. Not thread-safe: one iterator, one thread.
 *
 * <p>{@link #key()} and {@link #value()} may only be called while {@link #valid()} is true; the
 * returned arrays belong to the caller (implementations do not reuse them).
 */
public interface InternalIterator extends Closeable {
    boolean valid();

    void seekToFirst();

    /** Positions at the first entry whose internal key is {@code >= target}. */
    void seek(byte[] targetInternalKey);

    void next();

    /** Positions at the last entry; not valid when there is none. */
    void seekToLast();

    /**
     * Positions at the last entry whose internal key is {@code <= target}; not valid when there is
     * none. The default seeks forward and steps back; implementations may do better.
     */
    default void seekForPrev(byte[] targetInternalKey) {
        seek(targetInternalKey);
        if (!valid()) {
            seekToLast();
        } else if (io.bloomkv.engine.internal.InternalKey.COMPARATOR.compare(key(), targetInternalKey) > 0) {
            prev();
        }
    }

    /**
     * Moves to the previous entry; not valid after the first.
     *
     * @throws java.util.NoSuchElementException when not {@link #valid()}
     */
    void prev();

    byte[] key();

    /**
     * The current key, possibly in an array the iterator lends: it may be overwritten by this iterator's next move or
     * seek (or the next {@code lendKey}), so the caller must neither keep it past that nor modify it. Lets a merge
     * over many entries (a scan past tombstones) compare keys without allocating one array per entry. The default
     * lends a fresh copy ({@link #key()}).
     */
    default byte[] lendKey() {
        return key();
    }

    byte[] value();

    /**
     * The current value, valid only until the iterator moves, seeks or closes: an implementation may refill one array
     * for every entry (a flush writes each value into its block at once and keeps none). The default is a copy.
     */
    default byte[] lendValue() {
        return value();
    }

    /** Releases what the iterator pins (tables, blocks). Idempotent. */
    @Override
    void close();
}

package io.bloomkv.engine.table;

import java.io.Closeable;

/**
 * An iterator over encoded internal keys ({@link io.bloomkv.engine.InternalKey}) in
 * {@link io.bloomkv.engine.InternalKey#COMPARATOR} order. Memtables, blocks, tables and the merging
 * iterator all implement it. Not thread-safe: one iterator, one thread.
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

    byte[] key();

    byte[] value();

    /** Releases what the iterator pins (tables, blocks). Idempotent. */
    @Override
    void close();
}

package io.bloomkv.kafka;

import io.bloomkv.engine.WriteBatch;

/**
 * A store's write batch, reused from write to write while its operations stay small (the engine copies a batch into
 * its memtable, so a written batch can be cleared and filled again), and let go once a large write grew it, so a store
 * never keeps more than about {@link #KEEP_BYTES} of batch buffer between writes. Not thread-safe: its store's lock
 * guards it.
 */
final class ReusableBatch {
    /** Operation bytes a kept batch is reused for (a restore batch of max.poll.records small records fits). */
    static final int KEEP_BYTES = 64 << 10;

    private WriteBatch batch;
    private final int initialCapacity;

    /** {@code initialCapacity}: the kept batch's first buffer size (it grows as a batch does). */
    ReusableBatch(int initialCapacity) {
        this.initialCapacity = initialCapacity;
    }

    /** The kept batch, emptied. */
    WriteBatch cleared() {
        if (batch == null) {
            batch = new WriteBatch(initialCapacity);
        }
        return batch.clear();
    }

    /**
     * An empty batch for {@code bytes} of operations ({@link WriteBatch#putSizeOf} each), to be written and cleared
     * before the next call: the kept one when they fit {@link #KEEP_BYTES}, else a batch sized once for them (not one
     * copy per doubling).
     */
    WriteBatch forBytes(long bytes) {
        if (bytes <= KEEP_BYTES) {
            return cleared();
        }
        return new WriteBatch((int) Math.min(bytes + 16, WriteBatch.MAX_BATCH_BYTES));
    }

    /** After a write through {@link #cleared}: a batch that grew past {@link #KEEP_BYTES} is let go. */
    void trim() {
        if (batch != null && batch.approximateSize() > KEEP_BYTES) {
            batch = null;
        }
    }
}

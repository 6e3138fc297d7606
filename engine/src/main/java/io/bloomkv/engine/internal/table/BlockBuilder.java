package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.internal.util.ByteWriter;
import io.bloomkv.engine.internal.util.Coding;
import java.util.Arrays;

/**
 * Builds a block (engine/FORMAT.md, "Blocks"): entries with keys prefix-compressed against the
 * previous key, a full key every {@code restartInterval} entries (a restart point), then the
 * restart offsets. The caller adds keys in the order the block will be searched in.
 */
public final class BlockBuilder {
    private final int restartInterval;
    /**
     * The block being built. Not a ByteArrayOutputStream: its methods are synchronized, and building blocks (every
     * byte a flush or compaction writes) paid a lock per varint byte and per key and value appended.
     */
    private final ByteWriter buf = new ByteWriter(4096);

    private int[] restarts = new int[16];
    private int restartCount;
    private int sinceRestart;
    private int entries;
    private byte[] lastKey;
    private boolean finished;

    public BlockBuilder(int restartInterval) {
        if (restartInterval < 1) {
            throw new IllegalArgumentException("restart interval must be >= 1: " + restartInterval);
        }
        this.restartInterval = restartInterval;
        reset();
    }

    /** Empties the builder for the next block. */
    public void reset() {
        buf.truncate(0);
        restartCount = 0;
        addRestart(0);
        sinceRestart = 0;
        entries = 0;
        lastKey = null;
        finished = false;
    }

    public void add(byte[] key, byte[] value) {
        add(key, value, -1);
    }

    /**
     * {@link #add(byte[], byte[])} where the caller knows the length of the common prefix of {@code key} and the key
     * added before it ({@code knownShared}, when both are longer than it, so they differ at that byte), or -1 when it
     * does not: the same bytes, without comparing the keys again.
     */
    public void add(byte[] key, byte[] value, int knownShared) {
        if (finished) {
            throw new IllegalStateException("block already finished");
        }
        int shared = 0;
        if (sinceRestart < restartInterval) {
            if (lastKey != null) {
                if (knownShared >= 0) {
                    shared = knownShared;
                } else {
                    shared = Arrays.mismatch(lastKey, key);
                    if (shared < 0) {
                        shared = key.length; // equal keys
                    }
                    shared = Math.min(shared, Math.min(lastKey.length, key.length));
                }
            }
        } else {
            addRestart(buf.size());
            sinceRestart = 0;
        }
        int unshared = key.length - shared;
        // One capacity check for the whole entry (three varint32s of at most 5 bytes, the key suffix, the value).
        buf.ensure(15 + unshared + value.length);
        byte[] a = buf.array();
        int start = buf.size();
        int p = start;
        p += Coding.putVarint32(a, p, shared);
        p += Coding.putVarint32(a, p, unshared);
        p += Coding.putVarint32(a, p, value.length);
        System.arraycopy(key, shared, a, p, unshared);
        p += unshared;
        System.arraycopy(value, 0, a, p, value.length);
        p += value.length;
        buf.advance(p - start);
        lastKey = key;
        sinceRestart++;
        entries++;
    }

    private void addRestart(int offset) {
        if (restartCount == restarts.length) {
            restarts = Arrays.copyOf(restarts, restartCount * 2);
        }
        restarts[restartCount++] = offset;
    }

    /** Size of {@link #finish()}'s result if it were called now. */
    public int currentSizeEstimate() {
        return buf.size() + restartCount * 4 + 4;
    }

    public boolean isEmpty() {
        return entries == 0;
    }

    public int entries() {
        return entries;
    }

    /** The key added last, or null. */
    public byte[] lastKey() {
        return lastKey;
    }

    /** The block's contents (without trailer), a fresh array. The builder must be {@link #reset()} before reuse. */
    public byte[] finish() {
        int length = finishInPlace(); // first: finishing may grow the buffer into a new array
        return Arrays.copyOf(buf.array(), length);
    }

    /**
     * Finishes the block without copying it: returns its length; its contents are {@link #contents()}{@code [0,
     * length)} until the builder is {@link #reset()} or added to. The builder must be reset before reuse.
     */
    public int finishInPlace() {
        for (int i = 0; i < restartCount; i++) {
            buf.putFixed32(restarts[i]);
        }
        buf.putFixed32(restartCount);
        finished = true;
        return buf.size();
    }

    /** The builder's buffer: after {@link #finishInPlace()}, the block's contents in its first bytes. */
    public byte[] contents() {
        return buf.array();
    }
}

package io.bloomkv.engine.table;

import io.bloomkv.engine.CorruptionException;
import java.util.Comparator;
import java.util.NoSuchElementException;

/**
 * Iterates one {@link Block}. {@link #seek} binary-searches the restart points, then scans at most
 * one restart interval. Throws {@link CorruptionException} on a malformed entry.
 */
public final class BlockIterator implements InternalIterator {
    private final Block block;
    private final byte[] data;
    private final int limit;
    private final Comparator<byte[]> comparator;

    /** Offset of the current entry; {@code limit} when not valid. */
    private int current;
    private int nextOffset;
    private byte[] key;
    private int valueOff;
    private int valueLen;

    BlockIterator(Block block, Comparator<byte[]> comparator) {
        this.block = block;
        this.data = block.data();
        this.limit = block.restartsOffset();
        this.comparator = comparator;
        this.current = limit;
        this.nextOffset = limit;
    }

    @Override
    public boolean valid() {
        return current < limit;
    }

    @Override
    public void seekToFirst() {
        key = null;
        nextOffset = 0;
        parseNext();
    }

    @Override
    public void seek(byte[] target) {
        int n = block.restartCount();
        if (n == 0) {
            current = limit;
            return;
        }
        // Last restart point whose key is < target (or 0).
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            byte[] k = keyAtRestart(mid);
            if (comparator.compare(k, target) < 0) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        key = null;
        nextOffset = block.restartPoint(lo);
        parseNext();
        while (valid() && comparator.compare(key, target) < 0) {
            parseNext();
        }
    }

    @Override
    public void next() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        parseNext();
    }

    @Override
    public byte[] key() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        return key.clone();
    }

    @Override
    public byte[] value() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        byte[] v = new byte[valueLen];
        System.arraycopy(data, valueOff, v, 0, valueLen);
        return v;
    }

    /** The current key without copying; the caller must not modify it. */
    byte[] keyRef() {
        return key;
    }

    @Override
    public void close() {
        // nothing pinned
    }

    private byte[] keyAtRestart(int i) {
        Coding.Reader r = new Coding.Reader(data, block.restartPoint(i), limit);
        int shared = r.varint31();
        int unshared = r.varint31();
        int vlen = r.varint31();
        if (!r.ok || shared != 0 || unshared > limit - r.pos || vlen > limit - r.pos - unshared) {
            throw block.corruption("malformed entry at restart point " + i, block.restartPoint(i));
        }
        byte[] k = new byte[unshared];
        System.arraycopy(data, r.pos, k, 0, unshared);
        return k;
    }

    private void parseNext() {
        current = nextOffset;
        if (current >= limit) {
            current = limit;
            return;
        }
        Coding.Reader r = new Coding.Reader(data, current, limit);
        int shared = r.varint31();
        int unshared = r.varint31();
        int vlen = r.varint31();
        int prevLen = key == null ? 0 : key.length;
        if (!r.ok || shared > prevLen || unshared > limit - r.pos || vlen > limit - r.pos - unshared) {
            int at = current;
            current = limit;
            throw block.corruption("malformed entry", at);
        }
        byte[] k = new byte[shared + unshared];
        if (shared > 0) {
            System.arraycopy(key, 0, k, 0, shared);
        }
        System.arraycopy(data, r.pos, k, shared, unshared);
        key = k;
        valueOff = r.pos + unshared;
        valueLen = vlen;
        nextOffset = valueOff + vlen;
    }
}

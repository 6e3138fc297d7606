package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.util.Coding;
import java.util.Arrays;
import java.util.Comparator;
import java.util.NoSuchElementException;

/**
 * Iterates one {@link Block}. {@link #seek} binary-searches the restart points, then scans at most
 * one restart interval. Throws {@link CorruptionException} on a malformed entry.
 *
 * <p>The current key is rebuilt in a reused buffer; a {@code byte[]} of it is made only when
 * {@link #key()} or {@link #keyRef()} asks. With {@link InternalKey#COMPARATOR} the search compares
 * keys in place (restart keys inside the block, the current key in the buffer), allocating nothing.
 */
public final class BlockIterator implements InternalIterator {
    private final Block block;
    private final byte[] data;
    private final int limit;
    private final Comparator<byte[]> comparator;

    /** Offset of the current entry; {@code limit} when not valid. */
    private int current;

    private int nextOffset;
    /** The current key is {@code keyBuf[0, keyLen)}. */
    private byte[] keyBuf = new byte[32];

    private int keyLen;
    /** A copy of the current key made by {@link #keyRef()}, or null. */
    private byte[] keyCopy;

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
        keyLen = 0;
        nextOffset = 0;
        parseNext();
    }

    @Override
    public void seek(byte[] target) {
        if (comparator == InternalKey.COMPARATOR && target.length >= InternalKey.TRAILER_SIZE) {
            int userLen = target.length - InternalKey.TRAILER_SIZE;
            seekInternal(target, userLen, Coding.getFixed64(target, userLen));
            return;
        }
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
        keyLen = 0;
        nextOffset = block.restartPoint(lo);
        parseNext();
        while (valid() && comparator.compare(keyRef(), target) < 0) {
            parseNext();
        }
    }

    /**
     * For blocks of internal keys: positions at the first entry whose internal key is >= the
     * internal key {@code userKey[0, userLen) || trailer} (ordered as {@link InternalKey#compare}),
     * comparing in place.
     */
    void seekInternal(byte[] userKey, int userLen, long trailer) {
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
            int p = block.restartPoint(mid);
            Coding.Reader r = new Coding.Reader(data, p, limit);
            int shared = r.varint31();
            int unshared = r.varint31();
            int vlen = r.varint31();
            if (!r.ok || shared != 0 || unshared > limit - r.pos || vlen > limit - r.pos - unshared) {
                throw block.corruption("malformed entry at restart point " + mid, p);
            }
            if (compareInternal(data, r.pos, unshared, p, userKey, userLen, trailer) < 0) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        keyLen = 0;
        nextOffset = block.restartPoint(lo);
        parseNext();
        while (valid() && compareInternal(keyBuf, 0, keyLen, current, userKey, userLen, trailer) < 0) {
            parseNext();
        }
    }

    /** InternalKey order of the key {@code a[off, off + len)} against the target; {@code at} names the entry for errors. */
    private int compareInternal(byte[] a, int off, int len, int at, byte[] userKey, int userLen, long trailer) {
        if (len < InternalKey.TRAILER_SIZE) {
            throw block.corruption("internal key shorter than its trailer", at);
        }
        int ul = len - InternalKey.TRAILER_SIZE;
        int c = Arrays.compareUnsigned(a, off, off + ul, userKey, 0, userLen);
        if (c != 0) {
            return c;
        }
        // Higher trailer (newer sequence, then higher type) sorts first.
        return Long.compareUnsigned(trailer, Coding.getFixed64(a, off + ul));
    }

    @Override
    public void next() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        parseNext();
    }

    /** Positions at the block's last entry: the last restart point, then a scan to the end. */
    @Override
    public void seekToLast() {
        int n = block.restartCount();
        if (n == 0) {
            current = limit;
            return;
        }
        keyLen = 0;
        nextOffset = block.restartPoint(n - 1);
        parseNext();
        while (nextOffset < limit) {
            parseNext();
        }
    }

    @Override
    public void seekForPrev(byte[] target) {
        seek(target);
        if (!valid()) {
            seekToLast();
        } else if (comparator.compare(keyRef(), target) > 0) {
            prev();
        }
    }

    /**
     * LevelDB's {@code Block::Iter::Prev}: entries only decode forward, so go back to the last restart
     * point before the current entry and scan forward to the entry that ends where it starts.
     */
    @Override
    public void prev() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        int original = current;
        if (original == 0) {
            current = limit;
            nextOffset = limit;
            return;
        }
        // Last restart point < original (restart points ascend); offset 0 when none is.
        int lo = 0;
        int hi = block.restartCount() - 1;
        int start = 0;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int p = block.restartPoint(mid);
            if (p < original) {
                start = p;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        keyLen = 0;
        nextOffset = start;
        parseNext();
        while (nextOffset < original) {
            parseNext();
        }
        if (nextOffset != original) {
            current = limit;
            throw block.corruption("entries do not end at the entry stepped back from", original);
        }
    }

    @Override
    public byte[] key() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        return Arrays.copyOf(keyBuf, keyLen);
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

    /** The current key, made once per entry and shared; the caller must not modify it. */
    byte[] keyRef() {
        if (keyCopy == null) {
            keyCopy = Arrays.copyOf(keyBuf, keyLen);
        }
        return keyCopy;
    }

    /**
     * Positions at restart point {@code i} (at no entry when {@code i} is the restart count): for a
     * search that found the restart point itself ({@link IndexSearch}).
     */
    void seekToRestartPoint(int i) {
        keyLen = 0;
        nextOffset = i >= block.restartCount() ? limit : block.restartPoint(i);
        parseNext();
    }

    /** The first 8 bytes of the current internal key's user key, as {@link IndexSearch#word} (length >= trailer, checked by the caller). */
    long userKeyPrefix() {
        return IndexSearch.word(keyBuf, keyLen - InternalKey.TRAILER_SIZE);
    }

    /** Length of the current key. */
    int keyLength() {
        return keyLen;
    }

    /** Unsigned order of the current internal key's user key (length >= trailer, checked by the caller) against {@code userKey}. */
    int compareCurrentUserKey(byte[] userKey) {
        return Arrays.compareUnsigned(keyBuf, 0, keyLen - InternalKey.TRAILER_SIZE, userKey, 0, userKey.length);
    }

    /** The trailer (little-endian fixed64 at the end) of the current internal key. */
    long currentTrailer() {
        return Coding.getFixed64(keyBuf, keyLen - InternalKey.TRAILER_SIZE);
    }

    /** Offset in the block of the current entry (for error messages). */
    int currentOffset() {
        return current;
    }

    /** The block's array, which holds the current value at [{@link #valueOffset()}, + {@link #valueLength()}). */
    byte[] valueArray() {
        return data;
    }

    int valueOffset() {
        return valueOff;
    }

    int valueLength() {
        return valueLen;
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

    /** Decodes the entry at {@code nextOffset}, sharing a prefix with the current key ({@code keyLen} = 0 after a reset). */
    private void parseNext() {
        current = nextOffset;
        keyCopy = null;
        if (current >= limit) {
            current = limit;
            return;
        }
        Coding.Reader r = new Coding.Reader(data, current, limit);
        int shared = r.varint31();
        int unshared = r.varint31();
        int vlen = r.varint31();
        if (!r.ok || shared > keyLen || unshared > limit - r.pos || vlen > limit - r.pos - unshared) {
            int at = current;
            current = limit;
            throw block.corruption("malformed entry", at);
        }
        int len = shared + unshared;
        if (len < InternalKey.TRAILER_SIZE && comparator == InternalKey.COMPARATOR) {
            // Every key of a data or index block is an internal key: a shorter one would make every
            // later comparison (InternalKey.compare, the merging iterator) fail (found by TableFuzzTest).
            int at = current;
            current = limit;
            throw block.corruption("internal key of " + len + " bytes is shorter than its trailer", at);
        }
        if (len > keyBuf.length) {
            keyBuf = Arrays.copyOf(keyBuf, Math.max(len, 2 * keyBuf.length));
        }
        System.arraycopy(data, r.pos, keyBuf, shared, unshared);
        keyLen = len;
        valueOff = r.pos + unshared;
        valueLen = vlen;
        nextOffset = valueOff + vlen;
    }
}

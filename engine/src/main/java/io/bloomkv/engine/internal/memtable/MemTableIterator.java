package io.bloomkv.engine.internal.memtable;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.Arrays;
import java.util.NoSuchElementException;

/**
 * {@link InternalIterator} over a memtable's {@link MemSkipList} (weakly consistent: entries added after the iterator
 * was made may or may not be seen; callers filter by sequence). Returns copies. The position is a key node and one
 * version in its chain. A forward step follows the version's older link, from the key node (its key's oldest
 * version) the skip list's level-0 link to the next key's newest version. A backward step to the previous key is a
 * search for the last key node before the current one (O(log n), as in LevelDB's memtable iterator), landing on its
 * key node; within a chain, which links only toward older versions, the iterator walks the chain once from its
 * newest version and keeps the addresses it passed, so a run of backward steps through a chain of n versions costs
 * O(n) in all.
 *
 * <p>Entries of sequence at or below the caller's snapshot were all added before the caller read that sequence, so
 * whichever versions added later a step sees or misses, it never misses one of those.
 */
final class MemTableIterator implements InternalIterator {
    private final MemSkipList list;
    /** The current key node, 0 when not valid. */
    private long node;
    /** The current version of {@link #node}'s key ({@code node} itself for its oldest). */
    private long version;
    /** The key node whose chain {@link #chain} holds, newest first as of the walk; 0: none. */
    private long chainOf;

    private long[] chain = new long[8];
    /** Index of {@link #version} in {@link #chain} while {@code chainOf == node}. */
    private int chainAt;
    /** The array {@link #lendKey} refills while keys keep its length (a store's keys mostly share one length). */
    private byte[] lent = MemSkipList.NO_BYTES;
    /** The array {@link #lendValue} refills while values keep its length. */
    private final MemSkipList.LentValue lentValue = new MemSkipList.LentValue();

    MemTableIterator(MemSkipList list) {
        this.list = list;
    }

    @Override
    public boolean valid() {
        return node != 0;
    }

    @Override
    public void seekToFirst() {
        atNewest(list.first());
        sizeLent();
    }

    @Override
    public void seek(byte[] target) {
        MemKey t = MemKey.of(target);
        long x = list.findGreaterOrEqual(t, null);
        if (x != 0 && list.keyEquals(x, t)) {
            // the first version at or after the target: its trailer is at or below the target's
            for (long v = list.newest(x); v != 0; v = list.older(x, v)) {
                if (Long.compareUnsigned(list.trailer(v), t.trailer) <= 0) {
                    node = x;
                    version = v;
                    sizeLent();
                    return;
                }
            }
            x = list.next(x);
        }
        atNewest(x);
        sizeLent();
    }

    @Override
    public void next() {
        long x = current();
        if (version == x) {
            atNewest(list.next(x));
        } else {
            version = list.older(x, version);
        }
    }

    @Override
    public void seekToLast() {
        atOldest(list.findLast());
    }

    @Override
    public void seekForPrev(byte[] target) {
        MemKey t = MemKey.of(target);
        long x = list.findLessOrEqual(t);
        if (x != 0 && list.keyEquals(x, t)) {
            // the last version at or before the target: the oldest whose trailer is at or above the target's
            long last = 0;
            for (long v = list.newest(x); v != 0; v = list.older(x, v)) {
                if (Long.compareUnsigned(list.trailer(v), t.trailer) < 0) {
                    break;
                }
                last = v;
            }
            if (last != 0) {
                node = x;
                version = last;
                return;
            }
            x = list.findLessThan(t);
        }
        atOldest(x);
    }

    @Override
    public void prev() {
        long x = current();
        long newest = list.newest(x);
        if (version == newest) {
            atOldest(list.findLessThan(x));
            return;
        }
        if (chainOf != x || chainAt <= 0 || chain[chainAt] != version) {
            // the chain from its newest version down to the current one (which it holds: versions only get newer)
            int n = 0;
            for (long v = newest; ; v = list.older(x, v)) {
                if (n == chain.length) {
                    chain = Arrays.copyOf(chain, 2 * n);
                }
                chain[n++] = v;
                if (v == version) {
                    break;
                }
            }
            chainOf = x;
            chainAt = n - 1;
        }
        version = chain[--chainAt];
    }

    /**
     * After a seek: the arrays {@link #lendKey} and {@link #lendValue} refill sized for the entry here, so their first
     * call takes the branch every later call with keys and values of one length takes (a flush's iterator is new at
     * every flush; see MemSkipList.sizeLent).
     */
    private void sizeLent() {
        long x = node;
        if (x != 0) {
            int n = list.keyLength(x) + InternalKey.TRAILER_SIZE;
            if (lent.length != n) {
                lent = new byte[n];
            }
            list.sizeLent(version, lentValue);
        }
    }

    /** At key node {@code x}'s newest version (0: not valid). */
    private void atNewest(long x) {
        node = x;
        version = x == 0 ? 0 : list.newest(x);
    }

    /** At key node {@code x}, its key's oldest version (0: not valid). */
    private void atOldest(long x) {
        node = x;
        version = x;
    }

    /** The current key node. @throws NoSuchElementException when the iterator is not valid */
    private long current() {
        long c = node;
        if (c == 0) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return c;
    }

    @Override
    public byte[] key() {
        return list.encodedKey(current(), version);
    }

    @Override
    public byte[] lendKey() {
        byte[] k = list.encodedKey(current(), version, lent);
        lent = k;
        return k;
    }

    @Override
    public byte[] value() {
        current();
        return list.value(version);
    }

    @Override
    public byte[] lendValue() {
        current();
        return list.value(version, lentValue);
    }

    @Override
    public void close() {
        node = 0;
        version = 0;
        chainOf = 0;
    }
}

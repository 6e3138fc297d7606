package io.bloomkv.engine.internal.compaction;

import io.bloomkv.engine.internal.version.FileMetaData;
import java.util.Arrays;
import java.util.List;

/**
 * Where a compaction's output tables end. Without a level below the output level (the last level,
 * or no table there in the compaction's range) an output ends once it reaches the target file size,
 * as in LevelDB. Otherwise its ends are aligned with the boundaries of the tables one level further
 * down (the "grandparents"), as RocksDB's {@code level_compaction_dynamic_file_size} does: an
 * output of at least half the target size ends where the keys pass a grandparent's last key, and
 * any output ends at twice the target size. An output aligned so overlaps whole grandparents and
 * no partial one, so compacting it down later rewrites only the tables its keys fall into
 * (without alignment each such compaction also rewrites, on average, most of one grandparent that
 * it overlaps only at an edge).
 *
 * <p>With a partition prefix length {@code n > 0} (RocksDB's {@code SstPartitionerFixedPrefix}), an output also ends
 * wherever the first {@code n} bytes of the user keys change, whatever its size: the tables then never mix two
 * prefixes, so a range tombstone over whole prefixes covers whole tables, which compactions drop unread.
 *
 * <p>Fed every user key of the merge's output in order ({@link #shouldCutBefore}), once per user
 * key: an output never ends inside one user key's entries.
 */
public final class OutputCutter {
    private final List<FileMetaData> grandparents;
    private final long targetSize;
    /** Index of the first grandparent whose last key is not below the last key seen. */
    private int next;
    /** 0: no partitioning; else the prefix length whose change ends an output. */
    private final int partitionPrefixLength;
    /** The last user key fed, {@code last[0, lastLength)} (only kept when partitioning). */
    private byte[] last;

    private int lastLength;

    /**
     * @param grandparents the tables of the level below the output level that overlap the
     *                     compaction's key range, in key order with disjoint ranges (may be empty)
     * @param targetSize   the target file size
     */
    public OutputCutter(List<FileMetaData> grandparents, long targetSize) {
        this(grandparents, targetSize, 0);
    }

    /**
     * @param partitionPrefixLength 0, or the number of leading user-key bytes whose change ends an output
     */
    public OutputCutter(List<FileMetaData> grandparents, long targetSize, int partitionPrefixLength) {
        if (targetSize <= 0) {
            throw new IllegalArgumentException("targetSize must be > 0: " + targetSize);
        }
        if (partitionPrefixLength < 0) {
            throw new IllegalArgumentException("partitionPrefixLength must be >= 0: " + partitionPrefixLength);
        }
        this.partitionPrefixLength = partitionPrefixLength;
        this.grandparents = List.copyOf(grandparents);
        this.targetSize = targetSize;
    }

    /**
     * Whether the current output, holding {@code outputSize} bytes (0: there is none), ends before
     * {@code userKey}, the next user key to be written (larger than every key fed before).
     */
    public boolean shouldCutBefore(byte[] userKey, long outputSize) {
        return shouldCutBefore(userKey, userKey.length, outputSize);
    }

    /**
     * {@link #shouldCutBefore(byte[], long)} of the user key {@code key[0, userKeyLength)} (an internal key's user-key
     * part, compared in place). The array may be kept until the next call, so the caller must not change it meanwhile.
     */
    public boolean shouldCutBefore(byte[] key, int userKeyLength, long outputSize) {
        boolean crossed = false;
        while (next < grandparents.size()) {
            byte[] g = grandparents.get(next).largestUserKey();
            if (Arrays.compareUnsigned(key, 0, userKeyLength, g, 0, g.length) <= 0) {
                break;
            }
            next++;
            crossed = true;
        }
        boolean newPartition = false;
        if (partitionPrefixLength > 0) {
            newPartition = last != null && !samePrefix(last, lastLength, key, userKeyLength, partitionPrefixLength);
            last = key;
            lastLength = userKeyLength;
        }
        if (outputSize == 0) {
            return false;
        }
        if (newPartition) {
            return true;
        }
        if (grandparents.isEmpty()) {
            return outputSize >= targetSize;
        }
        return outputSize >= 2 * targetSize || (crossed && outputSize >= targetSize / 2);
    }

    /** Whether the first {@code n} bytes of a[0, aLength) and b[0, bLength) (all of a shorter key) are equal. */
    private static boolean samePrefix(byte[] a, int aLength, byte[] b, int bLength, int n) {
        int la = Math.min(n, aLength);
        int lb = Math.min(n, bLength);
        return Arrays.equals(a, 0, la, b, 0, lb);
    }

    /**
     * Whether user keys {@code a} and {@code b} fall in the same partition of prefix length {@code n > 0}: the keys
     * that share their first {@code n} bytes; a key shorter than {@code n} is a partition of its own. Every partition
     * is one contiguous run of the key order, [{@link #partitionStart}, {@link #partitionEnd}).
     */
    public static boolean samePartition(byte[] a, byte[] b, int n) {
        return samePrefix(a, a.length, b, b.length, n);
    }

    /** {@link #samePartition(byte[], byte[], int)} of the user keys {@code a[0, aLength)} and {@code b[0, bLength)}. */
    public static boolean samePartition(byte[] a, int aLength, byte[] b, int bLength, int n) {
        return samePrefix(a, aLength, b, bLength, n);
    }

    /** The smallest byte string of {@code userKey}'s partition (prefix length {@code n > 0}): its prefix, or itself. */
    public static byte[] partitionStart(byte[] userKey, int n) {
        return userKey.length <= n ? userKey : Arrays.copyOf(userKey, n);
    }

    /**
     * The smallest byte string above every key of {@code userKey}'s partition (prefix length {@code n > 0}), or null
     * when none exists (a prefix of 0xFF bytes only): the key itself followed by 0x00 for a key shorter than
     * {@code n}, else its prefix with the last byte that is not 0xFF incremented and the bytes after it dropped.
     */
    public static byte[] partitionEnd(byte[] userKey, int n) {
        if (userKey.length < n) {
            return Arrays.copyOf(userKey, userKey.length + 1);
        }
        for (int i = n - 1; i >= 0; i--) {
            if (userKey[i] != (byte) 0xFF) {
                byte[] end = Arrays.copyOf(userKey, i + 1);
                end[i]++;
                return end;
            }
        }
        return null;
    }
}

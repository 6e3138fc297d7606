package io.bloomkv.engine.internal.rangedel;

import java.util.Arrays;

/**
 * One range deletion (RocksDB's {@code DeleteRange}): every entry of a user key in [{@code begin}, {@code end}) with a
 * sequence number below {@code sequence} reads as deleted, for readers at {@code sequence} or later. The arrays are
 * not copied and must not be changed.
 */
public record RangeTombstone(byte[] begin, byte[] end, long sequence) {
    /**
     * The type code of a range deletion: the operation code in a write batch, and the type byte of the internal keys
     * of a table's range-deletion block (RocksDB's {@code kTypeRangeDeletion}, also 0x0F). Never the type of an entry
     * of a data block or a memtable. engine/FORMAT.md, "Range deletion block".
     */
    public static final int TYPE_CODE = 0x0F;

    /** True when {@code userKey} lies in [begin, end). */
    public boolean covers(byte[] userKey) {
        return Arrays.compareUnsigned(begin, userKey) <= 0 && Arrays.compareUnsigned(userKey, end) < 0;
    }

    /**
     * The largest user key this tombstone may cover, as a table bound: {@code end} without its last byte when that
     * byte is 0 (nothing sorts between x and x||0x00, so the key before x||0x00 is x), else {@code end} itself (one key
     * too far, harmless: bounds may be wider than the data).
     */
    public byte[] largestCoveredBound() {
        if (end.length > 1 && end[end.length - 1] == 0) {
            return Arrays.copyOf(end, end.length - 1);
        }
        return end;
    }

    /** The successor of {@code key} in byte order: {@code key || 0x00}. */
    public static byte[] successor(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }

    @Override
    public String toString() {
        return "RangeTombstone[" + Arrays.toString(begin) + ", " + Arrays.toString(end) + ")@" + sequence;
    }
}

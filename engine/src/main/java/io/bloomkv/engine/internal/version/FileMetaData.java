package io.bloomkv.engine.internal.version;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.table.TableProperties;
import java.util.Arrays;

/**
 * What the MANIFEST records about one table file: number, size, internal-key range, entry count,
 * sequence range. Immutable; the key arrays must not be modified.
 */
public final class FileMetaData {
    private final long number;
    private final long fileSize;
    private final byte[] smallest;
    private final byte[] largest;
    private final long entries;
    private final long smallestSequence;
    private final long largestSequence;
    private final byte[] smallestUserKey;
    private final byte[] largestUserKey;

    public FileMetaData(
            long number,
            long fileSize,
            byte[] smallest,
            byte[] largest,
            long entries,
            long smallestSequence,
            long largestSequence) {
        if (smallest.length < InternalKey.TRAILER_SIZE || largest.length < InternalKey.TRAILER_SIZE) {
            throw new IllegalArgumentException("table key range must be internal keys");
        }
        this.number = number;
        this.fileSize = fileSize;
        this.smallest = smallest;
        this.largest = largest;
        this.entries = entries;
        this.smallestSequence = smallestSequence;
        this.largestSequence = largestSequence;
        this.smallestUserKey = InternalKey.userKey(smallest);
        this.largestUserKey = InternalKey.userKey(largest);
    }

    /** The metadata of table {@code number} from the properties its writer returned. */
    public static FileMetaData of(long number, TableProperties props) {
        return new FileMetaData(
                number,
                props.fileSize(),
                props.smallestKey(),
                props.largestKey(),
                props.entries(),
                props.smallestSeq(),
                props.largestSeq());
    }

    public long number() {
        return number;
    }

    public long fileSize() {
        return fileSize;
    }

    /** Smallest internal key. */
    public byte[] smallest() {
        return smallest;
    }

    /** Largest internal key. */
    public byte[] largest() {
        return largest;
    }

    public byte[] smallestUserKey() {
        return smallestUserKey;
    }

    public byte[] largestUserKey() {
        return largestUserKey;
    }

    public long entries() {
        return entries;
    }

    public long smallestSequence() {
        return smallestSequence;
    }

    public long largestSequence() {
        return largestSequence;
    }

    /** True when {@code userKey} lies in [smallest user key, largest user key]. */
    public boolean mayContain(byte[] userKey) {
        return Arrays.compareUnsigned(userKey, smallestUserKey) >= 0
                && Arrays.compareUnsigned(userKey, largestUserKey) <= 0;
    }

    /** True when the user-key range overlaps [from, to]; a null bound is open. */
    public boolean overlaps(byte[] fromUserKey, byte[] toUserKey) {
        if (fromUserKey != null && Arrays.compareUnsigned(largestUserKey, fromUserKey) < 0) {
            return false;
        }
        return toUserKey == null || Arrays.compareUnsigned(smallestUserKey, toUserKey) <= 0;
    }

    @Override
    public String toString() {
        return "#" + number + "(" + fileSize + " bytes, " + entries + " entries, seq " + smallestSequence + ".."
                + largestSequence + ")";
    }
}

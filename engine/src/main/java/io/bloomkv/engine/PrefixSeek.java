package io.bloomkv.engine;

import io.bloomkv.bloom.Hashing;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.iterator.MergingIterator;
import io.bloomkv.engine.internal.memtable.MemTable;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Prefix seeks of one {@link DbIterator} ({@link ReadOptions#prefixSameAsStart} with {@link Options#prefixLength}):
 * for a target's prefix, a merged iterator over the memtables and only the tables that may hold a key with that
 * prefix ({@code Version.prefixIterators}: key range, then the table's prefix filter). The iterator's SuperVersion
 * keeps every table alive.
 */
final class PrefixSeek {
    private final SuperVersion sv;
    private final int prefixLength;

    private PrefixSeek(SuperVersion sv, int prefixLength) {
        this.sv = sv;
        this.prefixLength = prefixLength;
    }

    /** Prefix seeks for an iterator reading {@code sv}, or null when the options do not ask for them. */
    static PrefixSeek of(int prefixLength, ReadOptions readOptions, SuperVersion sv) {
        if (readOptions == null || !readOptions.prefixSameAsStart() || prefixLength == 0) {
            return null;
        }
        return new PrefixSeek(sv, prefixLength);
    }

    /** The same prefix seeks over {@code next} (an iterator's {@link DbIterator#refresh}). */
    PrefixSeek over(SuperVersion next) {
        return new PrefixSeek(next, prefixLength);
    }

    /** The prefix a seek to {@code target} is confined to, or null for a target shorter than the prefix length. */
    byte[] prefixOf(byte[] target) {
        return inDomain(target) ? Arrays.copyOf(target, prefixLength) : null;
    }

    /** {@code key} is at least the prefix length long: a seek to it is confined to its prefix. */
    boolean inDomain(byte[] key) {
        return key.length >= prefixLength;
    }

    MergingIterator iterator(byte[] prefix) {
        List<InternalIterator> children = new ArrayList<>();
        children.add(sv.mem.iterator());
        for (MemTable imm : sv.imms) {
            children.add(imm.iterator());
        }
        children.addAll(sv.version.prefixIterators(prefix, Hashing.hash64(prefix)));
        return new MergingIterator(children);
    }

    /** The user key of {@code internalKey} starts with {@code prefix}. */
    static boolean userKeyStartsWith(byte[] internalKey, byte[] prefix) {
        int userLength = internalKey.length - InternalKey.TRAILER_SIZE;
        return userLength >= prefix.length && Arrays.equals(internalKey, 0, prefix.length, prefix, 0, prefix.length);
    }
}

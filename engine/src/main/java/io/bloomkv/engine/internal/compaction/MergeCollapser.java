package io.bloomkv.engine.internal.compaction;

import io.bloomkv.engine.MergeOperator;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.KeyLookup;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import java.util.ArrayList;
import java.util.List;

/**
 * Collapses a chain of merge operands during a compaction (RocksDB's {@code MergeHelper::MergeUntil}), from the
 * newest entry of a user key that every reader sees (sequence {@code <= } the oldest snapshot) downwards: every
 * older entry of the key is hidden behind it for every reader, so the chain can be replaced by what it reads as.
 *
 * <ul>
 *   <li>The chain reaches a PUT or a DELETE (or an entry that reads as deleted, see {@link Dead}): one PUT, the full
 *       merge, under the newest operand's sequence.</li>
 *   <li>It ends without one and no deeper level may hold the key: the full merge onto no value.</li>
 *   <li>Otherwise the older value may be below: adjacent operands are combined with {@code partialMerge} where the
 *       operator accepts (each result under the newer one's sequence) and kept as operands.</li>
 * </ul>
 */
public final class MergeCollapser {
    /** Says whether an entry reads as deleted for every reader (a range tombstone every snapshot sees covers it). */
    public interface Dead {
        boolean isDead(byte[] userKey, long sequence);
    }

    /** One entry to write: an internal key and its value. */
    public record Out(byte[] internalKey, byte[] value) {}

    private MergeCollapser() {}

    /**
     * With {@code it} on a MERGE entry of {@code userKey} that every reader sees, consumes that entry and every older
     * one of the key (leaving {@code it} on the next user key or invalid) and returns the entries to write instead,
     * newest first. It reads {@code it}'s keys with {@link InternalIterator#lendKey()} (kept only until it moves): a
     * compaction passes its merging iterator, a flush its memtable's iterator.
     *
     * @param valueMayBeBelow whether a level below the compaction's output may hold the key
     */
    public static List<Out> collapse(
            InternalIterator it, byte[] userKey, MergeOperator operator, boolean valueMayBeBelow, Dead dead) {
        List<byte[]> operands = new ArrayList<>(); // newest first
        List<Long> sequences = new ArrayList<>();
        boolean reachedBase = false;
        byte[] base = null;
        while (it.valid()) {
            byte[] ik = it.lendKey();
            if (InternalKey.compareUserKey(ik, userKey) != 0) {
                break;
            }
            long seq = InternalKey.sequence(ik);
            ValueType type = dead != null && dead.isDead(userKey, seq) ? ValueType.DELETE : InternalKey.type(ik);
            if (!reachedBase) {
                if (type == ValueType.MERGE) {
                    operands.add(it.value());
                    sequences.add(seq);
                } else {
                    reachedBase = true;
                    base = type == ValueType.PUT ? it.value() : null;
                }
            }
            it.next(); // older entries after the base are hidden for every reader: dropped
        }
        long newest = sequences.get(0);
        List<Out> out = new ArrayList<>();
        if (reachedBase || !valueMayBeBelow) {
            List<byte[]> oldestFirst = new ArrayList<>(operands.size());
            for (int i = operands.size() - 1; i >= 0; i--) {
                oldestFirst.add(operands.get(i));
            }
            out.add(new Out(
                    InternalKey.encode(userKey, newest, ValueType.PUT),
                    KeyLookup.fullMerge(operator, userKey, base, oldestFirst)));
            return out;
        }
        // Partial merges, oldest first: each operand joins the one before it when the operator can combine them.
        List<byte[]> combined = new ArrayList<>();
        List<Long> combinedSeq = new ArrayList<>();
        for (int i = operands.size() - 1; i >= 0; i--) {
            byte[] op = operands.get(i);
            int last = combined.size() - 1;
            byte[] joined = last < 0 ? null : KeyLookup.partialMerge(operator, userKey, combined.get(last), op);
            if (joined != null) {
                combined.set(last, joined);
                combinedSeq.set(last, sequences.get(i));
            } else {
                combined.add(op);
                combinedSeq.add(sequences.get(i));
            }
        }
        for (int i = combined.size() - 1; i >= 0; i--) {
            out.add(new Out(InternalKey.encode(userKey, combinedSeq.get(i), ValueType.MERGE), combined.get(i)));
        }
        return out;
    }
}

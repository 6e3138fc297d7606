package io.bloomkv.engine;

import java.util.List;

/**
 * Combines a key's merge operands ({@link Db#merge}) with its older value, as RocksDB's {@code MergeOperator}: a
 * read-modify-write the database does lazily, on reads and in compactions, instead of the caller reading first. Set
 * with {@link Options#mergeOperator}; {@link MergeOperators} has the built-in ones.
 *
 * <p>Contract (RocksDB's): {@link #fullMerge} gives the value a key has after its operands are applied, oldest first,
 * to its older value (null when the key had none or was deleted). {@link #partialMerge} may combine two adjacent
 * operands into one when no older value is in reach (a compaction above the key's oldest entry); returning null says
 * it cannot, and both operands are kept. Both must be deterministic and free of side effects: the same inputs are
 * merged again on every read until a compaction stores the result. Called concurrently from readers and the
 * compaction thread. An operator that throws, or whose {@link #fullMerge} returns null, makes the read (or the
 * compaction) fail with a {@link MergeOperatorException}; a wrong value is never returned.
 *
 * <p>A database that holds merge operands must be opened with an operator: {@link Db#open} otherwise fails with a
 * {@link MergeOperatorException}. Use the same operator (same {@link #name()}) for the life of the database.
 */
public interface MergeOperator {
    /** A stable name of the operator (RocksDB's {@code Name()}), for messages and table properties. */
    String name();

    /**
     * The key's value after applying {@code operands} to {@code existingValue}.
     *
     * @param key           the user key (do not modify)
     * @param existingValue the older value, or null when there is none (never written, or deleted)
     * @param operands      the operands, oldest first; at least one (do not modify)
     * @return the new value, never null
     */
    byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands);

    /**
     * One operand equivalent to applying {@code leftOperand} then {@code rightOperand} (the newer one), or null when
     * the two cannot be combined without the older value (RocksDB's {@code PartialMerge}; its default also declines).
     */
    default byte[] partialMerge(byte[] key, byte[] leftOperand, byte[] rightOperand) {
        return null;
    }
}

package io.bloomkv.engine;

/**
 * What {@link Options#bitsPerKey} holds fixed when a table's filter kind is not a Bloom filter ({@code RIBBON}, all
 * tables or from {@link Options#ribbonFromLevel} down). Bloom kinds (BLOCKED, STANDARD, PARTITIONED) spend the bits as
 * they are under either budget.
 */
public enum FilterBudget {
    /**
     * The default, RocksDB's meaning ({@code NewRibbonFilterPolicy(bloom_equivalent_bits_per_key)}): a RIBBON table
     * reaches the false-positive rate BLOCKED has at {@link Options#bitsPerKey}, in about 30% less memory (7.0 bits per
     * key for the 0.97% of 10 Bloom bits).
     */
    FALSE_POSITIVE_RATE,
    /**
     * {@link Options#bitsPerKey} is the memory: a RIBBON table spends that many bits per key, like a Bloom table, and
     * gets the lower rate they buy (0.12% at 10 bits per key against BLOCKED's 0.97%). For absent-key lookups that pay a
     * device read per false positive ({@link Options#useDirectReads}), where memory, not probe time, is the budget.
     */
    MEMORY
}

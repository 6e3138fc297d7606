package io.bloomkv.bloom;

/**
 * The filter layouts this library implements. Each kind has a stable on-disk {@link #code()}
 * (see bloom/FORMAT.md); codes are never derived from {@link #ordinal()}.
 */
public enum FilterKind {
    /** One array of m bits; k probes anywhere in it. */
    STANDARD(1),
    /** k rows ("bit arrays t_1..t_k") of m/k bits each; probe i sets one bit in row i. */
    PARTITIONED(2),
    /** All k probes of a key fall in one 512-bit (64-byte, one cache line) block, as RocksDB's FastLocalBloom. */
    BLOCKED(3),
    /** m 4-bit saturating counters instead of bits; supports {@link CountingFilter#remove(byte[])}. */
    COUNTING(4),
    /**
     * A static filter for an immutable key set (Dillinger &amp; Walzer's standard Ribbon, 128-bit coefficient rows,
     * interleaved solution storage): about 30% less memory than a Bloom filter at the same rate, built from all the
     * keys at once by {@link Filters#build}; it cannot be created empty nor added to.
     */
    RIBBON(5);

    private final int code;

    /** Whether filters of this kind are built from their whole key set ({@link Filters#build}) and never added to. */
    public boolean isStatic() {
        return this == RIBBON;
    }

    FilterKind(int code) {
        this.code = code;
    }

    /** The one-byte code stored in the serialized header. */
    public int code() {
        return code;
    }

    /**
     * The kind with the given on-disk code.
     *
     * @throws FilterFormatException if no kind has this code
     */
    public static FilterKind fromCode(int code) {
        for (FilterKind kind : values()) {
            if (kind.code == code) {
                return kind;
            }
        }
        throw new FilterFormatException("unknown filter kind code " + code);
    }
}

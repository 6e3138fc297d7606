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
    COUNTING(4);

    private final int code;

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

package io.bloomkv.engine.internal;

/**
 * The type byte of an internal key. The codes are on-disk constants (engine/FORMAT.md,
 * "Internal key"), never {@code ordinal()}.
 */
public enum ValueType {
    /** A tombstone: the user key was deleted at this sequence number. */
    DELETE(0),
    /** A value: the user key was set at this sequence number. */
    PUT(1),
    /**
     * A merge operand (RocksDB's {@code kTypeMerge}, also 0x02): combined by the database's merge operator with the
     * older entries of the user key when read or compacted.
     */
    MERGE(2);

    /**
     * The type used when seeking: sorts first among entries of one user key and sequence, so it is the largest code
     * an entry may carry (LevelDB's {@code kValueTypeForSeek}).
     */
    public static final ValueType FOR_SEEK = MERGE;

    private final int code;

    ValueType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** @throws IllegalArgumentException for a code that is not a known type */
    public static ValueType fromCode(int code) {
        switch (code) {
            case 0:
                return DELETE;
            case 1:
                return PUT;
            case 2:
                return MERGE;
            default:
                throw new IllegalArgumentException("unknown value type code " + code);
        }
    }
}

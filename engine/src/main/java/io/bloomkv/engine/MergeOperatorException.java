package io.bloomkv.engine;

/**
 * A merge could not be done: the {@link MergeOperator} threw or returned null (the read or compaction that needed the
 * merge fails; nothing is changed and no wrong value is returned), or a database holding merge operands was opened
 * without {@link Options#mergeOperator} (RocksDB fails such reads with {@code NotSupported}; bloomkv refuses the open).
 */
public class MergeOperatorException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    public MergeOperatorException(String message) {
        super(message);
    }

    public MergeOperatorException(String message, Throwable cause) {
        super(message, cause);
    }
}

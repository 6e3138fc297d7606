package io.bloomkv.engine;

/**
 * A caller passed input the database does not accept: a null or empty key (an iterator's seek target may be empty:
 * {@link DbIterator#seek}), a null value, a key longer than {@link Db#MAX_KEY_SIZE} to write (reads take longer keys,
 * as RocksDB does: seek targets, iterator bounds, {@link Db#get}; so do the bounds of range operations,
 * {@link Db#deleteRange}, {@link Db#compactRange}), range bounds out of order, a value longer than
 * {@link Db#MAX_VALUE_SIZE}, a snapshot of another database, an option out of range. Nothing was written; the
 * database stays usable.
 */
public class InvalidArgumentException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    public InvalidArgumentException(String message) {
        super(message);
    }
}

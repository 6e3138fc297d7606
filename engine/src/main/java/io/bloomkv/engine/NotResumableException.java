package io.bloomkv.engine;

/**
 * {@link Db#resume()} refuses to clear the background error: it is one after which the database's state in memory may
 * disagree with its files in a way resume cannot repair (a corrupt file, an Error or an unexpected exception in a
 * background job), as RocksDB's {@code Resume} refuses an unrecoverable or fatal error. Reopen the database (its files
 * are as the last acknowledged write left them). The refused error is the cause; writes keep failing with it.
 */
public class NotResumableException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    public NotResumableException(String message, BloomKvException cause) {
        super(message, cause);
    }
}

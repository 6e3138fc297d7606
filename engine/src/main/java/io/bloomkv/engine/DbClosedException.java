package io.bloomkv.engine;

/** A {@link Db}, or an iterator of one, was used after {@code close()}. */
public class DbClosedException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    public DbClosedException(String message) {
        super(message);
    }
}

package io.bloomkv.engine;

/**
 * Base of every exception bloomkv throws on purpose. Unchecked, like LevelDB's {@code DBException}:
 * a caller that wants to react to one kind catches the subclass.
 */
public class BloomKvException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BloomKvException(String message) {
        super(message);
    }

    public BloomKvException(String message, Throwable cause) {
        super(message, cause);
    }
}

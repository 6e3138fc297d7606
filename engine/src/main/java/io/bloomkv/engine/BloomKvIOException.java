package io.bloomkv.engine;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * An I/O operation of the database failed. The cause is always the {@link IOException} the file
 * system threw. After a failure in the write path (WAL append or sync, flush, compaction, MANIFEST
 * write) writes keep failing with this exception until {@link Db#resume} or a reopen, because the WAL
 * may hold a partial record; reads keep working.
 */
public class BloomKvIOException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    public BloomKvIOException(String message, IOException cause) {
        super(message + ": " + cause, cause);
    }

    /** The I/O error that caused this exception. */
    @Override
    public synchronized IOException getCause() {
        return (IOException) super.getCause();
    }

    /** Wraps as the JDK's unchecked form, for callers that prefer it. */
    public UncheckedIOException asUnchecked() {
        return new UncheckedIOException(getMessage(), getCause());
    }
}

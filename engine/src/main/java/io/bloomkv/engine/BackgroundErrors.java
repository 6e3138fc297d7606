package io.bloomkv.engine;

import java.io.IOException;
import java.io.UncheckedIOException;

/** How a failure of background work (flush, compaction, a MANIFEST write) becomes the database's background error. */
final class BackgroundErrors {
    private BackgroundErrors() {}

    /**
     * {@code failure} as a {@link BloomKvException}: itself when it is one, a {@link BloomKvIOException}
     * for an IOException or UncheckedIOException, else a BloomKvException wrapping it (an Error too: it is recorded, never
     * lost with the thread, so writers and flush() fail instead of waiting forever).
     */
    static BloomKvException of(String what, Throwable failure) {
        if (failure instanceof BloomKvException e) {
            return e;
        }
        if (failure instanceof IOException io) {
            return new BloomKvIOException(what, io);
        }
        if (failure instanceof UncheckedIOException u) {
            // a table read inside a merge's iterators (found by FaultSweepTest)
            return new BloomKvIOException(what, u.getCause());
        }
        return new BloomKvException(what, failure);
    }
}

package io.bloomkv.engine;

/**
 * {@link Db#waitForBackgroundWork()} on a database whose background work is paused ({@link Db#pauseBackgroundWork()}),
 * or paused while it waited: the work it would wait for cannot run until {@link Db#continueBackgroundWork()}, so it
 * gives up instead of waiting (RocksDB's {@code WaitForCompact} with {@code abort_on_pause}, which returns
 * {@code Status::Aborted}).
 */
public class BackgroundWorkPausedException extends BloomKvException {
    private static final long serialVersionUID = 1L;

    public BackgroundWorkPausedException(String message) {
        super(message);
    }
}

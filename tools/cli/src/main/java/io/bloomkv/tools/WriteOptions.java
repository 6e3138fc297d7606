package io.bloomkv.tools;

import io.bloomkv.bloom.FilterKind;
import io.bloomkv.engine.Db;
import io.bloomkv.engine.Options;
import io.bloomkv.engine.SyncMode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Options of the commands that write: how tables written by this run are built, whether to create
 * the database, and whether to flush the memtable to a table before closing. Every write is
 * synced (SyncMode.EVERY_WRITE unless {@code --no-sync}).
 */
final class WriteOptions {
    @Option(names = "--create", description = "Create the database directory if it does not exist.")
    boolean create;

    @Option(names = "--flush", description = "Flush the memtable to an SSTable before closing.")
    boolean flush;

    @Option(
            names = "--no-sync",
            negatable = false,
            description =
                    "Do not fsync the WAL after every write (faster bulk loads; the WAL is synced once before close).")
    boolean noSync;

    @Option(
            names = "--filter-kind",
            paramLabel = "KIND",
            completionCandidates = TableFilterKinds.class,
            description = "Filter of tables written by this run: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).",
            defaultValue = "BLOCKED")
    FilterKind filterKind;

    /**
     * The kinds {@code --filter-kind} offers (help and completion): those a table can carry. COUNTING, a filter for
     * mutable sets, is refused by {@code Options.filterKind} (exit code 2), so it is not offered.
     */
    static final class TableFilterKinds implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(StressOptions.TABLE_FILTER_KINDS)
                    .map(FilterKind::name)
                    .iterator();
        }
    }

    @Option(
            names = "--bits-per-key",
            paramLabel = "B",
            description =
                    "Filter bits per key of tables written by this run; 0 = no filter (default: ${DEFAULT-VALUE}).",
            defaultValue = "10")
    double bitsPerKey;

    @Mixin
    OpenOptions open = new OpenOptions();

    Options toOptions() {
        return open.apply(Options.defaults())
                .filterKind(filterKind)
                .bitsPerKey(bitsPerKey)
                .syncMode(noSync ? SyncMode.NONE : SyncMode.EVERY_WRITE);
    }

    /** What a writing command does with the open database. */
    @FunctionalInterface
    interface DbWork<T> {
        T run(Db db) throws IOException;
    }

    /**
     * Opens {@code dir} with these options ({@link DbOpener#open}), runs {@code work}, flushes the
     * memtable to a table when {@code --flush} was given, syncs the WAL once under {@code --no-sync} (a close does not
     * sync it), and closes the database: every write the command reports is durable when it exits.
     */
    <T> T writeTo(Path dir, DbWork<T> work) throws IOException {
        try (Db db = DbOpener.open(dir, toOptions(), create, "--create")) {
            T result = work.run(db);
            if (flush) {
                db.flush();
            }
            if (noSync) {
                db.syncWal();
            }
            return result;
        }
    }
}

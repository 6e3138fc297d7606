package io.bloomkv.engine;

import io.bloomkv.engine.internal.compaction.Compaction;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.version.VersionSet;
import java.io.IOException;
import java.nio.file.Path;

/**
 * What the {@link Compactor} needs from its database, and nothing more (Pebble keeps its commit
 * pipeline behind a narrow {@code commitEnv} the same way).
 */
interface CompactionEnv {
    Options options();

    /** The database directory (names the compaction thread). */
    Path directory();

    VersionSet versions();

    /** The open reader of live table {@code number}. */
    TableReader table(long number);

    /** Oldest sequence number some reader may still need: entries it can see must survive. */
    long smallestSnapshot();

    /**
     * The newest live snapshot's sequence, -1 when none (so that entries at sequence 0, from an ingestion, are newer
     * than every snapshot too): a compaction filter never sees what one may read.
     */
    long newestSnapshot();

    /**
     * Holds new snapshots back ({@link Db#getSnapshot} waits) until {@link #releaseSnapshots}, and returns the newest
     * live snapshot's sequence, -1 when none: a compaction whose filter changed entries installs its Version only when
     * no snapshot reads them, and no snapshot is taken between that check and the install.
     */
    long holdSnapshots();

    /** Ends {@link #holdSnapshots}. */
    void releaseSnapshots();

    /** True once the database started closing: a running merge gives up. */
    boolean isShuttingDown();

    BloomKvException backgroundError();

    /** Records {@code e}, the failure of {@code operation}, as the background error (see DbState). */
    void setBackgroundError(String operation, BloomKvException e);

    /**
     * Starts a new output table of compaction {@code job} in {@code level} whose keys lie in [smallestUserKey,
     * largestUserKey] (a bound: the filter's bits per key may depend on what the range overlaps and on the tree the job
     * leaves); its number is kept from deletion until {@link #outputRecorded}.
     */
    TableOutputs.Output newOutput(
            int level, long expectedEntries, Compaction job, byte[] smallestUserKey, byte[] largestUserKey)
            throws IOException;

    /** Evicts and deletes a finished output that will not be recorded. */
    void discardOutput(long number, Exception cause);

    /** Output {@code number} is named by a live Version now (or was abandoned). */
    void outputRecorded(long number);

    /** A compaction's edit was installed: republish to readers ({@link #deleteObsoleteFiles} follows). */
    void versionInstalled();

    /** Deletes what an installed edit made obsolete; never under the database mutex (see ObsoleteFiles). */
    void deleteObsoleteFiles();

    /** Where compaction events go. */
    Events events();

    /** Counts a finished merge (not a trivial move). */
    void compactionFinished(long bytesRead, long bytesWritten);

    /**
     * The filter compaction {@code c} applies to each key's newest value: {@link Options#compactionFilter}, combined
     * with the TTL step in a TTL database ({@link Ttl#compactionFilter}); null = none.
     */
    CompactionFilter compactionFilter(Compaction c);
}

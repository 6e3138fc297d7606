package io.bloomkv.bench.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The db_bench workloads of BENCHMARKS.md, by their db_bench names. */
public enum Workload {
    /** Load N keys in key order (the measured phase is the load). */
    FILLSEQ("fillseq", "load N keys in key order", false, false),
    /** Load N keys in a seeded random order (the measured phase is the load). */
    FILLRANDOM("fillrandom", "load N keys in random order", false, false),
    /** Preload, then put new values under random existing keys. */
    OVERWRITE("overwrite", "update random existing keys", true, false),
    /** Preload, flush, then get keys that exist. */
    READRANDOM("readrandom", "get keys that exist", true, true),
    /** Preload even ids, flush, then get odd ids: absent but inside every table's key range. */
    READMISSING("readmissing", "get absent keys inside the loaded key range", true, true),
    /** Preload, flush, then readers get existing keys while one writer overwrites. */
    READWHILEWRITING("readwhilewriting", "readers while one writer overwrites", true, false),
    /** Preload, flush, then seek to a random existing key and scan 10 (phase seekrandom-10) or 100 entries. */
    SEEKRANDOM("seekrandom", "seek + scan 10 / 100 entries", true, true),
    /** Preload, flush, delete random keys (phase deleterandom), flush, then get them (phase deleterandom-read). */
    DELETERANDOM("deleterandom", "delete random keys, then read them", true, false),
    /** Preload, flush, then each thread: 50% get, 50% read-modify-write (get, then put) of the same key (YCSB A's mix). */
    READUPDATE("readupdate", "50% get, 50% read-modify-write of the same key", true, false),
    /** Preload, flush, then each thread: 95% get, 5% update (a put of an existing key, YCSB B's mix). */
    READHEAVY("readheavy", "95% get, 5% update", true, false),
    /** Preload, flush, then multiGet batches of {@code BenchRunner.MULTIGET_BATCH} keys that exist (RocksDB: multiGetAsList). */
    MULTIGETRANDOM("multigetrandom", "multiGet batches of 32 keys that exist", true, true),
    /** As multigetrandom with absent keys inside the loaded key range (odd ids). */
    MULTIGETMISSING("multigetmissing", "multiGet batches of 32 absent keys", true, true),
    /**
     * Loads keys grouped by a {@link PrefixLayout#PREFIX_LENGTH}-byte prefix ({@link PrefixLayout#KEYS_PER_PREFIX} keys
     * each, every other prefix absent), both engines with a fixed-length prefix extractor of that length; then seeks
     * with prefix-same-as-start semantics to present prefixes, iterating the prefix (phase seekprefix-hit), and to
     * absent prefixes inside every table's key range (phase seekprefix-miss). Its own key layout: its own session.
     */
    SEEKPREFIX("seekprefix", "prefix seeks to present / absent prefixes (prefix filters)", true, true),
    /**
     * Preload, flush, then N counter increments of random existing keys through the engine's merge operator (an
     * unsigned 64-bit add on both engines; phase mergerandom), N more as a read-modify-write loop (get, add, put; phase
     * mergerandom-rmw), then gets of random existing keys, which merge the operands left (phase mergerandom-read).
     */
    MERGERANDOM("mergerandom", "counter increments by merge, by read-modify-write, then gets", true, false),
    /**
     * Preload, flush, then delete 1% of the keys as ranges of {@code BenchRunner.DELETE_RANGE_KEYS} consecutive keys
     * (phase deleterange), then get keys inside the ranges (absent; phase deleterange-inside) and outside them
     * (present; phase deleterange-outside).
     */
    DELETERANGE("deleterange", "drop 1% of the keys as ranges, then read inside and outside them", true, false),
    /**
     * The records family ({@link RecordSource}: ~1 KB values of 10 fields, YCSB's record shape). recordsload: the N
     * records inserted from {@code --threads} threads (the measured phase is the load, YCSB's load phase).
     */
    RECORDSLOAD("recordsload", "records: insert N ~1 KB records from --threads threads", false, false),
    /** Records: 100% reads, zipfian key choice (YCSB C). */
    RECORDSREAD("recordsread", "records: 100% reads, zipfian", true, false),
    /** Records: 95% reads of the latest-inserted records, 5% inserts of new ones (YCSB D). */
    RECORDSLATEST("recordslatest", "records: 95% reads of the latest records, 5% inserts", true, false),
    /** Records: 50% reads, 50% read-modify-writes of the same record, zipfian (YCSB F). */
    RECORDSRMW("recordsrmw", "records: 50% reads, 50% read-modify-writes, zipfian", true, false),
    /** Records: 50% reads, 50% updates (blind writes of a whole record), zipfian (YCSB A). */
    RECORDSUPDATE("recordsupdate", "records: 50% reads, 50% updates, zipfian", true, false),
    /** Records: 95% reads, 5% updates, zipfian (YCSB B). */
    RECORDSREADHEAVY("recordsreadheavy", "records: 95% reads, 5% updates, zipfian", true, false),
    /** Records: 95% short scans (1 to 100 records from a zipfian start), 5% inserts (YCSB E). */
    RECORDSSCAN("recordsscan", "records: 95% scans of up to 100 records, 5% inserts", true, false),
    /**
     * Load N keys in key order through one table file written outside the database and ingested (bloomkv:
     * TableFileWriter + Db.ingest; RocksDB: SstFileWriter + ingestExternalFile, both moving the file in; phase
     * bulkload, timed from the first put to the end of the ingestion and the settling after it), then get keys that
     * exist right after (phase bulkload-read). Compare with fillseq, the same keys through puts.
     */
    BULKLOAD("bulkload", "load N sorted keys through a table file + ingest, then read", false, false);

    /** The records family in the order {@code --workloads records} runs it (the load first). */
    public static final List<Workload> RECORDS =
            List.of(RECORDSLOAD, RECORDSREAD, RECORDSLATEST, RECORDSRMW, RECORDSUPDATE, RECORDSREADHEAVY, RECORDSSCAN);

    private final String dbBenchName;
    private final String description;
    private final boolean preloads;
    private final boolean readOnly;

    Workload(String dbBenchName, String description, boolean preloads, boolean readOnly) {
        this.dbBenchName = dbBenchName;
        this.description = description;
        this.preloads = preloads;
        this.readOnly = readOnly;
    }

    public String dbBenchName() {
        return dbBenchName;
    }

    public String description() {
        return description;
    }

    /** True when the workload first loads the N keys (untimed) and measures what follows. */
    public boolean preloads() {
        return preloads;
    }

    /**
     * True when the workload loads its own key layout ({@link PrefixLayout}) and engines with a prefix extractor, so
     * it shares its database with no other workload.
     */
    public boolean ownLayout() {
        return this == SEEKPREFIX;
    }

    /**
     * True for the records family: its workloads share one database session (each runs on the database the previous
     * one left) and write {@link RecordSource} values instead of the {@code --value-size} ones.
     */
    public boolean records() {
        return RECORDS.contains(this);
    }

    /** True when the measured phases change nothing, so consecutive read-only workloads share one loaded database. */
    public boolean readOnly() {
        return readOnly;
    }

    /**
     * Parses a {@code --workloads} entry: a db_bench name (case-insensitive) as one workload, or {@code records} as
     * the whole records family ({@link #RECORDS}). @throws IllegalArgumentException for an unknown name
     */
    public static List<Workload> parseAll(String name) {
        if (name.trim().equalsIgnoreCase("records")) {
            return RECORDS;
        }
        return List.of(parse(name));
    }

    /** Parses a db_bench name (case-insensitive). @throws IllegalArgumentException for an unknown name */
    public static Workload parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (Workload w : values()) {
            if (w.dbBenchName.equals(n)) {
                return w;
            }
        }
        throw new IllegalArgumentException("unknown workload '" + name + "', expected one of " + names());
    }

    public static List<String> names() {
        List<String> out = new ArrayList<>();
        for (Workload w : values()) {
            out.add(w.dbBenchName);
        }
        return out;
    }

    @Override
    public String toString() {
        return dbBenchName;
    }
}

package io.bloomkv.bench;

import io.bloomkv.bench.engine.MmapReads;
import io.bloomkv.bench.workload.KeyDistribution;
import io.bloomkv.bench.workload.PrefixLayout;
import io.bloomkv.bench.workload.Workload;
import java.nio.file.Path;
import java.util.List;

/**
 * Every parameter of one bench run (BENCHMARKS.md lists the defaults). Both engines get the same
 * values; {@link #validate()} rejects combinations the harness cannot honour.
 *
 * @param num            keys loaded (ids 0, 2, 4, ... 2(num-1))
 * @param reads          point reads per read phase (all threads together)
 * @param seeks          seeks per seekrandom phase
 * @param keySize        bytes per key (at least 8: the first 8 bytes order the keys)
 * @param valueSize      bytes per value
 * @param bitsPerKey     filter bits per key when filters are on
 * @param blockSize      data block size in bytes
 * @param cacheSize      block cache capacity in bytes (same on both engines)
 * @param writeBufferSize memtable size in bytes before a flush
 * @param compression    block compression of both engines, every level: none, lz4 or zstd
 * @param sync           fsync the WAL on every measured write
 * @param threads        threads of the read phases (readers; readupdate/readheavy: threads that read and write)
 * @param engines        engine names, run alternately A B A B
 * @param filterModes    true = filters on, false = filters off
 * @param filterKind     bloomkv's filter kind name (RocksDB always uses its FastLocalBloom)
 * @param workloads      workloads in run order
 * @param seed           seed of every generator
 * @param reportDir      where results.json, report.md and the PNGs go
 * @param workDir        parent of the fresh database directories (deleted after each run)
 * @param cold           evict the tables from the page cache before each read phase
 * @param compact        after each preload, compact every table down the levels on both engines (same LSM shape)
 * @param warmup         untimed operations per engine before the first measurement (JIT warm-up)
 * @param phaseWarmup    untimed operations of the same kind, through the phase's own timed loop, right before each
 *                       read phase (their keys are generated up front, so at most {@link #MAX_PHASE_WARMUP})
 * @param repeat         how many times the whole sequence runs (tables and goals then quote medians and spreads)
 * @param progress       show a progress bar
 * @param fprSweep       draw the FPR-vs-bits-per-key chart (runs a filter sweep)
 * @param valueCompressibility values compress to about this fraction of their size (db_bench's
 *                       compression_ratio; 1.0 = random bytes)
 * @param direct         both engines read tables with O_DIRECT (bypassing the page cache)
 * @param mmapReads      which engines read tables through memory mappings (the others pread): none, bloomkv, rocksdb or
 *                       both; none under {@code direct}; each engine its own way under {@code ownDefaults}
 * @param distribution   how operations choose existing keys (uniform, zipfian, latest)
 * @param ownDefaults    each engine on its own defaults (only filters, bits per key and sync set) instead of matched options
 * @param pairedReads    both engines of a filter mode stay open through a session, and each readrandom/readmissing phase
 *                       runs on them in {@link #PAIRED_SLICES} interleaved slices (A B, B A, ...), so that both engines'
 *                       reads see the same minutes of a noisy machine
 * @param rateLimit      bytes per second both engines' flushes and compactions may write (bloomkv
 *                       {@code Options.rateLimiter}, RocksDB {@code RateLimiter}); 0 = unlimited
 * @param noSettle       read-only workloads of a loaded session first run unsettled: timed right after the load, with
 *                       no flush, no wait for compactions and no phase warm-up (phases named {@code <phase>-unsettled});
 *                       then the engine settles and they run again as usual, so both figures sit side by side
 * @param reopen         every workload of a session runs in a fresh JVM (the same JVM flags) on the database the
 *                       previous phase left: WAL replay, empty caches, cold JIT (no warm-up of any kind)
 * @param filterBudget   bloomkv's {@code Options.filterMemoryBudget} (bench --filter-budget): bytes ("64m") or a share of
 *                       the unbounded filters' size ("25%"); "" = none. RocksDB runs without it
 */
public record BenchConfig(
        long num,
        long reads,
        long seeks,
        int keySize,
        int valueSize,
        double bitsPerKey,
        int blockSize,
        long cacheSize,
        long writeBufferSize,
        String compression,
        boolean sync,
        int threads,
        List<String> engines,
        List<Boolean> filterModes,
        String filterKind,
        List<Workload> workloads,
        long seed,
        Path reportDir,
        Path workDir,
        boolean cold,
        boolean compact,
        long warmup,
        long phaseWarmup,
        int repeat,
        boolean progress,
        boolean fprSweep,
        KeyDistribution distribution,
        double valueCompressibility,
        boolean direct,
        MmapReads mmapReads,
        boolean ownDefaults,
        boolean pairedReads,
        long rateLimit,
        boolean noSettle,
        boolean reopen,
        String filterBudget) {

    public static final List<String> KNOWN_ENGINES = List.of("bloomkv", "rocksdb");

    /** The largest {@code --phase-warmup}: its keys are generated before it runs (~50 bytes each on the heap). */
    public static final long MAX_PHASE_WARMUP = 10_000_000;

    /** The most operations of one phase ({@code --reads}, {@code --seeks}): its keys are generated into arrays first. */
    public static final long MAX_PHASE_OPS = Integer.MAX_VALUE - 8;

    /** Slices per paired read phase ({@code pairedReads}): each engine's gets run in this many interleaved parts. */
    public static final int PAIRED_SLICES = 16;

    public BenchConfig {
        engines = List.copyOf(engines);
        filterModes = List.copyOf(filterModes);
        workloads = List.copyOf(workloads);
        mmapReads = mmapReads == null ? MmapReads.NONE : mmapReads;
    }

    /**
     * How {@code engine} reads its tables in this run: under {@code ownDefaults} each engine's own default (bloomkv
     * "mmap", RocksDB "pread"); else "O_DIRECT" under {@code direct}, or "mmap" or "pread" as {@code mmapReads} says.
     */
    public String readMode(String engine) {
        if (ownDefaults) {
            return "bloomkv".equals(engine) ? "mmap" : "pread";
        }
        if (direct) {
            return "O_DIRECT";
        }
        return mmapReads.maps(engine) ? "mmap" : "pread";
    }

    /** Each engine of the run with its read mode, e.g. "bloomkv mmap, rocksdb pread". */
    public String readModes() {
        StringBuilder sb = new StringBuilder();
        for (String e : engines) {
            sb.append(sb.isEmpty() ? "" : ", ").append(e).append(' ').append(readMode(e));
        }
        return sb.toString();
    }

    /** Throws IllegalArgumentException naming the first bad parameter. */
    public BenchConfig validate() {
        require(num >= 2, "--num must be at least 2, got " + num);
        require(num <= Integer.MAX_VALUE / 2, "--num must be at most " + Integer.MAX_VALUE / 2 + ", got " + num);
        require(reads >= 1, "--reads must be positive, got " + reads);
        require(
                reads <= MAX_PHASE_OPS,
                "--reads must be at most " + MAX_PHASE_OPS + " (a phase's keys are generated before it runs), got "
                        + reads);
        require(seeks >= 1, "--seeks must be positive, got " + seeks);
        require(
                seeks <= MAX_PHASE_OPS,
                "--seeks must be at most " + MAX_PHASE_OPS + " (a phase's keys are generated before it runs), got "
                        + seeks);
        require(keySize >= 8 && keySize <= 65536, "--key-size must be in [8, 65536], got " + keySize);
        require(valueSize >= 1 && valueSize <= (1 << 20), "--value-size must be in [1, 1048576], got " + valueSize);
        require(bitsPerKey > 0 && bitsPerKey <= 64, "--bits-per-key must be in (0, 64], got " + bitsPerKey);
        require(blockSize >= 256 && blockSize <= (1 << 24), "--block-size must be in [256, 16 MiB], got " + blockSize);
        require(cacheSize >= 0, "--cache-size must be >= 0, got " + cacheSize);
        require(writeBufferSize >= 64 * 1024, "--write-buffer-size must be at least 64 KiB, got " + writeBufferSize);
        require(
                List.of("none", "lz4", "zstd").contains(compression),
                "--compression: expected none, lz4 or zstd, got '" + compression + "'");
        require(
                valueCompressibility > 0 && valueCompressibility <= 1,
                "--value-compressibility must be in (0, 1], got " + valueCompressibility);
        require(warmup >= 0, "--warmup must be >= 0, got " + warmup);
        require(repeat >= 1 && repeat <= 100, "--repeat must be in [1, 100], got " + repeat);
        require(
                phaseWarmup >= 0 && phaseWarmup <= MAX_PHASE_WARMUP,
                "--phase-warmup must be in [0, " + MAX_PHASE_WARMUP + "], got " + phaseWarmup);
        require(threads >= 1 && threads <= 256, "--threads must be in [1, 256], got " + threads);
        require(!engines.isEmpty(), "--engines must name at least one engine");
        for (String e : engines) {
            require(
                    KNOWN_ENGINES.contains(e),
                    "--engines: unknown engine '" + e + "', expected one of " + KNOWN_ENGINES);
        }
        require(!filterModes.isEmpty(), "--filters must be on, off or on,off");
        require(!workloads.isEmpty(), "--workloads must name at least one workload");
        for (Workload w : workloads) {
            // a phase named twice in one run could not be told apart in the report (nor paired with its run)
            require(
                    workloads.indexOf(w) == workloads.lastIndexOf(w),
                    "--workloads names " + w + " twice ('records' names the whole records family); --repeat runs the "
                            + "sequence again");
        }
        require(
                !workloads.contains(Workload.SEEKPREFIX) || num >= 2 * PrefixLayout.KEYS_PER_PREFIX,
                "seekprefix needs --num >= " + 2 * PrefixLayout.KEYS_PER_PREFIX + ", got " + num);
        require(rateLimit >= 0, "--rate-limit must be >= 0 (0 = unlimited), got " + rateLimit);
        require(distribution != null, "--distribution must be uniform, zipfian or latest");
        require(
                !pairedReads || engines.size() >= 2,
                "--paired-reads interleaves the reads of two engines; --engines names only " + engines);
        require(!pairedReads || !noSettle && !reopen, "--paired-reads cannot be combined with --no-settle or --reopen");
        // on their own defaults neither engine reads with O_DIRECT (each reads its own way)
        require(
                !direct || !ownDefaults,
                "--direct cannot be combined with --defaults (each engine then reads its tables its own way: bloomkv "
                        + "mapped, RocksDB pread)");
        return this;
    }

    /**
     * This configuration as a {@code --reopen} child process runs it: no JIT warm-up and no phase warm-up (a fresh
     * process on an existing database is cold), no progress bar, and not {@code reopen} (the child is the fresh process).
     */
    public BenchConfig coldChild() {
        return new BenchConfig(
                num,
                reads,
                seeks,
                keySize,
                valueSize,
                bitsPerKey,
                blockSize,
                cacheSize,
                writeBufferSize,
                compression,
                sync,
                threads,
                engines,
                filterModes,
                filterKind,
                workloads,
                seed,
                reportDir,
                workDir,
                cold,
                compact,
                0,
                0,
                repeat,
                false,
                false,
                distribution,
                valueCompressibility,
                direct,
                mmapReads,
                ownDefaults,
                pairedReads,
                rateLimit,
                noSettle,
                false,
                filterBudget);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}

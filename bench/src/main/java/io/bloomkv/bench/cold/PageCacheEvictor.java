package io.bloomkv.bench.cold;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * Drops chosen files from the OS page cache without root: GNU dd's {@code iflag=nocache count=0}
 * calls {@code posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)} on the whole file. Residency is
 * measured before and after with util-linux {@code fincore} when it is installed.
 *
 * <p>Limits (also written into the report): DONTNEED drops only clean pages (the engines sync a
 * table when they write it, so tables are clean); it is advice, which Linux honours for unmapped
 * clean pages but not for pages another process keeps mapped or locked; it is not O_DIRECT, so
 * after the first read of a block the block is cached again for the rest of the phase; the kernel's
 * readahead may pull in neighbouring pages; and on a virtual machine the host may still cache the
 * disk image, so a "disk" read can be served from host memory.
 */
public final class PageCacheEvictor {
    private static final long TIMEOUT_SECONDS = 60;
    private static final int PROBE_BYTES = 1 << 20;

    private final boolean ddWorks;
    private final boolean fincoreWorks;
    private final String unavailableReason;

    private PageCacheEvictor(boolean ddWorks, boolean fincoreWorks, String unavailableReason) {
        this.ddWorks = ddWorks;
        this.fincoreWorks = fincoreWorks;
        this.unavailableReason = unavailableReason;
    }

    /** Probes the tools on a scratch file in {@code scratchDir}: eviction must measurably work. */
    public static PageCacheEvictor detect(Path scratchDir) {
        Path probe = null;
        try {
            Files.createDirectories(scratchDir);
            probe = Files.createTempFile(scratchDir, "evict-probe", ".bin");
            try (FileChannel ch = FileChannel.open(probe, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[PROBE_BYTES]));
                ch.force(true); // DONTNEED drops clean pages only
            }
            Files.readAllBytes(probe);
            if (!runDd(probe)) {
                return new PageCacheEvictor(false, false, "GNU dd with iflag=nocache is not available or failed");
            }
            OptionalLong after = residentBytes(probe);
            if (after.isPresent() && after.getAsLong() > PROBE_BYTES / 2) {
                return new PageCacheEvictor(
                        false,
                        true,
                        "posix_fadvise(DONTNEED) left " + after.getAsLong() + " of " + PROBE_BYTES
                                + " bytes of a probe file resident");
            }
            return new PageCacheEvictor(true, after.isPresent(), null);
        } catch (IOException e) {
            return new PageCacheEvictor(false, false, "probe failed: " + e.getMessage());
        } finally {
            if (probe != null) {
                try {
                    Files.deleteIfExists(probe);
                } catch (IOException ignored) {
                    // a leftover probe file in the work directory is harmless
                }
            }
        }
    }

    public boolean available() {
        return ddWorks;
    }

    /** Null when available. */
    public String unavailableReason() {
        return unavailableReason;
    }

    public String method() {
        return "posix_fadvise(POSIX_FADV_DONTNEED) per table file via `dd iflag=nocache count=0`"
                + (fincoreWorks ? ", residency checked with fincore" : ", residency not checked (no fincore)");
    }

    /** Evicts every file; returns what happened (resident bytes before/after when measurable). */
    public Eviction evict(List<Path> files) throws IOException {
        if (!ddWorks) {
            return new Eviction(files.size(), 0, -1, -1, "not evicted: " + unavailableReason);
        }
        long before = 0;
        long after = 0;
        boolean measured = fincoreWorks;
        int done = 0;
        List<String> failures = new ArrayList<>();
        for (Path f : files) {
            if (!Files.exists(f)) {
                continue;
            }
            if (measured) {
                OptionalLong r = residentBytes(f);
                measured = r.isPresent();
                before += r.orElse(0);
            }
            if (runDd(f)) {
                done++;
            } else {
                failures.add(f.getFileName().toString());
            }
            if (measured) {
                OptionalLong r = residentBytes(f);
                measured = r.isPresent();
                after += r.orElse(0);
            }
        }
        String note = failures.isEmpty() ? "ok" : "dd failed on " + failures;
        return new Eviction(files.size(), done, measured ? before : -1, measured ? after : -1, note);
    }

    /**
     * @param files          table files asked for
     * @param evicted        files dd handled
     * @param residentBefore page-cached bytes of those files before (-1: not measured)
     * @param residentAfter  page-cached bytes after (-1: not measured)
     * @param note           "ok" or what went wrong
     */
    public record Eviction(int files, int evicted, long residentBefore, long residentAfter, String note) {
        public String summary() {
            String r = residentBefore < 0
                    ? ""
                    : ", resident " + residentBefore / 1024 + " KiB -> " + residentAfter / 1024 + " KiB";
            return evicted + "/" + files + " files evicted" + r + ("ok".equals(note) ? "" : " (" + note + ")");
        }
    }

    private static boolean runDd(Path file) throws IOException {
        Result r = run(List.of("dd", "if=" + file, "iflag=nocache", "count=0", "status=none"));
        return r != null && r.exit == 0;
    }

    /** Page-cached bytes of a file per fincore, or empty when fincore is missing or fails. */
    public static OptionalLong residentBytes(Path file) throws IOException {
        Result r = run(List.of("fincore", "--bytes", "--noheadings", "--output", "RES", file.toString()));
        if (r == null || r.exit != 0) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(r.out.trim()));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    private record Result(int exit, String out) {}

    private static Result run(List<String> cmd) throws IOException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            return null; // tool not installed
        }
        try (InputStream in = p.getInputStream()) {
            String out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, out);
            }
            return new Result(p.exitValue(), out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted while running " + cmd.get(0), e);
        }
    }
}

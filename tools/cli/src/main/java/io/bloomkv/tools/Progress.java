package io.bloomkv.tools;

import java.io.BufferedReader;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The progress of one long command ({@code put --input}, {@code sst write}, {@code backup create}, {@code stress},
 * {@code crashtest}) on stderr, never on stdout, whose answer scripts parse. Items (input lines, files, operations) and
 * bytes are counted as the command goes; a total, when known (the input file's size, the bytes to back up, the keys
 * stress checks at open and crashtest after each kill, the operations stress runs), adds a percentage. A command
 * that counts no bytes shows none ({@link #itemsOnly}); one with more to say adds it to every line ({@link #detail}).
 *
 * <p>On a terminal ({@link #stderrIsTerminal}) one line is redrawn in place ({@code \r}) at most four times a second,
 * from a quarter of a second in, and erased when the command ends, so the error line of a failure, or the answer on
 * stdout, starts on a clean line. Otherwise (a file, a pipe, a CI log) a plain line every {@link #LINE_INTERVAL_NANOS},
 * and a last {@code done} line with the totals when the run printed any: a short run prints nothing.
 * {@link #advance} reads the clock only every {@link #CHECK_EVERY_CALLS} calls or {@link #CHECK_EVERY_BYTES} bytes,
 * so counting a line costs an addition and a comparison. Not thread-safe: the command's thread reports.
 */
final class Progress implements AutoCloseable {
    /** Between two redraws of the line on a terminal (and before the first). */
    static final long TERMINAL_INTERVAL_NANOS = 250_000_000L;

    /** Between two lines when stderr is not a terminal (and before the first). */
    static final long LINE_INTERVAL_NANOS = 5_000_000_000L;

    static final int CHECK_EVERY_CALLS = 256;
    static final long CHECK_EVERY_BYTES = 1 << 20;

    private final PrintWriter err;
    private final String task;
    private final String unit;
    private final boolean enabled;
    private final boolean terminal;
    private final LongSupplier clock;
    private final long interval;

    private long items;
    private long bytes;
    private long totalItems = -1;
    private long totalBytes = -1;
    private boolean showBytes = true;
    private Supplier<String> detail;

    private int callsUntilCheck = CHECK_EVERY_CALLS;
    private long checkAtBytes = CHECK_EVERY_BYTES;
    private long next;
    /** Terminal: the width of the line on screen (0: none). */
    private int drawn;
    /** Not a terminal: a line was printed, so the run ends with a done line. */
    private boolean printed;

    private boolean closed;

    /**
     * A display of {@code task} (the line's prefix, e.g. {@code put}) counting {@code unit} (e.g. {@code lines}) on
     * {@code err}; nothing is shown unless {@code enabled}.
     */
    Progress(PrintWriter err, String task, String unit, boolean enabled, boolean terminal, LongSupplier clock) {
        this.err = err;
        this.task = task;
        this.unit = unit;
        this.enabled = enabled;
        this.terminal = terminal;
        this.clock = clock;
        this.interval = terminal ? TERMINAL_INTERVAL_NANOS : LINE_INTERVAL_NANOS;
        this.next = enabled ? clock.getAsLong() + interval : Long.MAX_VALUE;
    }

    /** Shows no bytes (a command that counts only items); a total of items then adds the percentage. Returns this. */
    Progress itemsOnly() {
        this.showBytes = false;
        return this;
    }

    /**
     * Adds {@code detail}'s text to every line, after the counts: what they do not carry (stress's acknowledged writes
     * and wrong answers). Asked for only when a line is shown, on the reporting thread. Returns this.
     */
    Progress detail(Supplier<String> detail) {
        this.detail = detail;
        return this;
    }

    /** The totals, when known; -1 for one that is not. */
    void total(long items, long bytes) {
        this.totalItems = items;
        this.totalBytes = bytes;
    }

    /** {@code items} more items and {@code bytes} more bytes done. */
    void advance(long items, long bytes) {
        this.items += items;
        this.bytes += bytes;
        if (--callsUntilCheck <= 0 || this.bytes >= checkAtBytes) {
            check();
        }
    }

    /**
     * The counts done so far, from a callback that reports them coarsely (a backup: after every file and every MiB
     * read), so the clock is read on every call.
     */
    void set(long items, long bytes) {
        this.items = items;
        this.bytes = bytes;
        check();
    }

    private void check() {
        callsUntilCheck = CHECK_EVERY_CALLS;
        checkAtBytes = bytes + CHECK_EVERY_BYTES;
        if (!enabled) {
            return;
        }
        long now = clock.getAsLong();
        if (now - next < 0) {
            return;
        }
        next = now + interval;
        String text = task + ": " + counts();
        if (terminal) {
            StringBuilder line = new StringBuilder("\r").append(text);
            for (int i = text.length(); i < drawn; i++) {
                line.append(' '); // a shorter line covers the longer one before it
            }
            err.print(line);
            drawn = Math.max(drawn, text.length());
        } else {
            err.println(text);
            printed = true;
        }
        err.flush();
    }

    /**
     * {@code 1,024 lines, 20.0 KiB of 58.6 KiB (34%)}: the counts, and the totals known; items only, {@code 2,500 of
     * 10,000 ops (25%)}; then the {@link #detail}.
     */
    String counts() {
        StringBuilder s = new StringBuilder(Fmt.count(items));
        if (totalItems >= 0) {
            s.append(" of ").append(Fmt.count(totalItems));
        }
        s.append(' ').append(unit);
        if (showBytes) {
            s.append(", ").append(Fmt.bytes(bytes));
            if (totalBytes >= 0) {
                s.append(" of ").append(Fmt.bytes(totalBytes));
                s.append(" (").append(percent(bytes, totalBytes)).append("%)");
            }
        } else if (totalItems >= 0) {
            s.append(" (").append(percent(items, totalItems)).append("%)");
        }
        if (detail != null) {
            s.append(", ").append(detail.get());
        }
        return s.toString();
    }

    /** {@code done} of {@code total} in whole percent, at most 100 (an empty total is done). */
    private static long percent(long done, long total) {
        return total == 0 ? 100 : Math.min(100, done * 100 / total);
    }

    /**
     * The command succeeded: the terminal's line is erased (the command's answer follows on stdout); elsewhere a run
     * that printed lines ends with {@code TASK: done: COUNTS}.
     */
    void done() {
        if (closed) {
            return;
        }
        if (printed) {
            err.println(task + ": done: " + counts());
            err.flush();
        }
        close();
    }

    /**
     * Ends the display without a done line (after a failure, whose error line then starts on a clean line): the
     * terminal's line is erased. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (drawn > 0) {
            err.print("\r" + " ".repeat(drawn) + "\r");
            err.flush();
            drawn = 0;
        }
    }

    /** The size of {@code input} when it is a regular file (a pipe or stdin has none): the total of a read. */
    private static long sizeOf(String input) {
        if (input.equals("-")) {
            return -1;
        }
        try {
            Path p = Path.of(input);
            return Files.isRegularFile(p) ? Files.size(p) : -1;
        } catch (IOException | RuntimeException e) {
            return -1; // opening it reports the problem
        }
    }

    /**
     * The UTF-8 lines of {@code input} ("-": stdin), every byte read counted by this display against the file's size
     * (the total; stdin has none); a line that is not valid UTF-8 is refused with its number ({@link Utf8LineReader}).
     */
    BufferedReader lines(String input) throws IOException {
        InputStream raw = input.equals("-") ? System.in : Files.newInputStream(Path.of(input));
        total(-1, sizeOf(input));
        return new Utf8LineReader(counting(raw), input);
    }

    /** {@code in}, reporting every byte read from it to this display. */
    InputStream counting(InputStream in) {
        return new FilterInputStream(in) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) {
                    advance(0, 1);
                }
                return b;
            }

            @Override
            public int read(byte[] buf, int off, int len) throws IOException {
                int n = super.read(buf, off, len);
                if (n > 0) {
                    advance(0, n);
                }
                return n;
            }

            @Override
            public long skip(long n) throws IOException {
                long skipped = super.skip(n);
                advance(0, skipped);
                return skipped;
            }
        };
    }

    /**
     * Whether this process's stderr is a terminal. Java 17 cannot ask of stderr alone: on Linux the link
     * {@code /proc/self/fd/2} names a terminal device ({@code /dev/pts/N}, {@code /dev/ttyN}) or else a pipe or file;
     * where there is no such link, {@link System#console()} (stdin and stdout are a terminal) stands for it.
     */
    static boolean stderrIsTerminal() {
        Path fd2 = Path.of("/proc/self/fd/2");
        try {
            if (Files.isSymbolicLink(fd2)) {
                String target = Files.readSymbolicLink(fd2).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            }
        } catch (IOException | RuntimeException e) {
            // no /proc: fall back on the console
        }
        return System.console() != null;
    }
}

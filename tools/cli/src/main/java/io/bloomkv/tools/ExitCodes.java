package io.bloomkv.tools;

/**
 * Exit codes of the {@code bloomkv} command. Scripts may rely on them; they are part of the
 * command's documented interface (docs/cli.md).
 */
public final class ExitCodes {
    /** The command did what was asked. */
    public static final int OK = 0;
    /** A lookup found nothing: {@code get} of an absent key. */
    public static final int NOT_FOUND = 1;
    /** Bad arguments: unknown option, missing parameter, malformed hex, out-of-range number. */
    public static final int USAGE = 2;
    /** An I/O problem: a missing file or directory, a path that is not a database, a failed read or write. */
    public static final int IO_ERROR = 3;
    /** Stored bytes failed a check: a bad checksum, magic number or format; {@code sst verify} found bad blocks. */
    public static final int CORRUPTION = 4;
    /** Another process (or this one) holds the database's LOCK file, or a backup directory's (a BackupEngine's). */
    public static final int LOCKED = 5;
    /** Anything else: a bug in bloomkv. Run again with --verbose for the stack trace. */
    public static final int INTERNAL = 70;

    private ExitCodes() {}
}

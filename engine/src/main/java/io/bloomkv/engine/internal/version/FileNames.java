package io.bloomkv.engine.internal.version;

import java.nio.file.Path;

/**
 * Names of the files in a database directory (engine/FORMAT.md, "Database directory"):
 * {@code NNNNNN.log} (WAL), {@code NNNNNN.sst} (table), {@code MANIFEST-NNNNNN}, {@code CURRENT},
 * {@code LOCK}, {@code NNNNNN.dbtmp} (a CURRENT being written). Numbers are decimal, zero-padded to
 * at least 6 digits, drawn from one counter.
 */
public final class FileNames {
    public static final String CURRENT = "CURRENT";
    public static final String LOCK = "LOCK";
    public static final String MANIFEST_PREFIX = "MANIFEST-";

    /** The kinds of file a database directory holds. */
    public enum Kind {
        LOG,
        TABLE,
        MANIFEST,
        CURRENT,
        LOCK,
        TEMP
    }

    /** A parsed file name. {@code number} is -1 for CURRENT and LOCK. */
    public record Parsed(Kind kind, long number) {}

    private FileNames() {}

    public static Path logFile(Path dir, long number) {
        return dir.resolve(String.format("%06d.log", number));
    }

    public static Path tableFile(Path dir, long number) {
        return dir.resolve(String.format("%06d.sst", number));
    }

    public static Path manifestFile(Path dir, long number) {
        return dir.resolve(String.format("%s%06d", MANIFEST_PREFIX, number));
    }

    public static Path tempFile(Path dir, long number) {
        return dir.resolve(String.format("%06d.dbtmp", number));
    }

    public static Path currentFile(Path dir) {
        return dir.resolve(CURRENT);
    }

    public static Path lockFile(Path dir) {
        return dir.resolve(LOCK);
    }

    /** Parses a file name (no directory part); null when it is not one of the database's names. */
    public static Parsed parse(String name) {
        if (name.equals(CURRENT)) {
            return new Parsed(Kind.CURRENT, -1);
        }
        if (name.equals(LOCK)) {
            return new Parsed(Kind.LOCK, -1);
        }
        if (name.startsWith(MANIFEST_PREFIX)) {
            long n = parseNumber(name.substring(MANIFEST_PREFIX.length()));
            return n < 0 ? null : new Parsed(Kind.MANIFEST, n);
        }
        int dot = name.indexOf('.');
        if (dot <= 0) {
            return null;
        }
        long n = parseNumber(name.substring(0, dot));
        if (n < 0) {
            return null;
        }
        switch (name.substring(dot + 1)) {
            case "log":
                return new Parsed(Kind.LOG, n);
            case "sst":
                return new Parsed(Kind.TABLE, n);
            case "dbtmp":
                return new Parsed(Kind.TEMP, n);
            default:
                return null;
        }
    }

    private static long parseNumber(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return -1;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(s);
    }
}

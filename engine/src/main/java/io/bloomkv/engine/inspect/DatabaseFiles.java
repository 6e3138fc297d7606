package io.bloomkv.engine.inspect;

import io.bloomkv.engine.internal.version.FileNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The files of a database directory by kind (engine/FORMAT.md, "Files"), read from their names only. */
public final class DatabaseFiles {
    private DatabaseFiles() {}

    /** What a database file is. */
    public enum Kind {
        TABLE,
        WAL,
        MANIFEST,
        CURRENT,
        LOCK,
        TEMP
    }

    /** One file of a database directory; {@code number} is -1 for CURRENT and LOCK. */
    public record DbFile(Path path, Kind kind, long number) {}

    /** The database files of {@code dir}, sorted by name; files with other names are left out. */
    public static List<DbFile> list(Path dir) throws IOException {
        List<DbFile> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.sorted().forEach(p -> {
                FileNames.Parsed parsed = FileNames.parse(p.getFileName().toString());
                if (parsed != null) {
                    out.add(new DbFile(p, kindOf(parsed.kind()), parsed.number()));
                }
            });
        }
        return out;
    }

    /**
     * What a file of this name would be in a database directory, from the name alone (no file system access); null for
     * a name no database file has.
     */
    public static Kind kindOf(Path file) {
        Path name = file.getFileName();
        FileNames.Parsed parsed = name == null ? null : FileNames.parse(name.toString());
        return parsed == null ? null : kindOf(parsed.kind());
    }

    /** The path of table {@code number} in {@code dir}. */
    public static Path tableFile(Path dir, long number) {
        return FileNames.tableFile(dir, number);
    }

    private static Kind kindOf(FileNames.Kind k) {
        return switch (k) {
            case TABLE -> Kind.TABLE;
            case LOG -> Kind.WAL;
            case MANIFEST -> Kind.MANIFEST;
            case CURRENT -> Kind.CURRENT;
            case LOCK -> Kind.LOCK;
            case TEMP -> Kind.TEMP;
        };
    }
}

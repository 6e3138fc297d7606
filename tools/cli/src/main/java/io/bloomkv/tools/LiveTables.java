package io.bloomkv.tools;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.version.FileMetaData;
import io.bloomkv.engine.version.FileNames;
import io.bloomkv.engine.version.VersionEdit;
import io.bloomkv.engine.wal.LogReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The live tables of a database, read from the MANIFEST that CURRENT names, the way
 * {@code VersionSet.recover} reads it: every edit's deleted files are removed and its new files
 * added. Read-only; the database should be open (holding its LOCK) so no
 * compaction rewrites the MANIFEST meanwhile.
 */
final class LiveTables {
    /** One live table: its level and its MANIFEST entry. */
    record LiveTable(int level, FileMetaData file) {}

    private LiveTables() {}

    /** Level 0 newest first, then each deeper level by smallest key. */
    static List<LiveTable> read(Path dir) throws IOException {
        Path currentFile = FileNames.currentFile(dir);
        String current = Files.readString(currentFile, StandardCharsets.UTF_8).strip();
        FileNames.Parsed parsed = FileNames.parse(current);
        if (parsed == null || parsed.kind() != FileNames.Kind.MANIFEST) {
            throw new CorruptionException("CURRENT names no MANIFEST: '" + current + "'", currentFile, 0);
        }
        Path manifest = FileNames.manifestFile(dir, parsed.number());
        List<LiveTable> live = new ArrayList<>();
        try (ReadableFile f = FileSystem.disk().newReadableFile(manifest); LogReader reader = new LogReader(f)) {
            for (byte[] record = reader.readRecord(); record != null; record = reader.readRecord()) {
                VersionEdit edit;
                try {
                    edit = VersionEdit.decode(record);
                } catch (RuntimeException e) {
                    throw new CorruptionException("MANIFEST record does not parse: " + e.getMessage(), manifest, -1, e);
                }
                for (VersionEdit.DeletedFile d : edit.deletedFiles()) {
                    live.removeIf(t -> t.level() == d.level() && t.file().number() == d.number());
                }
                for (VersionEdit.LevelFile added : edit.newFiles()) {
                    live.add(new LiveTable(added.level(), added.file()));
                }
            }
        }
        live.sort(Comparator.comparingInt(LiveTable::level)
                .thenComparing((a, b) -> a.level() == 0
                        ? Long.compare(b.file().number(), a.file().number())
                        : Arrays.compareUnsigned(a.file().smallestUserKey(), b.file().smallestUserKey())));
        return live;
    }
}

package io.bloomkv.engine.inspect;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.internal.record.LogReader;
import java.io.IOException;
import java.nio.file.Path;

/** Reads a WAL or MANIFEST file (engine/FORMAT.md, "Log files") record by record, checking every checksum. */
public final class LogDump {
    private LogDump() {}

    /**
     * What a log file holds.
     *
     * @param tailDropped a torn tail (a crash in the middle of an append) follows the last good
     *     record; the next open cuts it, so it is not damage
     */
    public record Summary(long records, long fileSize, boolean tailDropped, long droppedBytes, long lastGoodOffset) {}

    /**
     * Reads every record of {@code file}.
     *
     * @throws CorruptionException naming the offset when a record is damaged before valid ones
     * @throws IOException when it cannot be read
     */
    public static Summary read(Path file) throws IOException {
        long records = 0;
        try (ReadableFile f = FileSystem.disk().newReadableFile(file);
                LogReader reader = new LogReader(f)) {
            while (reader.readRecord() != null) {
                records++;
            }
            return new Summary(
                    records, reader.fileSize(), reader.tailDropped(), reader.droppedBytes(), reader.lastGoodOffset());
        }
    }
}

package io.bloomkv.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A state directory on {@code /dev/shm} when the machine has one (else under {@code fallback}): segmented
 * stores open and drop a database per segment, each with a few fsyncs, which a loaded disk makes the whole
 * cost of a test. What is tested is the same on either.
 */
final class ShmDir implements AutoCloseable {
    final Path path;

    ShmDir(Path fallback) {
        try {
            Path shm = Path.of("/dev/shm");
            path = Files.isDirectory(shm) && Files.isWritable(shm)
                    ? Files.createTempDirectory(shm, "bloomkv-kstreams-")
                    : Files.createTempDirectory(fallback, "state-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try (Stream<Path> all = Files.walk(path)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.bloomkv.bench.engine;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.ForwardingFileSystem;
import io.bloomkv.engine.fs.WritableFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.LongAdder;

/**
 * Delegates to another {@link FileSystem} and counts the bytes appended to WAL files ({@code *.log})
 * and to table files ({@code *.sst}), so the harness can measure bloomkv's write volume itself.
 */
final class CountingFileSystem extends ForwardingFileSystem {
    final LongAdder walBytes = new LongAdder();
    final LongAdder tableBytes = new LongAdder();

    CountingFileSystem(FileSystem inner) {
        super(inner);
    }

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        return counted(p, delegate().newWritableFile(p));
    }

    /** Direct writes (TableFileWriter's) are counted as well. */
    @Override
    public WritableFile newDirectWritableFile(Path p) throws IOException {
        return counted(p, delegateDirectWritableFile(p));
    }

    /** As the inner file system's: the engine's write-ahead logs are written through mappings where it can map. */
    @Override
    public boolean supportsMappedWrites() {
        return delegate().supportsMappedWrites();
    }

    @Override
    public WritableFile newMappedWritableFile(Path p) throws IOException {
        return counted(p, delegate().newMappedWritableFile(p));
    }

    private WritableFile counted(Path p, WritableFile f) {
        String name = p.getFileName().toString();
        LongAdder counter = name.endsWith(".log") ? walBytes : name.endsWith(".sst") ? tableBytes : null;
        return counter == null
                ? f
                : new ForwardingWritableFile(f) {
                    @Override
                    public void append(byte[] b, int off, int len) throws IOException {
                        super.append(b, off, len);
                        counter.add(len);
                    }
                };
    }
}

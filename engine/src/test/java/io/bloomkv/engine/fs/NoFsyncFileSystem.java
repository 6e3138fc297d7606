package io.bloomkv.engine.fs;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The real disk without fsync: {@link WritableFile#sync()} only flushes and {@link #syncDirectory}
 * does nothing. For tests under a {@link FaultInjectingFileSystem}, whose {@link
 * FaultInjectingFileSystem#crash()} decides what survives from its own record of syncs, so the
 * device's durability is irrelevant and thousands of runs stay fast.
 */
public final class NoFsyncFileSystem extends ForwardingFileSystem {
    public NoFsyncFileSystem() {
        super(FileSystem.disk());
    }

    @Override
    public WritableFile newWritableFile(Path p) throws IOException {
        return withoutSync(delegate().newWritableFile(p));
    }

    /** The disk's direct writes (TableFileWriter's), without fsync too. */
    @Override
    public WritableFile newDirectWritableFile(Path p) throws IOException {
        return withoutSync(delegateDirectWritableFile(p));
    }

    private static WritableFile withoutSync(WritableFile f) {
        return new ForwardingWritableFile(f) {
            @Override
            public void sync() throws IOException {
                flush();
            }
        };
    }

    /** As the disk's: write-ahead logs are written through mappings where the disk's are (Linux). */
    @Override
    public boolean supportsMappedWrites() {
        return delegate().supportsMappedWrites();
    }

    @Override
    public WritableFile newMappedWritableFile(Path p) throws IOException {
        return new ForwardingWritableFile(delegate().newMappedWritableFile(p)) {
            @Override
            public void sync() throws IOException {
                flush();
            }
        };
    }

    @Override
    public void syncDirectory(Path dir) {
        // durability is simulated by the FaultInjectingFileSystem above
    }
}

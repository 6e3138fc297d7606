package io.bloomkv.engine.fs;

/** What tests outside this package may ask of {@link DirectReadableFile}'s pooled read buffers. */
public final class DirectReadBuffers {
    private DirectReadBuffers() {}

    /** Pooled read buffers allocated and not yet freed (idle or in use), in this JVM. */
    public static int live() {
        return DirectReadableFile.liveBuffers();
    }

    /** Direct files open in this JVM. */
    public static int openFiles() {
        return DirectReadableFile.openFiles();
    }
}

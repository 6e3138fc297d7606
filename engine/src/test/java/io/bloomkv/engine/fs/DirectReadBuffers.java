package io.bloomkv.engine.fs;

/** What tests outside this package may ask of {@link DirectReadableFile}'s per-thread read buffers. */
public final class DirectReadBuffers {
    private DirectReadBuffers() {}

    /** Thread read buffers allocated and not yet freed, in this JVM. */
    public static int live() {
        return DirectReadableFile.liveThreadBuffers();
    }

    /** Direct files open in this JVM. */
    public static int openFiles() {
        return DirectReadableFile.openFiles();
    }
}

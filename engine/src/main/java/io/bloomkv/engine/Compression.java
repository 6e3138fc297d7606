package io.bloomkv.engine;

/**
 * How the blocks of a table are compressed ({@link Options#compression}, {@link Options#bottommostCompression}).
 * Each stored block names its own compression in its trailer byte ({@link #code()}, engine/FORMAT.md,
 * "Block compression"); the codes are RocksDB's ({@code CompressionType}), never {@link #ordinal()}.
 */
public enum Compression {
    /** Blocks are stored as they are. */
    NONE(0),
    /** LZ4 block format (lz4-java, the fast compressor; decompression is the bounds-checked "safe" one). */
    LZ4(4),
    /** Zstandard (zstd-jni) at its default level 3. */
    ZSTD(7);

    private final int code;

    Compression(int code) {
        this.code = code;
    }

    /** The on-disk code of this compression (block trailer byte and the {@code bloomkv.compression} property). */
    public int code() {
        return code;
    }

    /**
     * The compression whose on-disk code is {@code code}.
     *
     * @throws IllegalArgumentException if no compression has that code
     */
    public static Compression fromCode(int code) {
        for (Compression c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown compression code " + code);
    }
}

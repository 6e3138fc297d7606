package io.bloomkv.engine.internal.table;

/** Constants of the table file format (engine/FORMAT.md, "Table files"). */
public final class TableFormat {
    /** The last 8 bytes of every table file: ASCII "bloomkv1" read as a u64le. */
    public static final long MAGIC = 0x31766b6d6f6f6c62L;
    /** Format version written in the footer; the only one this reader accepts. */
    public static final int FORMAT_VERSION = 1;
    /** Bytes of the footer at the end of the file. */
    public static final int FOOTER_SIZE = 64;
    /** Bytes following every block: compression type (u8) and masked CRC32C (u32le). */
    public static final int BLOCK_TRAILER_SIZE = 5;
    /** Compression type byte of a stored-as-is block ({@link io.bloomkv.engine.Compression#NONE}'s code). */
    public static final int NO_COMPRESSION = 0;
    /**
     * Largest uncompressed contents a compressed block may declare: a 4 MiB block (the largest block
     * size) that closes after one more entry of the largest key (64 KiB) and value (16 MiB), with room
     * for its varints and restart array. Decompression refuses larger lengths before allocating.
     */
    public static final int MAX_UNCOMPRESSED_BLOCK_SIZE = 24 << 20;
    /**
     * A block is stored compressed only when that saves at least 1/8 of its size (RocksDB's
     * {@code GoodCompressionRatio}): stored length {@code < len - len / 8}.
     */
    static final int MIN_SAVING_SHIFT = 3;
    /** Restart interval of index and properties blocks (every key is a restart point). */
    static final int META_RESTART_INTERVAL = 1;
    /** Filter kind code stored in the properties for "no filter" (bloom's codes start at 1). */
    static final int NO_FILTER_CODE = 0;

    private TableFormat() {}
}

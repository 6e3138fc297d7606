package io.bloomkv.engine.internal.table;

import com.github.luben.zstd.Zstd;
import io.bloomkv.bloom.JvmEnvironment;
import io.bloomkv.engine.Compression;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.internal.util.Coding;
import java.nio.file.Path;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Compresses and decompresses the contents of one block (engine/FORMAT.md, "Block compression"). A
 * compressed block's stored contents are {@code varint32 uncompressedLength} followed by the codec's
 * output for the uncompressed contents (RocksDB's format_version 2 layout for LZ4 and ZSTD).
 *
 * <p>Decompression never trusts the stored bytes: the uncompressed length must lie in
 * [0, {@link TableFormat#MAX_UNCOMPRESSED_BLOCK_SIZE}] before anything is allocated, the codec
 * must produce exactly that many bytes, and any codec failure is a {@link CorruptionException}
 * naming the file and the block's offset. Thread-safe (the codec objects are stateless).
 */
final class BlockCodec {
    /** The JNI codec where native code may load without a JDK notice, else the pure-Java one (the same format). */
    private static final LZ4Factory LZ4 =
            JvmEnvironment.nativeAccessEnabled() ? LZ4Factory.fastestInstance() : LZ4Factory.fastestJavaInstance();

    private static final LZ4Compressor LZ4_COMPRESSOR = LZ4.fastCompressor();
    /** The bounds-checked decompressor: malformed input is an exception, never a read or write out of range. */
    private static final LZ4SafeDecompressor LZ4_DECOMPRESSOR = LZ4.safeDecompressor();
    /** Zstandard level (the library's default, as RocksDB's kDefaultCompressionLevel). */
    static final int ZSTD_LEVEL = 3;

    private BlockCodec() {}

    /** Bytes {@link #compress} may write for {@code len} input bytes (varint header included). */
    static int maxStoredLength(Compression c, int len) {
        int body = switch (c) {
            case NONE -> len;
            case LZ4 -> LZ4_COMPRESSOR.maxCompressedLength(len);
            case ZSTD -> (int) Math.min(Integer.MAX_VALUE - 8, Zstd.compressBound(len));
        };
        return 5 + body;
    }

    /**
     * Writes the stored form of {@code src[0..len)} under {@code c} (not NONE) into {@code dst}, which
     * has at least {@link #maxStoredLength} bytes; returns the stored length.
     */
    static int compress(Compression c, byte[] src, int len, byte[] dst) {
        if (len > TableFormat.MAX_UNCOMPRESSED_BLOCK_SIZE) {
            throw new IllegalArgumentException(
                    "block of " + len + " bytes exceeds the limit " + TableFormat.MAX_UNCOMPRESSED_BLOCK_SIZE);
        }
        int h = Coding.putVarint32(dst, 0, len);
        switch (c) {
            case LZ4:
                return h + LZ4_COMPRESSOR.compress(src, 0, len, dst, h, dst.length - h);
            case ZSTD: {
                long n = Zstd.compressByteArray(dst, h, dst.length - h, src, 0, len, ZSTD_LEVEL);
                if (Zstd.isError(n)) {
                    throw new IllegalStateException("zstd compression failed: " + Zstd.getErrorName(n));
                }
                return h + (int) n;
            }
            default:
                throw new IllegalArgumentException("not a compressing codec: " + c);
        }
    }

    /**
     * Decompresses the stored contents {@code stored[0..storedLen)} of a block whose trailer names
     * {@code type}; returns exactly the uncompressed contents.
     *
     * @throws CorruptionException for an unknown type, a malformed or out-of-range length, or data
     *     the codec rejects or that does not decompress to exactly the stored length
     */
    static byte[] decompress(int type, byte[] stored, int storedLen, Path file, long offset, String kind) {
        int n = uncompressedLength(stored, storedLen, file, offset, kind);
        byte[] out = new byte[n];
        decompressInto(type, stored, storedLen, out, n, file, offset, kind);
        return out;
    }

    /**
     * The uncompressed length a compressed block's stored contents {@code stored[0..storedLen)} declare, checked to lie
     * in [0, {@link TableFormat#MAX_UNCOMPRESSED_BLOCK_SIZE}] (before anything of that size is allocated).
     *
     * @throws CorruptionException for a malformed or out-of-range length
     */
    static int uncompressedLength(byte[] stored, int storedLen, Path file, long offset, String kind) {
        Coding.Reader r = new Coding.Reader(stored, 0, storedLen);
        long declared = r.varint64();
        if (!r.ok || r.pos > 5) {
            throw new CorruptionException(kind + " block: malformed uncompressed length", file, offset);
        }
        if (declared < 0 || declared > TableFormat.MAX_UNCOMPRESSED_BLOCK_SIZE) {
            throw new CorruptionException(
                    kind + " block: uncompressed length " + declared + " outside [0, "
                            + TableFormat.MAX_UNCOMPRESSED_BLOCK_SIZE + "]",
                    file,
                    offset);
        }
        return (int) declared;
    }

    /**
     * Decompresses the stored contents {@code stored[0..storedLen)} of a block whose trailer names {@code type} into
     * {@code out[0..n)}, where {@code n} is {@link #uncompressedLength} of the same contents (the caller's buffer may
     * be longer; bytes past {@code n} are left as they were).
     *
     * @throws CorruptionException for an unknown type, or data the codec rejects or that does not decompress to
     *     exactly {@code n} bytes
     */
    static void decompressInto(
            int type, byte[] stored, int storedLen, byte[] out, int n, Path file, long offset, String kind) {
        Coding.Reader r = new Coding.Reader(stored, 0, storedLen);
        r.varint64(); // the length uncompressedLength checked
        int at = r.pos;
        int srcLen = storedLen - at;
        long got;
        try {
            if (type == Compression.LZ4.code()) {
                got = LZ4_DECOMPRESSOR.decompress(stored, at, srcLen, out, 0, n);
            } else if (type == Compression.ZSTD.code()) {
                got = Zstd.decompressByteArray(out, 0, n, stored, at, srcLen);
                if (Zstd.isError(got)) {
                    throw new CorruptionException(kind + " block: zstd: " + Zstd.getErrorName(got), file, offset);
                }
            } else {
                throw new CorruptionException(kind + " block has unknown compression type " + type, file, offset);
            }
        } catch (CorruptionException e) {
            throw e;
        } catch (RuntimeException e) { // LZ4Exception, ZstdException: the codec rejected the data
            throw new CorruptionException(kind + " block does not decompress: " + e.getMessage(), file, offset, e);
        }
        if (got != n) {
            throw new CorruptionException(
                    kind + " block decompressed to " + got + " bytes, its header says " + n, file, offset);
        }
    }
}

package io.bloomkv.engine.internal.record;

import static io.bloomkv.engine.internal.record.LogFormat.BLOCK_SIZE;
import static io.bloomkv.engine.internal.record.LogFormat.FIRST;
import static io.bloomkv.engine.internal.record.LogFormat.FULL;
import static io.bloomkv.engine.internal.record.LogFormat.HEADER_SIZE;
import static io.bloomkv.engine.internal.record.LogFormat.LAST;
import static io.bloomkv.engine.internal.record.LogFormat.MIDDLE;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.fs.ReadableFile;
import io.bloomkv.engine.internal.util.Coding;
import io.bloomkv.engine.internal.util.Crc32c;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Reads the records written by a {@link LogWriter}, in order.
 *
 * <p>Recovery contract: a damaged <em>tail</em> (a record cut short, a fragment whose checksum
 * fails, zero padding) after which the file holds no valid fragment at all is the trace of a crash
 * during a write: it is cut at the end of the last complete record ({@link #tailDropped()},
 * {@link #lastGoodOffset()}) and reading ends normally. Damage followed by any valid fragment
 * means acknowledged data was lost: {@link CorruptionException} naming the file and the offset of
 * the damage. Never returns a record whose checksums did not match.
 *
 * <p>Not thread-safe. Closing the reader closes the file.
 */
public final class LogReader implements Closeable {
    private final ReadableFile file;
    /**
     * The file's size when opened, or less once a read finds it shorter: a live log is allocated ahead of its records
     * and cut to them when its writer closes it (MappedWritableFile), which can happen while a checkpoint or a dump
     * reads it. The records before the cut do not change, so the cut is read as the end of the file.
     */
    private long fileSize;

    private final byte[] block = new byte[BLOCK_SIZE];
    private final CRC32C crc = new CRC32C();
    /** File offset of {@link #block}[0]. */
    private long blockStart;

    private int blockLen;
    private int pos;
    private boolean eof;
    private boolean tailDropped;
    private long lastGoodOffset;
    private long lastRecordOffset = -1;

    // Result of the last readFragment() call.
    private int fragType;
    private int fragOff;
    private int fragLen;
    private long fragStart;
    private String badReason;

    public LogReader(ReadableFile file) throws IOException {
        this.file = Objects.requireNonNull(file, "file");
        this.fileSize = file.size();
        this.blockStart = 0;
        this.blockLen = 0;
        this.pos = 0;
        loadBlock(0);
    }

    /**
     * The next record, or null at the end of the log (including after a dropped torn tail).
     *
     * @throws CorruptionException when damage is followed by more valid data
     */
    public byte[] readRecord() throws IOException {
        if (eof) {
            return null;
        }
        ByteArrayOutputStream assembling = null;
        long recordStart = -1;
        while (true) {
            int r = readFragment();
            if (r == EOF) {
                if (assembling != null) {
                    return dropTail(recordStart, "record cut short by the end of the file");
                }
                eof = true;
                return null;
            }
            if (r == BAD) {
                long damage = assembling != null ? recordStart : fragStart;
                return handleDamage(damage, fragStart + 1, badReason);
            }
            switch (fragType) {
                case FULL:
                    if (assembling != null) {
                        throw corruption("complete record inside a fragmented record", recordStart);
                    }
                    byte[] out = new byte[fragLen];
                    System.arraycopy(block, fragOff, out, 0, fragLen);
                    lastRecordOffset = fragStart;
                    lastGoodOffset = blockStart + pos;
                    return out;
                case FIRST:
                    if (assembling != null) {
                        throw corruption("new record inside a fragmented record", recordStart);
                    }
                    assembling = new ByteArrayOutputStream(Math.max(fragLen * 2, 64));
                    assembling.write(block, fragOff, fragLen);
                    recordStart = fragStart;
                    break;
                case MIDDLE:
                case LAST:
                    if (assembling == null) {
                        throw corruption("continuation fragment without a first fragment", fragStart);
                    }
                    assembling.write(block, fragOff, fragLen);
                    if (fragType == LAST) {
                        lastRecordOffset = recordStart;
                        lastGoodOffset = blockStart + pos;
                        return assembling.toByteArray();
                    }
                    break;
                default:
                    throw new AssertionError(fragType);
            }
        }
    }

    /** True when a torn tail was cut off. */
    public boolean tailDropped() {
        return tailDropped;
    }

    /** Offset just past the last complete record returned so far (where a torn tail starts). */
    public long lastGoodOffset() {
        return lastGoodOffset;
    }

    /** Bytes dropped as a torn tail (0 unless {@link #tailDropped()}). */
    public long droppedBytes() {
        return tailDropped ? fileSize - lastGoodOffset : 0;
    }

    /** File offset of the first fragment of the record last returned, or -1. */
    public long lastRecordOffset() {
        return lastRecordOffset;
    }

    public long fileSize() {
        return fileSize;
    }

    @Override
    public void close() throws IOException {
        file.close();
    }

    private static final int OK = 0;
    private static final int EOF = 1;
    private static final int BAD = 2;

    private int readFragment() throws IOException {
        while (true) {
            if (blockLen - pos < HEADER_SIZE) {
                if (blockLen == BLOCK_SIZE || pos == blockLen) {
                    // The zero-filled trailer of a full block, or the end of a block.
                    if (blockStart + blockLen >= fileSize) {
                        return EOF;
                    }
                    loadBlock(blockStart + blockLen);
                    continue;
                }
                fragStart = blockStart + pos;
                badReason = "fragment header cut short by the end of the file";
                return BAD;
            }
            fragStart = blockStart + pos;
            int masked = Coding.getFixed32(block, pos);
            int len = (block[pos + 4] & 0xff) | (block[pos + 5] & 0xff) << 8;
            int type = block[pos + 6] & 0xff;
            if (!LogFormat.isFragmentType(type)) {
                badReason =
                        type == LogFormat.ZERO_TYPE ? "zero-filled fragment header" : "unknown fragment type " + type;
                return BAD;
            }
            if (pos + HEADER_SIZE + len > blockLen) {
                badReason = "fragment of " + len + " bytes runs past the end of its block or the file";
                return BAD;
            }
            crc.reset();
            crc.update(type);
            crc.update(block, pos + HEADER_SIZE, len);
            if (Crc32c.mask((int) crc.getValue()) != masked) {
                badReason = "fragment checksum mismatch";
                return BAD;
            }
            fragType = type;
            fragOff = pos + HEADER_SIZE;
            fragLen = len;
            pos += HEADER_SIZE + len;
            return OK;
        }
    }

    /**
     * Damage at {@code damageOffset}: a torn tail if no valid fragment starts anywhere in
     * {@code [scanFrom, fileSize)}, otherwise corruption.
     */
    private byte[] handleDamage(long damageOffset, long scanFrom, String reason) throws IOException {
        long valid = findValidFragment(scanFrom);
        if (valid >= 0) {
            throw corruption(reason + "; a valid fragment follows at offset " + valid, damageOffset);
        }
        return dropTail(damageOffset, reason);
    }

    private byte[] dropTail(long damageOffset, String reason) {
        eof = true;
        tailDropped = true;
        return null;
    }

    /** Offset of the first fragment at or after {@code from} whose header and checksum are valid, or -1. */
    private long findValidFragment(long from) throws IOException {
        long start = (from / BLOCK_SIZE) * BLOCK_SIZE;
        byte[] buf = new byte[BLOCK_SIZE];
        CRC32C c = new CRC32C();
        for (long bs = start; bs < fileSize; bs += BLOCK_SIZE) {
            int len = read(bs, buf);
            int p0 = bs < from ? (int) (from - bs) : 0;
            for (int p = p0; p + HEADER_SIZE <= len; p++) {
                int type = buf[p + 6] & 0xff;
                if (!LogFormat.isFragmentType(type)) {
                    continue;
                }
                int fl = (buf[p + 4] & 0xff) | (buf[p + 5] & 0xff) << 8;
                if (p + HEADER_SIZE + fl > len) {
                    continue;
                }
                c.reset();
                c.update(type);
                c.update(buf, p + HEADER_SIZE, fl);
                if (Crc32c.mask((int) c.getValue()) == Coding.getFixed32(buf, p)) {
                    return bs + p;
                }
            }
        }
        return -1;
    }

    private void loadBlock(long start) throws IOException {
        blockStart = start;
        pos = 0;
        blockLen = read(start, block);
    }

    /**
     * Reads the block at {@code start} (up to {@link LogFormat#BLOCK_SIZE} bytes, fewer at the end of the file) into
     * {@code buf}; returns its length. When the file turns out shorter than {@link #fileSize} (cut while read), the
     * current size becomes the end and the block is read up to it.
     */
    private int read(long start, byte[] buf) throws IOException {
        int len = (int) Math.max(0, Math.min(BLOCK_SIZE, fileSize - start));
        if (len == 0) {
            return 0;
        }
        try {
            file.readFully(start, buf, 0, len);
            return len;
        } catch (EOFException e) {
            long now = file.size();
            if (now >= fileSize) {
                throw e;
            }
            fileSize = now;
            return read(start, buf);
        }
    }

    private CorruptionException corruption(String what, long offset) {
        eof = true;
        return new CorruptionException("corrupt write-ahead log: " + what, file.path(), offset);
    }
}

package io.bloomkv.bloom;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The compressed wire form of a filter (bloom/FORMAT.md, "Compressed form"): {@link Filter#writeCompressed} and
 * {@link Filters#readCompressed}.
 *
 * <p>The body is treated as one bit string of N = 8 · body length bits. When fewer than half its bits are set the
 * positions of the set bits are sent, else those of the clear bits, as Rice-coded gaps (Golomb–Rice is the optimal
 * prefix code for geometric gaps up to the power-of-two rounding of its parameter, so for a Bloom body, whose bits are
 * close to independent Bernoulli(p), the payload is within a few per cent of the entropy bound N·H(p)); the raw body
 * is sent instead when coding would not be smaller (a filter at the optimal k has p ≈ 1/2 and a RIBBON body is
 * random bits). Counterpart: Mitzenmacher, "Compressed Bloom Filters" (PODC 2001), which argues for sending a sparser,
 * larger filter compressed; Cassandra ships its filters raw.
 *
 * <p>The record embeds the filter's ordinary 64-byte header, whose CRC32C covers the uncompressed body, so a decoder
 * checks the reconstruction end to end, besides the record's own CRC32C over its bytes.
 */
final class CompressedFilterCodec {
    /** "BKVZ" in file order (bytes 42 4B 56 5A). */
    static final int MAGIC = 0x5A564B42;

    static final int VERSION = 1;
    static final int CODING_RAW = 0;
    static final int CODING_RICE_SET = 1;
    static final int CODING_RICE_CLEAR = 2;
    /** Largest Rice parameter a record may carry (a gap is below 2^43: the body has at most 2^42 bits). */
    static final int MAX_RICE = 48;

    static final int OFF_MAGIC = 0;
    static final int OFF_VERSION = 4;
    static final int OFF_CODING = 6;
    static final int OFF_RICE = 7;
    static final int OFF_FILTER_HEADER = 8;
    static final int OFF_COUNT = 72;
    static final int OFF_PAYLOAD_LENGTH = 80;
    static final int PREFIX_SIZE = 88;
    static final int CRC_SIZE = 4;

    private static final int CHUNK = 64 * 1024;

    private CompressedFilterCodec() {}

    static void write(OffHeapFilter f, OutputStream out) throws IOException {
        OffHeapRegion body = f.body;
        long words = body.length() / 8;
        long n = body.length() * 8;
        long set = 0;
        for (long w = 0; w < words; w++) {
            set += Long.bitCount(body.readLong(w << 3));
        }
        boolean codeClear = set * 2 > n;
        long count = codeClear ? n - set : set;
        // Candidate parameters around log2 of the mean gap; the exact coded size of each is counted in one pass.
        double meanGap = count == 0 ? 0 : (double) (n - count) / count;
        int r0 = meanGap < 2 ? 0 : 63 - Long.numberOfLeadingZeros((long) meanGap);
        int lo = Math.max(0, r0 - 2);
        int hi = Math.min(MAX_RICE, r0 + 2);
        long[] quotientBits = new long[hi - lo + 1];
        if (count > 0) {
            long prev = -1;
            for (long w = 0; w < words; w++) {
                long x = body.readLong(w << 3);
                if (codeClear) {
                    x = ~x;
                }
                while (x != 0) {
                    long pos = (w << 6) + Long.numberOfTrailingZeros(x);
                    x &= x - 1;
                    long gap = pos - prev - 1;
                    prev = pos;
                    for (int r = lo; r <= hi; r++) {
                        quotientBits[r - lo] += gap >>> r;
                    }
                }
            }
        }
        int rice = lo;
        long bestBits = Long.MAX_VALUE;
        for (int r = lo; r <= hi; r++) {
            long bits = quotientBits[r - lo] + count * (1 + r);
            if (bits < bestBits) {
                bestBits = bits;
                rice = r;
            }
        }
        long payloadBytes = (bestBits + 7) >>> 3;
        int coding = codeClear ? CODING_RICE_CLEAR : CODING_RICE_SET;
        if (payloadBytes >= body.length()) {
            coding = CODING_RAW;
            rice = 0;
            count = 0;
            payloadBytes = body.length();
        }
        ByteBuffer prefix = ByteBuffer.allocate(PREFIX_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        prefix.putInt(OFF_MAGIC, MAGIC);
        prefix.putShort(OFF_VERSION, (short) VERSION);
        prefix.put(OFF_CODING, (byte) coding);
        prefix.put(OFF_RICE, (byte) rice);
        prefix.put(OFF_FILTER_HEADER, f.serializedHeader());
        prefix.putLong(OFF_COUNT, count);
        prefix.putLong(OFF_PAYLOAD_LENGTH, payloadBytes);
        CRC32C crc = new CRC32C();
        crc.update(prefix.array());
        out.write(prefix.array());
        CrcOut sink = new CrcOut(out, crc);
        if (coding == CODING_RAW) {
            byte[] chunk = new byte[(int) Math.min(CHUNK, body.length())];
            for (long off = 0; off < body.length(); off += chunk.length) {
                int len = (int) Math.min(chunk.length, body.length() - off);
                body.read(off, chunk, 0, len);
                sink.write(chunk, len);
            }
        } else {
            BitWriter bw = new BitWriter(sink);
            long prev = -1;
            for (long w = 0; w < words; w++) {
                long x = body.readLong(w << 3);
                if (codeClear) {
                    x = ~x;
                }
                while (x != 0) {
                    long pos = (w << 6) + Long.numberOfTrailingZeros(x);
                    x &= x - 1;
                    long gap = pos - prev - 1;
                    prev = pos;
                    bw.writeOnes(gap >>> rice);
                    bw.writeBits(0, 1);
                    bw.writeBits(gap, rice);
                }
            }
            bw.finish();
            if (bw.bytesWritten != payloadBytes) {
                throw new IllegalStateException("coded " + bw.bytesWritten + " payload bytes, sized " + payloadBytes);
            }
        }
        sink.flush();
        byte[] tail = new byte[CRC_SIZE];
        ByteBuffer.wrap(tail).order(ByteOrder.LITTLE_ENDIAN).putInt(0, (int) crc.getValue());
        out.write(tail);
    }

    /**
     * Reads one compressed record from {@code in} (and not a byte beyond it). {@link FilterFormatException} for any
     * malformed record, including a body larger than {@code maxBodyBytes}; {@link EOFException} is reported as a
     * truncated record ({@link FilterFormatException}); other I/O errors propagate.
     */
    static Filter read(InputStream in, long maxBodyBytes) throws IOException {
        byte[] prefixBytes = new byte[PREFIX_SIZE];
        readFully(in, prefixBytes, 0, PREFIX_SIZE);
        ByteBuffer prefix = ByteBuffer.wrap(prefixBytes).order(ByteOrder.LITTLE_ENDIAN);
        int magic = prefix.getInt(OFF_MAGIC);
        if (magic != MAGIC) {
            throw new FilterFormatException(
                    String.format("bad compressed filter magic 0x%08x, expected 0x%08x (\"BKVZ\")", magic, MAGIC));
        }
        int version = Short.toUnsignedInt(prefix.getShort(OFF_VERSION));
        if (version != VERSION) {
            throw new FilterFormatException(
                    "unsupported compressed filter version " + version + ", this library reads " + VERSION);
        }
        int coding = Byte.toUnsignedInt(prefix.get(OFF_CODING));
        int rice = Byte.toUnsignedInt(prefix.get(OFF_RICE));
        if (coding > CODING_RICE_CLEAR) {
            throw new FilterFormatException("unknown compressed filter coding " + coding);
        }
        if (rice > MAX_RICE || (coding == CODING_RAW && rice != 0)) {
            throw new FilterFormatException("Rice parameter " + rice + " outside [0, " + MAX_RICE + "] (0 for RAW)");
        }
        ByteBuffer headerBuf = ByteBuffer.wrap(prefixBytes, OFF_FILTER_HEADER, FilterHeader.HEADER_SIZE)
                .slice()
                .order(ByteOrder.LITTLE_ENDIAN);
        long declaredBody = headerBuf.getLong(FilterHeader.OFF_BODY_LENGTH);
        long total = declaredBody >= 0 && declaredBody <= Long.MAX_VALUE - FilterHeader.HEADER_SIZE
                ? FilterHeader.HEADER_SIZE + declaredBody
                : -1;
        FilterHeader header = FilterHeader.parse(headerBuf, total);
        long bodyLength = header.bodyLength;
        if (bodyLength > maxBodyBytes) {
            throw new FilterFormatException(
                    "compressed filter's body of " + bodyLength + " bytes exceeds the limit of " + maxBodyBytes);
        }
        long count = prefix.getLong(OFF_COUNT);
        long payloadLength = prefix.getLong(OFF_PAYLOAD_LENGTH);
        long n = bodyLength * 8;
        if (coding == CODING_RAW) {
            if (count != 0 || payloadLength != bodyLength) {
                throw new FilterFormatException("RAW compressed filter: count " + count + " (must be 0), payload "
                        + payloadLength + " bytes (must be the body's " + bodyLength + ")");
            }
        } else {
            if (count < 0 || count > n / 2) {
                throw new FilterFormatException("coded position count " + count + " outside [0, " + (n / 2) + "]");
            }
            // Each position costs at least 1 + rice bits; a payload longer than the body is never written (RAW is).
            if (payloadLength < 0 || payloadLength >= bodyLength || payloadLength * 8 < count * (1 + rice)) {
                throw new FilterFormatException("payload length " + payloadLength + " impossible for " + count
                        + " positions of a " + bodyLength + "-byte body at Rice parameter " + rice);
            }
        }
        CRC32C crc = new CRC32C();
        crc.update(prefixBytes);
        CrcIn src = new CrcIn(in, crc, payloadLength);
        OffHeapRegion body = OffHeapRegion.allocate(bodyLength);
        try {
            if (coding == CODING_RAW) {
                byte[] chunk = new byte[(int) Math.min(CHUNK, bodyLength)];
                for (long off = 0; off < bodyLength; off += chunk.length) {
                    int len = (int) Math.min(chunk.length, bodyLength - off);
                    src.readFully(chunk, len);
                    body.write(off, chunk, 0, len);
                }
            } else {
                decodeGaps(new BitReader(src), body, n, count, rice, coding == CODING_RICE_CLEAR);
            }
            byte[] tail = new byte[CRC_SIZE];
            readFully(in, tail, 0, CRC_SIZE);
            int stored = ByteBuffer.wrap(tail).order(ByteOrder.LITTLE_ENDIAN).getInt(0);
            if (stored != (int) crc.getValue()) {
                throw new FilterFormatException(String.format(
                        "compressed filter CRC32C mismatch: stored 0x%08x, computed 0x%08x",
                        stored, (int) crc.getValue()));
            }
            // The embedded header's CRC covers the uncompressed body: the reconstruction is checked end to end.
            CRC32C inner = new CRC32C();
            inner.update(prefixBytes, OFF_FILTER_HEADER, FilterHeader.OFF_CRC);
            byte[] chunk = new byte[(int) Math.min(CHUNK, bodyLength)];
            for (long off = 0; off < bodyLength; off += chunk.length) {
                int len = (int) Math.min(chunk.length, bodyLength - off);
                body.read(off, chunk, 0, len);
                inner.update(chunk, 0, len);
            }
            FilterHeader.checkCrc(header.crc, (int) inner.getValue());
            return Filters.newFilter(header, body);
        } catch (RuntimeException | Error | IOException e) {
            body.release();
            throw e;
        }
    }

    /** Decodes {@code count} Rice-coded gaps into the body (zeroed on entry); CLEAR coding fills with ones first. */
    private static void decodeGaps(BitReader br, OffHeapRegion body, long n, long count, int rice, boolean clear)
            throws IOException {
        long fill = clear ? -1L : 0L;
        long word = 0;
        long acc = fill;
        long pos = -1;
        for (long i = 0; i < count; i++) {
            long room = n - pos - 2; // the largest gap that keeps the next position below n
            long q = br.readUnary(room >>> rice);
            long gap = (q << rice) | br.readBits(rice);
            if (gap > room) {
                throw new FilterFormatException(
                        "coded position " + (pos + 1 + gap) + " beyond the body's " + n + " bits");
            }
            pos += gap + 1;
            long w = pos >>> 6;
            if (w != word) {
                body.writeLong(word << 3, acc);
                for (long v = word + 1; v < w; v++) {
                    body.writeLong(v << 3, fill);
                }
                word = w;
                acc = fill;
            }
            acc ^= 1L << pos;
        }
        long words = n >>> 6;
        body.writeLong(word << 3, acc);
        for (long v = word + 1; v < words; v++) {
            body.writeLong(v << 3, fill);
        }
        br.finish();
    }

    static void readFully(InputStream in, byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            int r = in.read(b, off, len);
            if (r < 0) {
                throw new FilterFormatException(
                        "compressed filter truncated: the stream ended " + len + " bytes early");
            }
            off += r;
            len -= r;
        }
    }

    /** Buffers writes and feeds them to the record's CRC. */
    private static final class CrcOut {
        private final OutputStream out;
        private final CRC32C crc;
        private final byte[] buf = new byte[8192];
        private int used;

        CrcOut(OutputStream out, CRC32C crc) {
            this.out = out;
            this.crc = crc;
        }

        void write(int b) throws IOException {
            if (used == buf.length) {
                flush();
            }
            buf[used++] = (byte) b;
        }

        void write(byte[] b, int len) throws IOException {
            flush();
            crc.update(b, 0, len);
            out.write(b, 0, len);
        }

        void flush() throws IOException {
            if (used > 0) {
                crc.update(buf, 0, used);
                out.write(buf, 0, used);
                used = 0;
            }
        }
    }

    /** Exactly {@code limit} payload bytes from the stream, fed to the record's CRC. */
    private static final class CrcIn {
        private final InputStream in;
        private final CRC32C crc;
        private long remaining;
        private final byte[] buf = new byte[8192];
        private int pos;
        private int end;

        CrcIn(InputStream in, CRC32C crc, long limit) {
            this.in = in;
            this.crc = crc;
            this.remaining = limit;
        }

        /** The next payload byte (0..255), or -1 after the payload's last byte. */
        int read() throws IOException {
            if (pos == end) {
                if (remaining == 0) {
                    return -1;
                }
                int len = (int) Math.min(buf.length, remaining);
                CompressedFilterCodec.readFully(in, buf, 0, len);
                crc.update(buf, 0, len);
                remaining -= len;
                pos = 0;
                end = len;
            }
            return buf[pos++] & 0xFF;
        }

        void readFully(byte[] dst, int len) throws IOException {
            CompressedFilterCodec.readFully(in, dst, 0, len);
            crc.update(dst, 0, len);
            remaining -= len;
        }

        boolean exhausted() {
            return pos == end && remaining == 0;
        }
    }

    /** Bits least significant first within each byte. */
    private static final class BitWriter {
        private final CrcOut out;
        private long acc;
        private int n;
        long bytesWritten;

        BitWriter(CrcOut out) {
            this.out = out;
        }

        void writeBits(long value, int count) throws IOException {
            for (int i = 0; i < count; i++) {
                acc |= ((value >>> i) & 1L) << n;
                if (++n == 8) {
                    emit();
                }
            }
        }

        void writeOnes(long count) throws IOException {
            for (long i = 0; i < count; i++) {
                acc |= 1L << n;
                if (++n == 8) {
                    emit();
                }
            }
        }

        private void emit() throws IOException {
            out.write((int) acc);
            bytesWritten++;
            acc = 0;
            n = 0;
        }

        void finish() throws IOException {
            if (n > 0) {
                emit();
            }
        }
    }

    private static final class BitReader {
        private final CrcIn in;
        private int cur;
        private int left;

        BitReader(CrcIn in) {
            this.in = in;
        }

        private int bit() throws IOException {
            if (left == 0) {
                cur = in.read();
                if (cur < 0) {
                    throw new FilterFormatException("compressed filter payload ends inside a code");
                }
                left = 8;
            }
            int b = cur & 1;
            cur >>>= 1;
            left--;
            return b;
        }

        /** A unary quotient (ones ended by a zero) of at most {@code max}; more is a corrupt record. */
        long readUnary(long max) throws IOException {
            long q = 0;
            while (bit() == 1) {
                if (++q > max) {
                    throw new FilterFormatException("Rice quotient beyond the body's end");
                }
            }
            return q;
        }

        long readBits(int count) throws IOException {
            long v = 0;
            for (int i = 0; i < count; i++) {
                v |= (long) bit() << i;
            }
            return v;
        }

        /** The payload must end here: only zero padding in the last byte, no byte left. */
        void finish() {
            if (cur != 0 || !in.exhausted()) {
                throw new FilterFormatException("compressed filter payload has bytes or bits after its last code");
            }
        }
    }
}

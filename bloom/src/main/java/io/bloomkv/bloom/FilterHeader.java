package io.bloomkv.bloom;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The 64-byte header of a serialized filter, little-endian. The layout is written down in bloom/FORMAT.md;
 * the offsets below are that document's table.
 */
final class FilterHeader {
    /** "BKVF" in file order (bytes 42 4B 56 46). */
    static final int MAGIC = 0x46564B42;

    static final int FORMAT_VERSION = 1;
    static final int HEADER_SIZE = 64;
    /** Upper bound on m (bits or counters): 2^40, a 128 GiB bit array. */
    static final long MAX_BITS = 1L << 40;

    static final int OFF_MAGIC = 0;
    static final int OFF_VERSION = 4;
    static final int OFF_KIND = 6;
    static final int OFF_HASH_VERSION = 7;
    static final int OFF_HEADER_SIZE = 8;
    static final int OFF_HASH_COUNT = 10;
    static final int OFF_FLAGS = 12;
    static final int OFF_BITS = 16;
    static final int OFF_BODY_LENGTH = 24;
    static final int OFF_EXPECTED_KEYS = 32;
    static final int OFF_KEY_COUNT = 40;
    static final int OFF_RESERVED = 48;
    static final int RESERVED_LENGTH = 12;
    /** RIBBON only (zero for the other kinds): u32 seed of the hash remix that banded. */
    static final int OFF_RIBBON_SEED = 48;
    /** RIBBON only: u32 number of upper blocks (the last ones), which store r + 1 result columns instead of r. */
    static final int OFF_RIBBON_UPPER_BLOCKS = 52;
    /** RIBBON: bytes [56, 60) stay reserved (zero). */
    static final int OFF_RIBBON_RESERVED = 56;

    static final int OFF_CRC = 60;

    final FilterKind kind;
    final int hashCount;
    final long bits;
    final long bodyLength;
    final long expectedKeys;
    final long keyCount;
    /** RIBBON: the banding seed; 0 for the other kinds. */
    final int seed;
    /** RIBBON: blocks storing r + 1 columns; 0 for the other kinds. */
    final long upperBlocks;
    /** CRC32C stored in (or computed for) the header. */
    final int crc;

    FilterHeader(
            FilterKind kind,
            int hashCount,
            long bits,
            long expectedKeys,
            long keyCount,
            int seed,
            long upperBlocks,
            int crc) {
        this.kind = kind;
        this.hashCount = hashCount;
        this.bits = bits;
        this.seed = seed;
        this.upperBlocks = upperBlocks;
        this.bodyLength = bodyLength(kind, hashCount, bits, upperBlocks);
        this.expectedKeys = expectedKeys;
        this.keyCount = keyCount;
        this.crc = crc;
    }

    /**
     * Body bytes for a filter of this geometry, or {@link FilterFormatException} if the geometry is
     * impossible: STANDARD m % 64 == 0; PARTITIONED m % k == 0 and (m/k) % 64 == 0; BLOCKED m % 512 == 0 with
     * fewer than 2^31 blocks; COUNTING m % 16 == 0 (4 bits per counter); RIBBON (m = slots, k = r result
     * columns of the lower blocks) m % 128 == 0, r in 1..32, upper blocks U &lt;= m / 128 (U = 0 when r = 32):
     * (m / 128 · r + U) segments of 16 bytes.
     */
    static long bodyLength(FilterKind kind, int k, long bits) {
        return bodyLength(kind, k, bits, 0);
    }

    static long bodyLength(FilterKind kind, int k, long bits, long upperBlocks) {
        if (kind != FilterKind.RIBBON && upperBlocks != 0) {
            throw new FilterFormatException(kind + " has no upper blocks: " + upperBlocks);
        }
        if (k < 1 || k > FilterMath.MAX_HASH_COUNT) {
            throw new FilterFormatException("hash count " + k + " outside [1, " + FilterMath.MAX_HASH_COUNT + "]");
        }
        if (bits <= 0 || bits > MAX_BITS) {
            throw new FilterFormatException("bit size " + bits + " outside [1, 2^40]");
        }
        // Messages are built only when a check fails: readers of filter partitions parse a header per probe.
        switch (kind) {
            case STANDARD:
                if (bits % 64 != 0) {
                    throw new FilterFormatException("STANDARD bit size " + bits + " is not a multiple of 64");
                }
                return bits / 8;
            case PARTITIONED:
                if (!(bits % k == 0 && (bits / k) % 64 == 0)) {
                    throw new FilterFormatException(
                            "PARTITIONED bit size " + bits + " is not k=" + k + " rows of a multiple of 64 bits");
                }
                return bits / 8;
            case BLOCKED:
                if (bits % FilterMath.BLOCK_BITS != 0) {
                    throw new FilterFormatException("BLOCKED bit size " + bits + " is not a multiple of 512");
                }
                if (bits / FilterMath.BLOCK_BITS > Integer.MAX_VALUE) {
                    throw new FilterFormatException("BLOCKED filter has too many blocks");
                }
                return bits / 8;
            case COUNTING:
                if (bits % 16 != 0) {
                    throw new FilterFormatException("COUNTING counter count " + bits + " is not a multiple of 16");
                }
                return bits / 2;
            case RIBBON: {
                if (bits % RibbonFilter.BLOCK_SLOTS != 0) {
                    throw new FilterFormatException(
                            "RIBBON slot count " + bits + " is not a multiple of " + RibbonFilter.BLOCK_SLOTS);
                }
                if (k > RibbonFilter.MAX_RESULT_BITS) {
                    throw new FilterFormatException(
                            "RIBBON result bits " + k + " outside [1, " + RibbonFilter.MAX_RESULT_BITS + "]");
                }
                long blocks = bits / RibbonFilter.BLOCK_SLOTS;
                if (!(upperBlocks >= 0
                        && upperBlocks <= blocks
                        && (k < RibbonFilter.MAX_RESULT_BITS || upperBlocks == 0))) {
                    throw new FilterFormatException("RIBBON upper block count " + upperBlocks + " outside [0, "
                            + (k < RibbonFilter.MAX_RESULT_BITS ? blocks : 0) + "]");
                }
                return (blocks * k + upperBlocks) * RibbonFilter.SEGMENT_BYTES;
            }
            default:
                throw new FilterFormatException("unknown kind " + kind);
        }
    }

    /** The header bytes with the CRC field set to {@code crc}. */
    static byte[] encode(
            FilterKind kind, int k, long bits, long bodyLength, long expectedKeys, long keyCount, int crc) {
        return encode(kind, k, bits, bodyLength, expectedKeys, keyCount, 0, 0, crc);
    }

    /** As above, with the RIBBON fields (both 0 for the other kinds). */
    static byte[] encode(
            FilterKind kind,
            int k,
            long bits,
            long bodyLength,
            long expectedKeys,
            long keyCount,
            int seed,
            long upperBlocks,
            int crc) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(OFF_MAGIC, MAGIC);
        b.putShort(OFF_VERSION, (short) FORMAT_VERSION);
        b.put(OFF_KIND, (byte) kind.code());
        b.put(OFF_HASH_VERSION, (byte) Hashing.HASH_VERSION);
        b.putShort(OFF_HEADER_SIZE, (short) HEADER_SIZE);
        b.putShort(OFF_HASH_COUNT, (short) k);
        b.putInt(OFF_FLAGS, 0);
        b.putLong(OFF_BITS, bits);
        b.putLong(OFF_BODY_LENGTH, bodyLength);
        b.putLong(OFF_EXPECTED_KEYS, expectedKeys);
        b.putLong(OFF_KEY_COUNT, keyCount);
        b.putInt(OFF_RIBBON_SEED, seed);
        b.putInt(OFF_RIBBON_UPPER_BLOCKS, (int) upperBlocks);
        b.putInt(OFF_CRC, crc);
        return b.array();
    }

    /** A CRC32C primed with the header bytes before the CRC field; the body follows. */
    static CRC32C crcOverHeader(byte[] header) {
        CRC32C crc = new CRC32C();
        crc.update(header, 0, OFF_CRC);
        return crc;
    }

    /**
     * Parses and validates everything in the header except the CRC, for a serialized filter of exactly
     * {@code totalLength} bytes whose first bytes are at {@code buf}'s position.
     */
    static FilterHeader parse(ByteBuffer buf, long totalLength) {
        if (totalLength < HEADER_SIZE) {
            throw new FilterFormatException(
                    "filter truncated: " + totalLength + " bytes, the header alone needs " + HEADER_SIZE);
        }
        ByteBuffer b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int p = b.position();
        int magic = b.getInt(p + OFF_MAGIC);
        if (magic != MAGIC) {
            throw new FilterFormatException(
                    String.format("bad filter magic 0x%08x, expected 0x%08x (\"BKVF\")", magic, MAGIC));
        }
        int version = Short.toUnsignedInt(b.getShort(p + OFF_VERSION));
        if (version != FORMAT_VERSION) {
            throw new FilterFormatException(
                    "unsupported filter format version " + version + ", this library reads " + FORMAT_VERSION);
        }
        int kindCode = Byte.toUnsignedInt(b.get(p + OFF_KIND));
        FilterKind kind = FilterKind.fromCode(kindCode);
        int hashVersion = Byte.toUnsignedInt(b.get(p + OFF_HASH_VERSION));
        if (hashVersion != Hashing.HASH_VERSION) {
            throw new FilterFormatException("unsupported hash version " + hashVersion
                    + ", this library hashes with version " + Hashing.HASH_VERSION + " (XXH3-64)");
        }
        int headerSize = Short.toUnsignedInt(b.getShort(p + OFF_HEADER_SIZE));
        if (headerSize != HEADER_SIZE) {
            throw new FilterFormatException("header size " + headerSize + ", format version 1 has " + HEADER_SIZE);
        }
        int k = Short.toUnsignedInt(b.getShort(p + OFF_HASH_COUNT));
        int flags = b.getInt(p + OFF_FLAGS);
        if (flags != 0) {
            throw new FilterFormatException(String.format("unknown header flags 0x%08x", flags));
        }
        int seed = 0;
        long upperBlocks = 0;
        int reservedFrom = OFF_RESERVED;
        if (kind == FilterKind.RIBBON) {
            seed = b.getInt(p + OFF_RIBBON_SEED);
            upperBlocks = Integer.toUnsignedLong(b.getInt(p + OFF_RIBBON_UPPER_BLOCKS));
            reservedFrom = OFF_RIBBON_RESERVED;
        }
        for (int i = reservedFrom - OFF_RESERVED; i < RESERVED_LENGTH; i++) {
            if (b.get(p + OFF_RESERVED + i) != 0) {
                throw new FilterFormatException("reserved header byte " + (OFF_RESERVED + i) + " is not zero");
            }
        }
        long bits = b.getLong(p + OFF_BITS);
        long expectedBody = bodyLength(kind, k, bits, upperBlocks);
        long bodyLength = b.getLong(p + OFF_BODY_LENGTH);
        if (bodyLength != expectedBody) {
            throw new FilterFormatException("body length " + bodyLength + " does not match " + kind + " with m=" + bits
                    + " (" + expectedBody + " bytes)");
        }
        if (totalLength != HEADER_SIZE + bodyLength) {
            throw new FilterFormatException(
                    "filter region is " + totalLength + " bytes, header says " + (HEADER_SIZE + bodyLength));
        }
        long expectedKeys = b.getLong(p + OFF_EXPECTED_KEYS);
        long keyCount = b.getLong(p + OFF_KEY_COUNT);
        if (expectedKeys < 0 || keyCount < 0) {
            throw new FilterFormatException(
                    "negative key count in header: expected " + expectedKeys + ", added " + keyCount);
        }
        int crc = b.getInt(p + OFF_CRC);
        return new FilterHeader(kind, k, bits, expectedKeys, keyCount, seed, upperBlocks, crc);
    }

    static void checkCrc(int stored, int computed) {
        if (stored != computed) {
            throw new FilterFormatException(
                    String.format("filter CRC32C mismatch: stored 0x%08x, computed 0x%08x", stored, computed));
        }
    }
}

package io.bloomkv.engine;

import io.bloomkv.engine.internal.util.ByteReader;
import io.bloomkv.engine.internal.util.ByteWriter;

/**
 * The first record of a write-ahead log started at a memtable switch: the number of the log before it and that log's
 * length when it was closed (engine/FORMAT.md, "Log-start record"). Under {@link SyncMode#NONE} the old log is not
 * synced at the switch (RocksDB does not sync there either), so after a power loss the new log's records can be on the
 * device while the end of the old one is not. Recovery compares the old log as recovered with the length recorded
 * here: when it is shorter, writes were lost that the new log's writes follow, and replay stops before the new log,
 * so what survives is still a prefix of the writes (RocksDB's point-in-time recovery, which finds the gap by sequence
 * numbers; sequence numbers here may legitimately skip, an ingestion takes one without a log record).
 *
 * <p>Encoded as a write-batch header that no batch has: sequence {@code 0xFFFF_FFFF_FFFF_FFFF} (above every sequence
 * number, which have 56 bits) and count 0, followed by the previous log's number and length (u64le each).
 */
final class LogStart {
    /** The header's sequence field of a log-start record. */
    static final long MARKER = -1L;

    static final int SIZE = WriteBatch.HEADER_SIZE + 16;

    private LogStart() {}

    /** What a log-start record says: the log before this one, and its length in bytes when it was closed. */
    record Previous(long logNumber, long length) {}

    static byte[] encode(long previousLog, long previousLength) {
        ByteWriter out = new ByteWriter(SIZE);
        out.putFixed64(MARKER);
        out.putFixed32(0);
        out.putFixed64(previousLog);
        out.putFixed64(previousLength);
        return out.toByteArray();
    }

    /** Whether {@code record} is a log-start record (every other record is a write batch). */
    static boolean is(byte[] record) {
        if (record.length != SIZE) {
            return false;
        }
        ByteReader r = new ByteReader(record);
        return r.getFixed64() == MARKER && r.getFixed32() == 0;
    }

    /** The previous log named by a record for which {@link #is} holds. */
    static Previous decode(byte[] record) {
        ByteReader r = new ByteReader(record, WriteBatch.HEADER_SIZE, 16);
        return new Previous(r.getFixed64(), r.getFixed64());
    }
}

package io.bloomkv.engine;

import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.rangedel.RangeTombstone;
import io.bloomkv.engine.internal.util.ByteReader;
import io.bloomkv.engine.internal.util.ByteWriter;
import java.util.Arrays;

/**
 * Puts, deletes, merges and range deletions applied atomically by {@link Db#write}: after a crash either all of them are
 * there or none. Later operations on the same key win. Not thread-safe; reusable after {@link #clear()}.
 *
 * <p>The batch is kept in its serialized form, which is also the WAL record payload (engine/FORMAT.md,
 * "WriteBatch (WAL record payload)"): a 12-byte header {@code fixed64 sequence | fixed32 count},
 * then per operation {@code type byte | varint32 keyLength | key [| varint32 valueLength | value]} (a value for PUT
 * and MERGE).
 * Input is checked when added, so a batch that was built can always be written.
 */
public final class WriteBatch {
    /** Bytes of the header: fixed64 first sequence number, fixed32 operation count. */
    static final int HEADER_SIZE = 12;
    /** Largest serialized batch accepted, 1 GiB. */
    public static final int MAX_BATCH_BYTES = 1 << 30;

    /** Receives the operations of a batch in order. */
    interface Handler {
        void put(long sequence, byte[] key, byte[] value);

        /**
         * A put whose value is {@code buf[valueOffset .. valueOffset + valueLength)}, a slice of the batch valid only
         * during the call. The default copies it out for {@link #put(long, byte[], byte[])}; a handler that copies the
         * value anyway (the memtable's arena) takes the slice and saves that copy of every value written.
         */
        default void put(long sequence, byte[] key, byte[] buf, int valueOffset, int valueLength) {
            put(sequence, key, Arrays.copyOfRange(buf, valueOffset, valueOffset + valueLength));
        }

        void delete(long sequence, byte[] key);

        /** A merge operand ({@link WriteBatch#merge}). */
        void merge(long sequence, byte[] key, byte[] operand);

        /** A range deletion of [begin, end) ({@link WriteBatch#deleteRange}). */
        void deleteRange(long sequence, byte[] begin, byte[] end);
    }

    private final ByteWriter rep;
    private int count;
    private int puts;
    private int merges;
    private long userBytes;

    public WriteBatch() {
        this(64);
    }

    /**
     * An empty batch whose buffer starts at {@code capacity} bytes (at least the header's): a caller that knows the
     * size of what it will add ({@link #putSizeOf}, or group commit for the batches it merges) gets one buffer,
     * rather than a copy of everything added so far each time the buffer doubles.
     */
    public WriteBatch(int capacity) {
        rep = new ByteWriter(Math.max(HEADER_SIZE, capacity));
        clear();
    }

    /** Bytes of the serialized form of a batch holding only a put of {@code key} and {@code value}. */
    static int putSize(byte[] key, byte[] value) {
        return HEADER_SIZE + 1 + 5 + key.length + 5 + value.length;
    }

    /**
     * Most bytes the serialized put of {@code key} and {@code value} takes, without the batch header: type byte, two
     * varint32 lengths of at most 5 bytes each, key, value.
     */
    static int putOpMaxSize(byte[] key, byte[] value) {
        return 11 + key.length + value.length;
    }

    /**
     * Appends the serialized put of {@code key} and {@code value} (an operation as {@link #put} encodes it, no header)
     * to {@code out}: the write path encodes a {@link Db#put} into the WAL record with it, without a batch.
     */
    static void encodePut(ByteWriter out, byte[] key, byte[] value) {
        out.ensure(putOpMaxSize(key, value));
        out.putByte(ValueType.PUT.code());
        out.putLengthPrefixed(key);
        out.putLengthPrefixed(value);
    }

    /** Sets {@code key} to {@code value}. Both arrays are copied. */
    public WriteBatch put(byte[] key, byte[] value) {
        checkKey(key);
        checkValue(value);
        checkRoom(key.length + value.length + 11);
        encodePut(rep, key, value);
        count++;
        puts++;
        userBytes += key.length + value.length;
        return this;
    }

    /**
     * Sets the key {@code keyPrefix} followed by {@code keyRest} to {@code value} (RocksDB's {@code SliceParts} put):
     * the same operation as {@code put(concat(keyPrefix, keyRest), value)}, without the caller building that array.
     * The arrays are copied; {@code keyRest} may be empty, not both parts.
     */
    public WriteBatch put(byte[] keyPrefix, byte[] keyRest, byte[] value) {
        int keyLength = checkKeyParts(keyPrefix, keyRest);
        checkValue(value);
        checkRoom(keyLength + value.length + 11L);
        rep.ensure(11 + keyLength + value.length);
        rep.putByte(ValueType.PUT.code());
        rep.putVarint32(keyLength);
        rep.putBytes(keyPrefix);
        rep.putBytes(keyRest);
        rep.putLengthPrefixed(value);
        count++;
        puts++;
        userBytes += keyLength + value.length;
        return this;
    }

    /** Removes the key {@code keyPrefix} followed by {@code keyRest}, as {@link #put(byte[], byte[], byte[])} names it. */
    public WriteBatch delete(byte[] keyPrefix, byte[] keyRest) {
        int keyLength = checkKeyParts(keyPrefix, keyRest);
        checkRoom(keyLength + 6L);
        rep.ensure(6 + keyLength);
        rep.putByte(ValueType.DELETE.code());
        rep.putVarint32(keyLength);
        rep.putBytes(keyPrefix);
        rep.putBytes(keyRest);
        count++;
        userBytes += keyLength;
        return this;
    }

    /**
     * Bytes a put of a key of {@code keyLength} bytes and a value of {@code valueLength} bytes adds to a batch, at
     * most (for {@link #WriteBatch(int)}; a delete adds less).
     */
    public static int putSizeOf(int keyLength, int valueLength) {
        return 11 + keyLength + valueLength;
    }

    /**
     * Adds {@code operand} to {@code key}'s merge operands (RocksDB's {@code WriteBatch::Merge}): the database's
     * {@link Options#mergeOperator} combines it with the key's older value when read. Both arrays are copied. A batch
     * holding a merge is refused by a database opened without a merge operator.
     */
    public WriteBatch merge(byte[] key, byte[] operand) {
        checkKey(key);
        checkValue(operand);
        checkRoom(key.length + operand.length + 11);
        rep.putByte(ValueType.MERGE.code());
        rep.putLengthPrefixed(key);
        rep.putLengthPrefixed(operand);
        count++;
        merges++;
        userBytes += key.length + operand.length;
        return this;
    }

    /**
     * Removes every key in [{@code beginInclusive}, {@code endExclusive}) (RocksDB's {@code WriteBatch::DeleteRange}):
     * one range tombstone, whatever the number of keys it covers; later operations of the batch on keys of the range
     * are not affected. An empty range ({@code begin == end}) adds nothing.
     *
     * <p>The bounds may be longer than {@link Db#MAX_KEY_SIZE}, as in RocksDB: no stored key is, and each long bound is
     * reduced here to the key of at most {@code MAX} bytes that bounds the same stored keys ({@link LongKeys}), so the
     * batch, and the write-ahead log it becomes, hold only bounds of at most {@code MAX} bytes (recovery replays the
     * reduced tombstone; the log's format is unchanged). A range that holds no key of at most {@code MAX} bytes (both
     * bounds extend the same {@code MAX} bytes, say) adds nothing. An end whose first {@code MAX} bytes are all 0xFF
     * is past every storable key: the range then runs through the greatest one, {@code MAX} bytes of 0xFF, which a
     * tombstone's end cannot reach without being longer than {@code MAX}; the batch holds the range deletion up to it
     * and a delete of it, two operations ({@link #count()}) for RocksDB's one, which read alike.
     *
     * @throws InvalidArgumentException when a bound is null or empty, or {@code begin > end}
     */
    public WriteBatch deleteRange(byte[] beginInclusive, byte[] endExclusive) {
        LongKeys.checkBound(beginInclusive);
        LongKeys.checkBound(endExclusive);
        // Compared as given (RocksDB refuses begin > end whatever their lengths): out of order stays refused even
        // where the reduced bounds would make an empty range.
        if (Arrays.compareUnsigned(beginInclusive, endExclusive) > 0) {
            throw new InvalidArgumentException("deleteRange: begin sorts after end");
        }
        // Reduced before anything is encoded: the WAL record never holds a bound longer than MAX_KEY_SIZE.
        LongKeys.Range r = LongKeys.halfOpen(beginInclusive, endExclusive);
        if (r == null) {
            return this; // begin == end, or no key of at most MAX bytes in the range
        }
        byte[] begin = r.begin();
        byte[] end = r.end();
        if (end == null) {
            // Open above: [begin, LARGEST) and LARGEST itself, the greatest key there is.
            checkRoom(begin.length + LongKeys.LARGEST.length * 2L + 17);
            if (Arrays.compareUnsigned(begin, LongKeys.LARGEST) < 0) {
                addRangeTombstone(begin, LongKeys.LARGEST);
            }
            return delete(LongKeys.LARGEST);
        }
        checkRoom(begin.length + end.length + 11);
        addRangeTombstone(begin, end);
        return this;
    }

    /** Encodes the range deletion of [begin, end), bounds checked and reduced, {@code begin < end}. */
    private void addRangeTombstone(byte[] begin, byte[] end) {
        rep.putByte(RangeTombstone.TYPE_CODE);
        rep.putLengthPrefixed(begin);
        rep.putLengthPrefixed(end);
        count++;
        userBytes += begin.length + end.length;
    }

    /** Removes {@code key} (a tombstone; deleting an absent key is fine). */
    public WriteBatch delete(byte[] key) {
        checkKey(key);
        checkRoom(key.length + 6);
        rep.putByte(ValueType.DELETE.code());
        rep.putLengthPrefixed(key);
        count++;
        userBytes += key.length;
        return this;
    }

    /** Empties the batch. */
    public WriteBatch clear() {
        rep.truncate(0);
        rep.putFixed64(0);
        rep.putFixed32(0);
        count = 0;
        puts = 0;
        merges = 0;
        userBytes = 0;
        return this;
    }

    /**
     * Number of operations: puts, deletes, merges and range deletions (RocksDB's {@code WriteBatch::Count}, except that
     * an empty range deletion is not added, so not counted, and a range deletion to an end past every storable key
     * counts two, {@link #deleteRange} says why). Each takes one sequence number when written.
     */
    public int count() {
        return count;
    }

    /** Number of puts. */
    int putCount() {
        return puts;
    }

    /** Number of merges. */
    int mergeCount() {
        return merges;
    }

    /** Bytes of the keys and values given to the batch. */
    long userBytes() {
        return userBytes;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    /** Bytes of the serialized form, header included. */
    public int approximateSize() {
        return rep.size();
    }

    private void checkRoom(long extra) {
        if (rep.size() + extra > MAX_BATCH_BYTES) {
            throw new InvalidArgumentException("write batch over " + MAX_BATCH_BYTES + " bytes");
        }
    }

    static void checkKey(byte[] key) {
        if (key == null) {
            throw new InvalidArgumentException("key is null");
        }
        if (key.length == 0) {
            throw new InvalidArgumentException("key is empty");
        }
        if (key.length > Db.MAX_KEY_SIZE) {
            throw new InvalidArgumentException(
                    "key of " + key.length + " bytes is over the limit of " + Db.MAX_KEY_SIZE);
        }
    }

    /** Checks a key given in two parts as {@link #checkKey} a whole one; returns its length. */
    private static int checkKeyParts(byte[] keyPrefix, byte[] keyRest) {
        if (keyPrefix == null || keyRest == null) {
            throw new InvalidArgumentException("key is null");
        }
        long length = (long) keyPrefix.length + keyRest.length;
        if (length == 0) {
            throw new InvalidArgumentException("key is empty");
        }
        if (length > Db.MAX_KEY_SIZE) {
            throw new InvalidArgumentException("key of " + length + " bytes is over the limit of " + Db.MAX_KEY_SIZE);
        }
        return (int) length;
    }

    static void checkValue(byte[] value) {
        if (value == null) {
            throw new InvalidArgumentException("value is null");
        }
        if (value.length > Db.MAX_VALUE_SIZE) {
            throw new InvalidArgumentException(
                    "value of " + value.length + " bytes is over the limit of " + Db.MAX_VALUE_SIZE);
        }
    }

    /** Appends every operation of {@code other}, in order. */
    WriteBatch append(WriteBatch other) {
        checkRoom(other.rep.size() - HEADER_SIZE);
        rep.putBytes(other.rep.array(), HEADER_SIZE, other.rep.size() - HEADER_SIZE);
        count += other.count;
        puts += other.puts;
        merges += other.merges;
        userBytes += other.userBytes;
        return this;
    }

    /** Appends the operations of this batch, serialized, without its header, to {@code out} (group commit's record). */
    void appendOperationsTo(ByteWriter out) {
        out.putBytes(rep.array(), HEADER_SIZE, rep.size() - HEADER_SIZE);
    }

    /** The serialized form with {@code firstSequence} in its header; operation i gets sequence firstSequence + i. */
    byte[] serialize(long firstSequence) {
        rep.setFixed64(0, firstSequence);
        rep.setFixed32(8, count);
        return rep.toByteArray();
    }

    /** The internal buffer with {@code firstSequence} in its header; valid until the batch changes. */
    byte[] contents(long firstSequence) {
        rep.setFixed64(0, firstSequence);
        rep.setFixed32(8, count);
        return rep.array();
    }

    /** Feeds the operations to {@code handler}, numbering them from {@code firstSequence}. */
    void forEach(long firstSequence, Handler handler) {
        iterate(rep.array(), HEADER_SIZE, rep.size() - HEADER_SIZE, firstSequence, count, handler, false);
    }

    /**
     * As {@link #forEach}, with each operation's key (a range deletion's begin) lent: one array refilled while keys
     * keep their length, valid only during the handler's call. For a handler that copies what it keeps (the memtable
     * insert copies keys into its arena): a restored batch then allocates no array per record.
     */
    void forEachLendingKeys(long firstSequence, Handler handler) {
        iterate(rep.array(), HEADER_SIZE, rep.size() - HEADER_SIZE, firstSequence, count, handler, true);
    }

    /** Decodes a serialized batch (a WAL record). Returns its first sequence number. */
    static long decode(byte[] record, Handler handler) {
        if (record.length < HEADER_SIZE) {
            throw new ByteReader.MalformedInputException(
                    "batch of " + record.length + " bytes is shorter than its header", 0);
        }
        ByteReader r = new ByteReader(record);
        long sequence = r.getFixed64();
        int n = r.getFixed32();
        iterate(record, HEADER_SIZE, record.length - HEADER_SIZE, sequence, n, handler, false);
        return sequence;
    }

    /**
     * Operation count in a serialized batch's header.
     *
     * @throws ByteReader.MalformedInputException when the record is shorter than the header (found by WriteBatchFuzzTest)
     */
    static int countOf(byte[] record) {
        if (record.length < HEADER_SIZE) {
            throw new ByteReader.MalformedInputException(
                    "batch of " + record.length + " bytes is shorter than its header", 0);
        }
        return new ByteReader(record, 8, 4).getFixed32();
    }

    private static final byte[] EMPTY_KEY = new byte[0];

    private static void iterate(
            byte[] buf, int off, int len, long firstSequence, int n, Handler handler, boolean lendKeys) {
        ByteReader r = new ByteReader(buf, off, len);
        long seq = firstSequence;
        int found = 0;
        byte[] lent = EMPTY_KEY;
        while (r.hasRemaining()) {
            int type = r.getByte();
            byte[] key;
            if (lendKeys) {
                int keyLength = r.getLength(r.remaining());
                if (lent.length != keyLength) {
                    lent = new byte[keyLength];
                }
                r.getBytes(lent, keyLength);
                key = lent;
            } else {
                key = r.getLengthPrefixed();
            }
            if (type == ValueType.PUT.code()) {
                int valueLength = r.getLength(r.remaining());
                int valueOffset = r.position();
                r.skip(valueLength);
                handler.put(seq, key, buf, valueOffset, valueLength);
            } else if (type == ValueType.DELETE.code()) {
                handler.delete(seq, key);
            } else if (type == ValueType.MERGE.code()) {
                handler.merge(seq, key, r.getLengthPrefixed());
            } else if (type == RangeTombstone.TYPE_CODE) {
                handler.deleteRange(seq, key, r.getLengthPrefixed());
            } else {
                throw new ByteReader.MalformedInputException("unknown operation type " + type, r.position() - 1);
            }
            seq++;
            found++;
        }
        if (found != n) {
            throw new ByteReader.MalformedInputException("batch header says " + n + " operations, found " + found, 8);
        }
    }
}

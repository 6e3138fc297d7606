package io.bloomkv.tools.stress;

import io.bloomkv.engine.MergeOperator;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Keys and values of a stress run. Key {@code k} is {@code "stress" + k} zero-padded to 10 digits
 * (numeric order is key order). The value of version {@code v} of key {@code k} names both (so a value
 * served for the wrong key or version is caught) and has a length from 16 to 143 bytes that varies
 * with them, filled with bytes derived from both.
 */
public final class StressValue {
    private StressValue() {}

    private static final byte[] PREFIX = "stress".getBytes(StandardCharsets.US_ASCII);

    /**
     * The merge operator of stress databases: the newest operand is the value (RocksDB's {@code PutOperator},
     * utilities/merge_operators/put.cc), so a merge of {@link #of(int, long)} has a put's expected-state rule while it
     * drives the merge paths (operand chains in memtables and tables, reads past operands, collapsing and partial
     * merges in compactions).
     */
    public static final MergeOperator MERGE_OPERATOR = new MergeOperator() {
        @Override
        public String name() {
            return "StressPutOperator";
        }

        @Override
        public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
            return operands.get(operands.size() - 1);
        }

        @Override
        public byte[] partialMerge(byte[] key, byte[] leftOperand, byte[] rightOperand) {
            return rightOperand;
        }
    };

    /**
     * The exclusive end of a range deletion that removes exactly key {@code k}: {@code key(k) || 0x00}, the next byte
     * string (a range tombstone has a delete's expected-state rule).
     */
    public static byte[] rangeEnd(int k) {
        byte[] key = key(k);
        return Arrays.copyOf(key, key.length + 1);
    }

    public static byte[] key(int k) {
        return String.format("stress%010d", k).getBytes(StandardCharsets.US_ASCII);
    }

    /** The key number of {@code key}, or -1 when it is not a stress key. */
    public static int keyNumber(byte[] key) {
        if (key.length != PREFIX.length + 10 || !Arrays.equals(key, 0, PREFIX.length, PREFIX, 0, PREFIX.length)) {
            return -1;
        }
        long n = 0;
        for (int i = PREFIX.length; i < key.length; i++) {
            int d = key[i] - '0';
            if (d < 0 || d > 9) {
                return -1;
            }
            n = n * 10 + d;
        }
        return n > Integer.MAX_VALUE ? -1 : (int) n;
    }

    public static byte[] of(int k, long version) {
        int len = 16 + (int) ((k * 31L + version * 17L) & 127);
        byte[] v = new byte[len];
        putLong(v, 0, k);
        putLong(v, 8, version);
        long x = k * 0x9E3779B97F4A7C15L ^ version;
        for (int i = 16; i < len; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            v[i] = (byte) (x >>> 56);
        }
        return v;
    }

    /** The version {@code value} holds if it is exactly a value of key {@code k}, else -1. */
    public static long versionOf(int k, byte[] value) {
        if (value == null || value.length < 16 || getLong(value, 0) != k) {
            return -1;
        }
        long version = getLong(value, 8);
        return version > 0 && Arrays.equals(value, of(k, version)) ? version : -1;
    }

    /** True when {@code value} (null = absent) is what state {@code state} of key {@code k} reads as. */
    public static boolean matches(int k, long state, byte[] value) {
        if (!ExpectedState.exists(state)) {
            return value == null;
        }
        return value != null && versionOf(k, value) == ExpectedState.version(state);
    }

    private static void putLong(byte[] b, int off, long v) {
        for (int i = 0; i < 8; i++) {
            b[off + i] = (byte) (v >>> (8 * i));
        }
    }

    private static long getLong(byte[] b, int off) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = v << 8 | (b[off + i] & 0xff);
        }
        return v;
    }
}

package io.bloomkv.engine;

import java.util.List;

/** The built-in {@link MergeOperator}s, matching rocksdbjni's {@code UInt64AddOperator} and {@code StringAppendOperator}. */
public final class MergeOperators {
    private MergeOperators() {}

    /**
     * Unsigned 64-bit counters stored as 8 little-endian bytes (RocksDB's {@code UInt64AddOperator},
     * utilities/merge_operators/uint64add.cc): each operand is added, wrapping modulo 2^64; a missing value counts
     * as 0. As in RocksDB, a value or operand that is not exactly 8 bytes long counts as 0.
     */
    public static MergeOperator uint64Add() {
        return UInt64Add.INSTANCE;
    }

    /**
     * Appends each operand to the value, separated by {@code delimiter} (one byte, the char's low 8 bits, as RocksDB's
     * {@code StringAppendOperator}, utilities/merge_operators/string_append/stringappend.cc): a missing value becomes
     * the first operand itself.
     */
    public static MergeOperator stringAppend(char delimiter) {
        return new StringAppend((byte) delimiter);
    }

    /** The 8-byte little-endian encoding of {@code value}, the format {@link #uint64Add()} reads. */
    public static byte[] encodeUint64(long value) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (value >>> (8 * i));
        }
        return b;
    }

    /** The counter {@link #uint64Add()} stores in {@code value}; 0 unless it is exactly 8 bytes long. */
    public static long decodeUint64(byte[] value) {
        if (value == null || value.length != 8) {
            return 0;
        }
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (value[i] & 0xFFL);
        }
        return v;
    }

    private static final class UInt64Add implements MergeOperator {
        static final UInt64Add INSTANCE = new UInt64Add();

        @Override
        public String name() {
            return "UInt64AddOperator";
        }

        @Override
        public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
            long sum = decodeUint64(existingValue);
            for (byte[] op : operands) {
                sum += decodeUint64(op);
            }
            return encodeUint64(sum);
        }

        @Override
        public byte[] partialMerge(byte[] key, byte[] leftOperand, byte[] rightOperand) {
            return encodeUint64(decodeUint64(leftOperand) + decodeUint64(rightOperand));
        }
    }

    private static final class StringAppend implements MergeOperator {
        private final byte delimiter;

        StringAppend(byte delimiter) {
            this.delimiter = delimiter;
        }

        @Override
        public String name() {
            return "StringAppendOperator";
        }

        @Override
        public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
            int n = existingValue == null ? -1 : existingValue.length;
            for (byte[] op : operands) {
                n += 1 + op.length;
            }
            byte[] out = new byte[n];
            int at = 0;
            if (existingValue != null) {
                System.arraycopy(existingValue, 0, out, 0, existingValue.length);
                at = existingValue.length;
            }
            boolean first = existingValue == null;
            for (byte[] op : operands) {
                if (!first) {
                    out[at++] = delimiter;
                }
                first = false;
                System.arraycopy(op, 0, out, at, op.length);
                at += op.length;
            }
            return out;
        }

        @Override
        public byte[] partialMerge(byte[] key, byte[] leftOperand, byte[] rightOperand) {
            byte[] out = new byte[leftOperand.length + 1 + rightOperand.length];
            System.arraycopy(leftOperand, 0, out, 0, leftOperand.length);
            out[leftOperand.length] = delimiter;
            System.arraycopy(rightOperand, 0, out, leftOperand.length + 1, rightOperand.length);
            return out;
        }
    }
}

package io.bloomkv.kafka;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Big-endian longs and ints read from and written into byte arrays in place (the byte order of Kafka's window and
 * session key schemas), without the {@code ByteBuffer} a {@code wrap(...).getLong(...)} allocates when the JIT does not
 * remove it: these run once or more per record on the stream thread.
 */
final class BigEndian {
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private BigEndian() {}

    static long getLong(byte[] b, int offset) {
        return (long) LONG.get(b, offset);
    }

    static void putLong(byte[] b, int offset, long v) {
        LONG.set(b, offset, v);
    }

    static int getInt(byte[] b, int offset) {
        return (int) INT.get(b, offset);
    }

    static void putInt(byte[] b, int offset, int v) {
        INT.set(b, offset, v);
    }
}

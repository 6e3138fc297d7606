package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The log-start record (engine/FORMAT.md, "Log-start record") and the write batches it must not be taken for. */
class LogStartTest {
    @Test
    void encodesThePreviousLogAndItsLength() {
        byte[] r = LogStart.encode(1234, 96L << 20);
        assertThat(r).hasSize(LogStart.SIZE).hasSize(28);
        assertThat(LogStart.is(r)).isTrue();
        assertThat(LogStart.decode(r)).isEqualTo(new LogStart.Previous(1234, 96L << 20));
        assertThat(WriteBatch.countOf(r)).isZero();
    }

    @Test
    void noWriteBatchIsALogStartRecord() {
        WriteBatch b = new WriteBatch();
        b.put(new byte[] {1}, new byte[] {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
        byte[] batch = b.serialize(io.bloomkv.engine.internal.InternalKey.MAX_SEQUENCE);
        assertThat(LogStart.is(batch)).isFalse();
        byte[] marker = LogStart.encode(7, 9);
        byte[] other = marker.clone();
        other[0] = 0x7F; // a sequence number in the header: a batch's
        assertThat(LogStart.is(other)).isFalse();
        byte[] longer = java.util.Arrays.copyOf(marker, marker.length + 1);
        assertThat(LogStart.is(longer)).isFalse();
    }
}

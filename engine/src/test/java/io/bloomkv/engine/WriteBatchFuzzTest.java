package io.bloomkv.engine;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomkv.engine.internal.util.ByteReader;

/**
 * Fuzz target for the decoding of a serialized {@link WriteBatch} (a WAL record, engine/FORMAT.md
 * "Write batch"). Invariant: decoding throws only its documented {@link
 * ByteReader.MalformedInputException} (which WAL replay reports as a CorruptionException naming the
 * file and offset); never another exception, a hang, or an allocation sized by a fuzzed length; a
 * batch it accepts holds exactly the operations its header counts, each key within the record.
 * Corpus: src/test/resources/io/bloomkv/engine/WriteBatchFuzzTestInputs (seeds from real batches, and a log-start
 * record, the other payload a WAL holds).
 */
class WriteBatchFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void writeBatchDecode(byte[] record) {
        if (LogStart.is(record)) {
            // A WAL's first record may be a log-start record instead (Recovery reads it so): it always decodes.
            LogStart.Previous p = LogStart.decode(record);
            if (!java.util.Arrays.equals(LogStart.encode(p.logNumber(), p.length()), record)) {
                throw new AssertionError("log-start record does not re-encode to itself");
            }
            return;
        }
        int[] ops = new int[1];
        long[] bytes = new long[1];
        try {
            int count = WriteBatch.countOf(record);
            WriteBatch.decode(record, new WriteBatch.Handler() {
                @Override
                public void put(long sequence, byte[] key, byte[] value) {
                    ops[0]++;
                    bytes[0] += key.length + value.length;
                }

                @Override
                public void delete(long sequence, byte[] key) {
                    ops[0]++;
                    bytes[0] += key.length;
                }

                @Override
                public void merge(long sequence, byte[] key, byte[] operand) {
                    ops[0]++;
                    bytes[0] += key.length + operand.length;
                }

                @Override
                public void deleteRange(long sequence, byte[] begin, byte[] end) {
                    ops[0]++;
                    bytes[0] += begin.length + end.length;
                }
            });
            if (ops[0] != count || bytes[0] > record.length) {
                throw new AssertionError("decoded " + ops[0] + " operations of " + bytes[0] + " bytes, header says "
                        + count + ", record has " + record.length + " bytes");
            }
        } catch (ByteReader.MalformedInputException expected) {
            // the documented failure
        }
    }
}

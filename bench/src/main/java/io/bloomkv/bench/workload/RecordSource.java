package io.bloomkv.bench.workload;

/**
 * The values of the records family: a record of {@link #FIELDS} named fields of {@link #FIELD_BYTES} bytes each, as
 * YCSB's CoreWorkload writes them (fieldcount 10, fieldlength 100: field0 .. field9, ~1 KB a record), serialized as
 * the fields one after another:
 *
 * <pre>
 * field := nameLength:u8  name:"fieldN" (6 bytes)  valueLength:u16 big-endian  value:FIELD_BYTES
 * record := field0 field1 ... field9                 (10 x 109 = 1,090 bytes)
 * </pre>
 *
 * The field names repeat in every record, as in a real serialized row, and each field's bytes come from a
 * {@link ValueSource} with the run's {@code --value-compressibility}: field {@code f} of record {@code id} at
 * version {@code v} is {@code ValueSource.value(id * FIELDS + f, v)}. Deterministic, so a read checks its answer
 * without a model.
 */
public final class RecordSource {
    /** Fields per record (YCSB's default fieldcount). */
    public static final int FIELDS = 10;
    /** Bytes of one field's value (YCSB's default fieldlength). */
    public static final int FIELD_BYTES = 100;

    private static final int NAME = 6;
    private static final int FIELD_STRIDE = 1 + NAME + 2 + FIELD_BYTES;
    /** Bytes of one serialized record. */
    public static final int RECORD_BYTES = FIELDS * FIELD_STRIDE;

    private final ValueSource fields;

    public RecordSource(long seed, double compressibility) {
        this.fields = new ValueSource(FIELD_BYTES, seed ^ 0x0_5EC0_4D00L, compressibility);
    }

    /** The record written for {@code id} by write number {@code version} (a fresh array). */
    public byte[] value(long id, long version) {
        byte[] out = new byte[RECORD_BYTES];
        int at = 0;
        for (int f = 0; f < FIELDS; f++) {
            out[at++] = NAME;
            for (int i = 0; i < NAME - 1; i++) {
                out[at++] = (byte) "field".charAt(i);
            }
            out[at++] = (byte) ('0' + f);
            out[at++] = (byte) (FIELD_BYTES >>> 8);
            out[at++] = (byte) FIELD_BYTES;
            fields.copyValue(id * FIELDS + f, version, out, at);
            at += FIELD_BYTES;
        }
        return out;
    }

    /** True when {@code v} equals {@link #value(long, long)}, every byte of it (without allocating). */
    public boolean matches(byte[] v, long id, long version) {
        if (v.length != RECORD_BYTES) {
            return false;
        }
        for (int f = 0; f < FIELDS; f++) {
            int at = f * FIELD_STRIDE;
            if (v[at] != NAME
                    || v[at + 1] != 'f'
                    || v[at + 2] != 'i'
                    || v[at + 3] != 'e'
                    || v[at + 4] != 'l'
                    || v[at + 5] != 'd'
                    || v[at + NAME] != (byte) ('0' + f)
                    || v[at + NAME + 1] != 0
                    || v[at + NAME + 2] != (byte) FIELD_BYTES
                    || !fields.matches(v, at + 1 + NAME + 2, id * FIELDS + f, version)) {
                return false;
            }
        }
        return true;
    }
}

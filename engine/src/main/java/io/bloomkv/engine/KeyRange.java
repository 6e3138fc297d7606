package io.bloomkv.engine;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * A range of user keys, {@code start} inclusive, {@code limit} exclusive, for {@link Db#approximateSizes}
 * (rocksdbjni's {@code org.rocksdb.Range}, {@code new Range(new Slice(start), new Slice(limit))}). Either bound may
 * be empty (the empty key sorts before every stored key) or longer than {@link Db#MAX_KEY_SIZE} (reduced as other
 * reads reduce such keys: {@link LongKeys}). A range whose start is not below its limit holds no key. The arrays are
 * kept as given (not copied); equality compares their contents.
 *
 * @param start the first key of the range (inclusive)
 * @param limit the end of the range (exclusive)
 */
public record KeyRange(byte[] start, byte[] limit) {
    /** @throws InvalidArgumentException when a bound is null */
    public KeyRange {
        if (start == null || limit == null) {
            throw new InvalidArgumentException("KeyRange bound is null");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyRange r && Arrays.equals(start, r.start) && Arrays.equals(limit, r.limit);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(start) + Arrays.hashCode(limit);
    }

    /** The bounds in hex. */
    @Override
    public String toString() {
        return "KeyRange[" + HexFormat.of().formatHex(start) + ", "
                + HexFormat.of().formatHex(limit) + ")";
    }
}

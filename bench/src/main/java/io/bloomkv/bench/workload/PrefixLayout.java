package io.bloomkv.bench.workload;

/**
 * The key layout of the seekprefix workload, on top of {@link KeySpace#key(long)} (whose first 8 bytes are the id,
 * big-endian): the first {@link #PREFIX_LENGTH} bytes of a key are {@code id >>> 8}, so a prefix is a group of 256
 * ids. Load index {@code j} goes to present prefix {@code 2 * (j / KEYS_PER_PREFIX)}, entry {@code j % KEYS_PER_PREFIX};
 * odd prefixes are never written, and each lies between two present ones: inside every table's key range, where only
 * a prefix filter can rule a table out.
 */
public final class PrefixLayout {
    /** The fixed prefix length both engines extract (RocksDB: useFixedLengthPrefixExtractor). */
    public static final int PREFIX_LENGTH = 7;
    /** Keys under each present prefix; a hit seek iterates all of them. */
    public static final int KEYS_PER_PREFIX = 16;

    private final long num;

    /** @param num keys loaded */
    public PrefixLayout(long num) {
        if (num < 2 * KEYS_PER_PREFIX) {
            throw new IllegalArgumentException("seekprefix needs --num >= " + 2 * KEYS_PER_PREFIX + ", got " + num);
        }
        this.num = num;
    }

    /** Present prefixes: {@code ceil(num / KEYS_PER_PREFIX)}. */
    public long presentPrefixes() {
        return (num + KEYS_PER_PREFIX - 1) / KEYS_PER_PREFIX;
    }

    /** Absent prefixes strictly between two present ones. */
    public long absentPrefixes() {
        return presentPrefixes() - 1;
    }

    /**
     * The id of load index {@code j}, {@code 0 <= j < num}. Strictly increasing in {@code j} (and key order is id
     * order), so present prefix {@code p}'s keys in key order are those of load indices
     * {@code p * KEYS_PER_PREFIX .. p * KEYS_PER_PREFIX + keysUnder(p) - 1}.
     */
    public long loadedId(long j) {
        if (j < 0 || j >= num) {
            throw new IndexOutOfBoundsException("load index " + j + " outside [0, " + num + ")");
        }
        return ((2 * (j / KEYS_PER_PREFIX)) << 8) | (j % KEYS_PER_PREFIX);
    }

    /** The id of the first key of present prefix {@code p} (a seek target that is a loaded key). */
    public long presentSeekId(long p) {
        return (2 * p) << 8;
    }

    /** The id of a seek target under absent prefix {@code p}: between present prefixes p and p+1. */
    public long absentSeekId(long p) {
        return (2 * p + 1) << 8;
    }

    /** Keys stored under present prefix {@code p} (the last prefix may hold fewer). */
    public int keysUnder(long p) {
        return (int) Math.min(KEYS_PER_PREFIX, num - p * KEYS_PER_PREFIX);
    }
}

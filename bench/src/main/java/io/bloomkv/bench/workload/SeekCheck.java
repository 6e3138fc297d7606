package io.bloomkv.bench.workload;

import java.util.function.LongUnaryOperator;

/**
 * The check of a seek's answer (seekrandom, seekprefix): the entries a scan handed out must be exactly the loaded keys
 * the seek should reach, in key order, as many as it should see, each with its value.
 *
 * <p>No key set is held in memory: a layout's {@code loadedId} is strictly increasing in the load index and key order
 * is id order ({@link KeySpace#loadedId}, {@link PrefixLayout#loadedId}), so the loaded keys at and after load index
 * {@code j} are those of {@code j, j+1, ...}. The check assumes the database holds exactly the load: every loaded key
 * with the load's value (version 0) and no other key. That holds for every database a seek phase reads: seekrandom
 * shares its database only with read-only workloads and a fillrandom that loaded the same keys and values
 * ({@link BenchRunner#sessions}), seekprefix shares it with nothing.
 *
 * <p>A key is compared byte for byte ({@link KeySpace#matches}); a value as a get's value is ({@link
 * ValueSource#matches}), with the same limit: another key's value that starts at the same byte of the value pool
 * passes.
 */
final class SeekCheck {
    private final KeySpace keys;
    private final ValueSource values;
    /** The seekprefix layout, or null when the run has none. */
    private final PrefixLayout prefixes;

    private final LongUnaryOperator loadedId;
    private final LongUnaryOperator prefixLoadedId;

    /** @param prefixes the seekprefix layout, or null (then only {@link #seekRandom} may be asked) */
    SeekCheck(KeySpace keys, PrefixLayout prefixes, ValueSource values) {
        this.keys = keys;
        this.values = values;
        this.prefixes = prefixes;
        this.loadedId = keys::loadedId;
        this.prefixLoadedId = prefixes == null ? null : prefixes::loadedId;
    }

    /**
     * Whether a seekrandom answer is right: a seek to loaded id {@code id} for up to {@code length} entries handed
     * out {@code seen} entries in {@code ks} / {@code vs}; it must see the loaded keys from {@code id} on,
     * {@code length} of them, or fewer when the key space ends first.
     */
    boolean seekRandom(byte[][] ks, byte[][] vs, int seen, long id, int length) {
        long j = keys.loadedIndex(id);
        return entriesAre(ks, vs, seen, loadedId, j, Math.min(length, keys.num() - j));
    }

    /**
     * Whether a seekprefix-hit answer is right: a prefix seek to the first key of present prefix {@code p} handed out
     * {@code seen} entries; it must see every key under the prefix ({@link PrefixLayout#keysUnder}), nothing after it.
     */
    boolean prefixHit(byte[][] ks, byte[][] vs, int seen, long p) {
        return entriesAre(ks, vs, seen, prefixLoadedId, p * PrefixLayout.KEYS_PER_PREFIX, prefixes.keysUnder(p));
    }

    /** Whether a seekprefix-miss answer is right: a prefix seek under an absent prefix must see nothing. */
    boolean prefixMiss(int seen) {
        return seen == 0;
    }

    /**
     * True when {@code seen == expected} and entry {@code i} ({@code ks[i]}, {@code vs[i]}) is the key and the
     * version-0 value of id {@code idOf(first + i)}, for every {@code i < seen}. Allocates nothing.
     */
    private boolean entriesAre(byte[][] ks, byte[][] vs, int seen, LongUnaryOperator idOf, long first, long expected) {
        if (seen != expected) {
            return false;
        }
        for (int i = 0; i < seen; i++) {
            long id = idOf.applyAsLong(first + i);
            if (!keys.matches(ks[i], id) || vs[i] == null || !values.matches(vs[i], id, 0)) {
                return false;
            }
        }
        return true;
    }
}

package io.bloomkv.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The TTL of a database opened with {@link Options#ttl} (RocksDB's {@code DBWithTTL}): how values carry their write
 * time, when they expire, and the merge operator and compaction step that go with them.
 *
 * <p>Stored form (engine/FORMAT.md, "TTL values"): every PUT value and every merge operand is the user's bytes followed
 * by a fixed32 little-endian write time in whole seconds since the epoch, unsigned (RocksDB's {@code DBWithTTL} appends
 * the same 4 bytes, also little-endian). A suffix, not a prefix, so a value's bytes stay where a plain database has them
 * and the strip is a length change. Four bytes of seconds (good until 2106) rather than eight of milliseconds: the
 * overhead is per value, and a TTL below a second is not a use case.
 *
 * <p>Expiry: a value written at {@code t} is alive while {@code now <= t + ttl} (RocksDB's {@code IsStale}: stale when
 * {@code t + ttl < now}). Unlike RocksDB, where an expired value is returned until a compaction drops it, reads hide it
 * at once (Cassandra's rule): {@link #visible} is applied to every get, multiGet and iterator result.
 *
 * <p>Merge operands (the "gap rule"): expiry is a deletion at {@code t + ttl}. A key's entries, oldest first, are
 * combined as the user's operator would, except that an entry whose next newer entry was written more than {@code ttl}
 * after it had expired by then and counts as absent: the operands after it apply to no value. The result carries the
 * newest operand's write time, so a merge refreshes the key as a put does. This depends only on the stored write times,
 * never on when the merge is computed, so reads, flushes and compactions agree (RocksDB's {@code TtlMergeOperator}
 * instead stamps the merge result with the time the merge ran, and ignores the base's expiry).
 */
final class Ttl {
    /** Bytes of the write-time suffix. */
    static final int SUFFIX = 4;

    private final long ttlSeconds;
    private final java.time.Clock clock;

    Ttl(java.time.Duration ttl, java.time.Clock clock) {
        this.ttlSeconds = ttl.getSeconds();
        this.clock = clock;
    }

    /** The database's TTL, or null without one. */
    static Ttl of(Options options) {
        return options.ttl() == null ? null : new Ttl(options.ttl(), options.clock());
    }

    /** Now, in the seconds write times are kept in. */
    long now() {
        return Math.floorDiv(clock.millis(), 1000L);
    }

    /** {@code value} followed by the write time {@code seconds}. */
    static byte[] stamp(byte[] value, long seconds) {
        byte[] out = java.util.Arrays.copyOf(value, value.length + SUFFIX);
        int t = (int) seconds;
        out[value.length] = (byte) t;
        out[value.length + 1] = (byte) (t >>> 8);
        out[value.length + 2] = (byte) (t >>> 16);
        out[value.length + 3] = (byte) (t >>> 24);
        return out;
    }

    /** The write time of a stored value. */
    static long writeTime(byte[] stored) {
        check(stored);
        int n = stored.length - SUFFIX;
        return (stored[n] & 0xFFL)
                | (stored[n + 1] & 0xFFL) << 8
                | (stored[n + 2] & 0xFFL) << 16
                | (stored[n + 3] & 0xFFL) << 24;
    }

    /** The user's bytes of a stored value. */
    static byte[] strip(byte[] stored) {
        check(stored);
        return java.util.Arrays.copyOf(stored, stored.length - SUFFIX);
    }

    private static void check(byte[] stored) {
        if (stored.length < SUFFIX) {
            throw new CorruptionException(
                    "TTL value of " + stored.length + " bytes is shorter than its write time", null, -1);
        }
    }

    /** True when a value written at {@code writeTime} has expired at {@code now}. */
    boolean expired(long writeTime, long now) {
        return writeTime + ttlSeconds < now;
    }

    /** What a read returns for the stored value {@code stored} (null: absent) at {@code now}: null once expired. */
    byte[] visible(byte[] stored, long now) {
        if (stored == null || expired(writeTime(stored), now)) {
            return null;
        }
        return strip(stored);
    }

    /**
     * {@code value}, checked against the limit a stamped value must fit: the caller's value is refused with its own
     * length and the TTL database's limit, not the length of the stamped copy against the engine's.
     */
    private static byte[] checkStampable(byte[] value, String what) {
        if (value.length > Db.MAX_VALUE_SIZE - SUFFIX) {
            throw new InvalidArgumentException(what + " of " + value.length + " bytes is over the limit of "
                    + (Db.MAX_VALUE_SIZE - SUFFIX) + " of a database with a TTL (each value carries its " + SUFFIX
                    + "-byte write time)");
        }
        return value;
    }

    /** {@code batch} with every put value and merge operand stamped with {@code now}, in the same order. */
    WriteBatch stamp(WriteBatch batch, long now) {
        WriteBatch out = new WriteBatch(batch.approximateSize() + SUFFIX * batch.count() + 16);
        batch.forEach(0, new WriteBatch.Handler() {
            @Override
            public void put(long sequence, byte[] key, byte[] value) {
                out.put(key, stamp(checkStampable(value, "value"), now));
            }

            @Override
            public void delete(long sequence, byte[] key) {
                out.delete(key);
            }

            @Override
            public void merge(long sequence, byte[] key, byte[] operand) {
                out.merge(key, stamp(checkStampable(operand, "merge operand"), now));
            }

            @Override
            public void deleteRange(long sequence, byte[] begin, byte[] end) {
                out.deleteRange(begin, end);
            }
        });
        return out;
    }

    /** The operator the engine uses in place of the user's {@code user} (null: none): it applies the gap rule. */
    MergeOperator mergeOperator(MergeOperator user) {
        return user == null ? null : new TtlMergeOperator(user, this);
    }

    /**
     * The user's operator over stored (stamped) values. Partial merges are declined: combining two operands would keep
     * one write time of two, and the gap rule needs both; operands are combined when a base (or the last level) is
     * reached, by a full merge.
     */
    static final class TtlMergeOperator implements MergeOperator {
        private final MergeOperator user;
        private final Ttl ttl;

        TtlMergeOperator(MergeOperator user, Ttl ttl) {
            this.user = user;
            this.ttl = ttl;
        }

        @Override
        public String name() {
            return user.name();
        }

        @Override
        public byte[] fullMerge(byte[] key, byte[] existingValue, List<byte[]> operands) {
            long previous = existingValue == null ? -1 : writeTime(existingValue);
            byte[] base = existingValue == null ? null : strip(existingValue);
            int start = 0;
            long newest = 0;
            for (int i = 0; i < operands.size(); i++) {
                long t = writeTime(operands.get(i));
                if (previous >= 0 && ttl.expired(previous, t)) {
                    // What came before had expired when this operand was written: the operand applies to no value.
                    base = null;
                    start = i;
                }
                previous = t;
                newest = t;
            }
            List<byte[]> userOperands = new ArrayList<>(operands.size() - start);
            for (int i = start; i < operands.size(); i++) {
                userOperands.add(strip(operands.get(i)));
            }
            byte[] merged = user.fullMerge(key, base, java.util.Collections.unmodifiableList(userOperands));
            return merged == null ? null : stamp(merged, newest);
        }
    }

    /**
     * The compaction step of a TTL database (RocksDB's {@code TtlCompactionFilter}), run where {@link Compactor} runs
     * {@link Options#compactionFilter}: on a key's newest value when no live snapshot reads it. An expired value is
     * removed, unless {@code newerMayExist} says a newer entry of the key may sit above the compaction (a memtable, a
     * shallower table): a merge operand there written before the value expired still applies to it (the gap rule), so
     * the value stays until a compaction sees both. Otherwise the user's filter, if any, is asked about the user's
     * bytes; a changed value keeps the old write time.
     *
     * @param now the compaction's time, read once when it starts
     */
    CompactionFilter compactionFilter(CompactionFilter user, long now, Predicate<byte[]> newerMayExist) {
        return (level, bottommost, key, value) -> {
            long written = writeTime(value);
            if (expired(written, now)) {
                return newerMayExist.test(key) ? CompactionFilter.Decision.KEEP : CompactionFilter.Decision.REMOVE;
            }
            if (user == null) {
                return CompactionFilter.Decision.KEEP;
            }
            CompactionFilter.Decision d = user.filter(level, bottommost, key, strip(value));
            if (d != null && !d.isRemove() && d.newValueNoCopy() != null) {
                return CompactionFilter.Decision.changeValue(stamp(d.newValueNoCopy(), written));
            }
            return d;
        };
    }
}

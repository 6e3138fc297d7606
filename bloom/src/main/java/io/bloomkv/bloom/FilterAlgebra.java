package io.bloomkv.bloom;

/**
 * {@link Filters#union} and {@link Filters#intersection}: word-by-word combinations of two bodies of the same geometry.
 *
 * <p>Soundness, per kind (a key's probes depend only on its hash, m and k, so two filters of one geometry put a key's
 * probes on the same bits):
 * <ul>
 *   <li>STANDARD, PARTITIONED, BLOCKED: the OR of the bodies is bit for bit the filter built from A ∪ B. The AND holds
 *       every bit of the filter of A ∩ B (no false negatives for A ∩ B) but also the bits that a key of A \ B and a
 *       key of B \ A happen to share, so its false-positive rate is above that of the filter of A ∩ B; it is at most
 *       the rate of either operand, whose bits it is a subset of.</li>
 *   <li>COUNTING: the union adds the counters (saturating at 15: the filter of the multiset sum, exact while no sum
 *       saturates); the intersection takes their minimum, which is at least the count A ∩ B's keys put in each cell.
 *       Subtraction (A \ B) is not offered: removing B's counts is sound only for keys B really holds that A also
 *       holds, which the filters cannot tell, and a wrong removal makes false negatives.</li>
 *   <li>RIBBON: not combinable. A Ribbon body is the solution of a linear system over GF(2); the OR or AND of two
 *       solutions solves neither system, so it could answer "absent" for a key of A.</li>
 * </ul>
 */
final class FilterAlgebra {
    private FilterAlgebra() {}

    enum Op {
        UNION,
        INTERSECTION
    }

    static Filter combine(Filter a, Filter b, Op op) {
        if (a == null || b == null) {
            throw new NullPointerException(a == null ? "a" : "b");
        }
        if (!(a instanceof OffHeapFilter) || !(b instanceof OffHeapFilter)) {
            throw new IncompatibleFiltersException(
                    "only filters of this library can be combined: " + a.getClass() + ", " + b.getClass());
        }
        OffHeapFilter x = (OffHeapFilter) a;
        OffHeapFilter y = (OffHeapFilter) b;
        x.checkOpen();
        y.checkOpen();
        if (x.kind() != y.kind()) {
            throw new IncompatibleFiltersException(
                    "cannot combine a " + x.kind() + " filter with a " + y.kind() + " filter");
        }
        if (x.kind() == FilterKind.RIBBON) {
            throw new IncompatibleFiltersException(
                    "RIBBON filters have no sound union or intersection: each body solves its own "
                            + "linear system; build one RIBBON from both key sets instead");
        }
        if (x.bits != y.bits || x.k != y.k) {
            throw new IncompatibleFiltersException(op.name().toLowerCase() + " needs the same size and probe count: "
                    + x.kind() + " m=" + x.bits + " k=" + x.k + " vs m=" + y.bits + " k=" + y.k);
        }
        long length = x.body.length();
        OffHeapRegion out = OffHeapRegion.allocate(length);
        try {
            boolean counting = x.kind() == FilterKind.COUNTING;
            for (long off = 0; off < length; off += 8) {
                long p = x.body.readLong(off);
                long q = y.body.readLong(off);
                long r;
                if (counting) {
                    r = op == Op.UNION ? saturatingNibbleAdd(p, q) : nibbleMin(p, q);
                } else {
                    r = op == Op.UNION ? p | q : p & q;
                }
                out.writeLong(off, r);
            }
            // keyCount: the adds that went into the union (a + b; COUNTING's counters hold exactly that); for the
            // intersection the smaller operand's count, so expectedFpp() stays an upper bound (its bits are a subset
            // of either operand's).
            long keys =
                    op == Op.UNION ? saturatingAdd(x.keyCount(), y.keyCount()) : Math.min(x.keyCount(), y.keyCount());
            long expected = Math.max(x.expectedKeys(), y.expectedKeys());
            switch (x.kind()) {
                case STANDARD:
                    return new StandardFilter(out, x.k, x.bits, expected, keys);
                case PARTITIONED:
                    return new PartitionedFilter(out, x.k, x.bits, expected, keys);
                case BLOCKED:
                    return new BlockedFilter(out, x.k, x.bits, expected, keys);
                case COUNTING:
                    return new CountingBloomFilter(out, x.k, x.bits, expected, keys);
                default:
                    throw new IncompatibleFiltersException("cannot combine " + x.kind());
            }
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
    }

    private static long saturatingAdd(long a, long b) {
        long s = a + b;
        return s < 0 ? Long.MAX_VALUE : s;
    }

    /** Sixteen 4-bit counters added pairwise, each capped at 15 ({@link CountingBloomFilter#MAX_COUNT}). */
    static long saturatingNibbleAdd(long p, long q) {
        long r = 0;
        for (int s = 0; s < 64; s += 4) {
            long c = Math.min(CountingBloomFilter.MAX_COUNT, ((p >>> s) & 0xF) + ((q >>> s) & 0xF));
            r |= c << s;
        }
        return r;
    }

    /** Sixteen 4-bit counters, the pairwise minimum. */
    static long nibbleMin(long p, long q) {
        long r = 0;
        for (int s = 0; s < 64; s += 4) {
            r |= Math.min((p >>> s) & 0xF, (q >>> s) & 0xF) << s;
        }
        return r;
    }
}

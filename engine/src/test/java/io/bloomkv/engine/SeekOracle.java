package io.bloomkv.engine;

import java.util.ArrayList;
import java.util.List;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * One bloomkv iterator and its RocksDB oracles over the same bounds and snapshot, for the seek differential tests
 * ({@link EmptySeekTargetDifferentialTest}, {@link LongSeekTargetDifferentialTest}): RocksDB's iterator in the same
 * mode ({@code prefix_same_as_start}, or total order), and in prefix mode also a total-order one with the same bounds
 * (RocksDB leaves iteration outside a prefix undefined in prefix mode). Closing it closes the iterators, the read
 * options and the bounds' slices.
 */
final class SeekOracle implements AutoCloseable {
    final DbIterator ours;
    final RocksIterator theirs;
    /** RocksDB's total-order iterator in prefix mode; null otherwise. */
    final RocksIterator totalOrder;
    /** {@link #theirs}, then {@link #totalOrder} when there is one: the iterators every positioning is applied to. */
    final List<RocksIterator> rocksIterators;

    private final List<AutoCloseable> resources = new ArrayList<>();

    SeekOracle(
            Db db,
            RocksDB rocks,
            Snapshot ourSnapshot,
            org.rocksdb.Snapshot theirSnapshot,
            byte[] lower,
            byte[] upper,
            boolean prefixMode) {
        try {
            org.rocksdb.ReadOptions their = add(new org.rocksdb.ReadOptions());
            if (prefixMode) {
                their.setPrefixSameAsStart(true);
            } else {
                their.setTotalOrderSeek(true);
            }
            if (theirSnapshot != null) {
                their.setSnapshot(theirSnapshot);
            }
            if (lower != null) {
                their.setIterateLowerBound(add(new Slice(lower)));
            }
            if (upper != null) {
                their.setIterateUpperBound(add(new Slice(upper)));
            }
            ours = add(db.iterator(ReadOptions.defaults()
                    .snapshot(ourSnapshot)
                    .iterateLowerBound(lower)
                    .iterateUpperBound(upper)
                    .prefixSameAsStart(prefixMode)));
            theirs = add(rocks.newIterator(their));
            if (prefixMode) {
                org.rocksdb.ReadOptions total = add(new org.rocksdb.ReadOptions(their)
                        .setPrefixSameAsStart(false)
                        .setTotalOrderSeek(true));
                totalOrder = add(rocks.newIterator(total));
                rocksIterators = List.of(theirs, totalOrder);
            } else {
                totalOrder = null;
                rocksIterators = List.of(theirs);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private <T extends AutoCloseable> T add(T resource) {
        resources.add(resource);
        return resource;
    }

    /** Closes in the reverse order of opening: iterators before their read options and slices. */
    @Override
    public void close() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + resources.get(i), e);
            }
        }
        resources.clear();
    }
}

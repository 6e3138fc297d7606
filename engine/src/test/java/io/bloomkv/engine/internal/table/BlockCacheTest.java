package io.bloomkv.engine.internal.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.TestSeeds;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockCache} against a model: the byte bound at every moment, the accounting (charged bytes and block count
 * equal what a get finds), views' separate key spaces, more passes of the clock hand survived by blocks hit more, and
 * the same under concurrent gets, puts and evictions.
 */
class BlockCacheTest {
    private static final Path FILE = Path.of("000001.sst");

    private long seed;
    private Random rnd;

    @BeforeEach
    void seed() {
        seed = TestSeeds.seed("BlockCacheTest", "blockcache.seed");
        rnd = new Random(seed);
    }

    /** A valid block of {@code size} bytes: one restart point at 0, the rest zeros. */
    private static Block block(int size, long offset) {
        byte[] d = new byte[size];
        d[size - 4] = 1; // restart count 1 (little-endian); restart point 0 in the four bytes before it
        return new Block(d, FILE, offset);
    }

    private record K(int view, long file, long offset) {}

    @Test
    void shardsKeepAtLeastHalfAMebibyteAndAtMostSixteen() {
        assertThat(new BlockCache(20_000).shardCount()).isEqualTo(1);
        assertThat(new BlockCache(1 << 20).shardCount()).isEqualTo(2);
        assertThat(new BlockCache((1 << 20) - 1).shardCount()).isEqualTo(1);
        assertThat(new BlockCache(32L << 20).shardCount()).isEqualTo(16);
        assertThat(new BlockCache(1L << 40).shardCount()).isEqualTo(16);
        assertThatThrownBy(() -> new BlockCache(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aHitBlockGetsASecondChance() {
        int size = 1000;
        long charge = size + BlockCache.PER_BLOCK_OVERHEAD;
        BlockCache cache = new BlockCache(4 * charge); // one shard, four blocks
        int falseAdmissions = 0;
        for (int round = 0; round < 50; round++) {
            long base = round * 100L;
            cache.clear();
            for (int i = 0; i < 4; i++) {
                cache.put(1, base + i, block(size, base + i));
            }
            Block hot = cache.get(1, base);
            assertThat(hot).isNotNull();
            cache.put(1, base + 4, block(size, base + 4)); // the shard is full: refused at the door
            if (cache.get(1, base + 4) == null) {
                // its second miss: admitted, one must go: not the one read
                cache.put(1, base + 4, block(size, base + 4));
            } else {
                falseAdmissions++; // the door is a Bloom filter: a false positive admits at the first miss
            }
            assertThat(cache.get(1, base + 4)).isNotNull();
            assertThat(cache.get(1, base)).as("seed %d round %d", seed, round).isSameAs(hot);
            assertThat(cache.blockCount()).isEqualTo(4);
            assertThat(cache.usedBytes()).isEqualTo(4 * charge);
        }
        assertThat(falseAdmissions).as("first misses admitted in 50 rounds").isLessThanOrEqualTo(5);
    }

    /**
     * Each insert into a full shard evicts one block, so the hand passes a block at most once per insert (a block with
     * no hits, the last one inserted, always ends its lap): a block hit {@code MAX_HITS} times outlives that many
     * inserts, where a block hit once may go at the second.
     */
    @Test
    void aBlockHitOftenOutlivesBlocksHitOnce() {
        int size = 1000;
        long charge = size + BlockCache.PER_BLOCK_OVERHEAD;
        BlockCache cache = new BlockCache(4 * charge);
        for (int round = 0; round < 50; round++) {
            long base = round * 100L;
            cache.clear();
            for (int i = 0; i < 4; i++) {
                cache.put(1, base + i, block(size, base + i));
            }
            Block hot = cache.get(1, base);
            for (int i = 1; i < BlockCache.MAX_HITS + 2; i++) {
                assertThat(cache.get(1, base)).isSameAs(hot); // saturates at MAX_HITS
            }
            assertThat(cache.get(1, base + 1)).isNotNull();
            for (int i = 0; i < BlockCache.MAX_HITS; i++) {
                cache.put(1, base + 10 + i, block(size, base + 10 + i)); // refused at the door
                cache.put(1, base + 10 + i, block(size, base + 10 + i)); // admitted
                assertThat(cache.usedBytes()).isEqualTo(4 * charge);
            }
            // checked once, at the end: a get would count another hit
            assertThat(cache.get(1, base)).as("seed %d round %d", seed, round).isSameAs(hot);
        }
    }

    /**
     * TinyLFU's doorkeeper: a full shard admits a key at its second miss, not its first, so a stream of one-off reads
     * leaves what is cached alone (no eviction, no charge); a shard with room admits at once; the door forgets the
     * keys it refused after about a shard's worth of refusals.
     */
    @Test
    void aFullShardAdmitsAKeyAtItsSecondMissOnly() {
        int size = 1000;
        long charge = size + BlockCache.PER_BLOCK_OVERHEAD;
        BlockCache cache = new BlockCache(4 * charge);
        Block[] cached = new Block[4];
        for (int i = 0; i < 4; i++) {
            cached[i] = block(size, i);
            cache.put(1, i, cached[i]);
            assertThat(cache.get(1, i)).as("room left: admitted at once").isSameAs(cached[i]);
        }
        // The door is a Bloom filter: a one-off key passes it by a false positive with a small probability (the
        // cache's owner id, which depends on the tests run before and so on their random workloads, is part of every
        // hash), so count those. Up to 40 keys in a 1024-bit two-probe door let in 0.08 on average: more than 2 with
        // probability ~1e-4 over owner ids, more than 4 ~2e-8. A door that let strangers in would admit all 40.
        int falseAdmissions = 0;
        long refused = -1;
        for (long k = 100; k < 140; k++) {
            cache.put(1, k, block(size, k));
            if (cache.get(1, k) == null) {
                refused = k;
            } else {
                falseAdmissions++;
            }
        }
        assertThat(falseAdmissions)
                .as("one-off keys let in by the door's false positives")
                .isLessThanOrEqualTo(4);
        int kept = 0;
        for (int i = 0; i < 4; i++) {
            kept += cache.get(1, i) == cached[i] ? 1 : 0;
        }
        assertThat(kept).as("cached blocks a one-off read evicted").isGreaterThanOrEqualTo(4 - falseAdmissions);
        assertThat(cache.usedBytes()).isEqualTo(4 * charge);
        Block again = block(size, refused);
        cache.put(1, refused, again);
        assertThat(cache.get(1, refused)).as("second miss of key %d", refused).isSameAs(again);
        assertThat(cache.blockCount()).isEqualTo(4);
        assertThat(cache.usedBytes()).isEqualTo(4 * charge);

        // 64 more refusals clear the door (a 4-block shard's door holds at least 64 keys): keys refused before are
        // strangers again, refused at their next miss but for the door's false positives
        for (long k = 1_000; k < 1_000 + 200; k++) {
            cache.put(1, k, block(size, k));
        }
        int readmitted = 0;
        for (long k = 100; k < 110; k++) {
            if (k != refused && cache.get(1, k) == null) {
                cache.put(1, k, block(size, k));
                readmitted += cache.get(1, k) == null ? 0 : 1;
            }
        }
        // up to 9 keys through a door of ~50 keys: more than 2 false positives with probability ~1e-4 over owner ids,
        // more than 4 ~1e-8; a door never cleared would let all 9 in
        assertThat(readmitted)
                .as("keys refused before the door was cleared, let in at once")
                .isLessThanOrEqualTo(4);
    }

    /**
     * A block carries its cache key (so a hit needs no entry object): the same block offered under a second key, or
     * under an offset that is not its own, is cached as a copy of the same contents, and each key keeps its own.
     */
    @Test
    void aBlockOfferedUnderAnotherKeyIsCachedAsACopy() {
        BlockCache a = new BlockCache(1 << 20);
        BlockCache b = a.newView();
        Block blk = block(500, 4096);
        a.put(7, 4096, blk);
        b.put(7, 4096, blk); // another view
        a.put(8, 4096, blk); // another file
        a.put(7, 8192, blk); // another offset
        assertThat(a.get(7, 4096)).isSameAs(blk);
        for (Block copy : new Block[] {b.get(7, 4096), a.get(8, 4096), a.get(7, 8192)}) {
            assertThat(copy).isNotNull().isNotSameAs(blk);
            assertThat(copy.size()).isEqualTo(blk.size());
            assertThat(copy.data()).isSameAs(blk.data());
        }
        assertThat(a.get(7, 8192).offset()).isEqualTo(8192);
        assertThat(a.blockCount()).isEqualTo(4);
        a.evictFile(7);
        assertThat(a.get(7, 4096)).isNull();
        assertThat(a.get(7, 8192)).isNull();
        assertThat(b.get(7, 4096)).isNotNull();
        assertThat(a.get(8, 4096)).isNotNull();
        a.put(7, 4096, blk); // keyed (a, 7, 4096) already: cached as itself again
        assertThat(a.get(7, 4096)).isSameAs(blk);
    }

    @Test
    void aBlockLargerThanAShardIsNotCachedAndADuplicatePutKeepsTheFirst() {
        BlockCache cache = new BlockCache(10_000);
        cache.put(1, 0, block(10_000, 0));
        assertThat(cache.get(1, 0)).isNull();
        assertThat(cache.usedBytes()).isZero();
        Block first = block(100, 0);
        cache.put(1, 0, first);
        cache.put(1, 0, block(100, 0));
        assertThat(cache.get(1, 0)).isSameAs(first);
        assertThat(cache.blockCount()).isEqualTo(1);
        assertThat(cache.usedBytes()).isEqualTo(100 + BlockCache.PER_BLOCK_OVERHEAD);
    }

    /**
     * One thread, random puts, gets, file evictions and clears over two views: a get returns the block put for its
     * key (never another key's, never one evicted by file or clear); a put into a cache whose used bytes leave room
     * for the block in any shard is admitted and evicts nothing; a block cached since the last step that evicted
     * anything (seen as the block count falling short) is found by every get; after every step the charge equals the
     * sum of what gets find and stays within the capacity.
     */
    @Test
    void singleThreadMatchesTheModel() {
        long capacity = 200_000 + rnd.nextInt(1_800_000); // 1 to 3 shards
        BlockCache a = new BlockCache(capacity);
        BlockCache[] views = {a, a.newView()};
        long shardCapacity = capacity / a.shardCount(); // a power of two: the shards' bound exactly
        Map<K, Block> put = new HashMap<>(); // the block put last for a key not evicted by file or clear since
        Set<K> mustHave = new HashSet<>(); // cached, and no step since could have evicted it
        int files = 4;
        int offsets = 300;
        int hits = 0;
        int mustHits = 0;
        int roomyPuts = 0;
        for (int step = 0; step < 20_000; step++) {
            int v = rnd.nextInt(2);
            long file = rnd.nextInt(files);
            long offset = rnd.nextInt(offsets) * 4096L;
            K k = new K(v, file, offset);
            int op = rnd.nextInt(100);
            if (op < 50) {
                Block got = views[v].get(file, offset);
                if (mustHave.contains(k)) {
                    assertThat(got)
                            .as("seed %d step %d: %s cached and nothing evicted since", seed, step, k)
                            .isNotNull();
                    mustHits++;
                }
                if (got != null) {
                    assertThat(got).as("seed %d step %d: %s", seed, step, k).isSameAs(put.get(k));
                    hits++;
                }
            } else if (op < 97) {
                Block b = block(64 + rnd.nextInt(8000), offset);
                Block before = views[v].get(file, offset);
                long countBefore = a.blockCount();
                boolean room = a.usedBytes() + BlockCache.charge(b) <= shardCapacity; // in whichever shard it goes
                views[v].put(file, offset, b);
                Block after = views[v].get(file, offset);
                if (before != null) {
                    assertThat(after)
                            .as("seed %d step %d: duplicate put keeps the first", seed, step)
                            .isSameAs(before);
                    assertThat(a.blockCount()).as("seed %d step %d", seed, step).isEqualTo(countBefore);
                } else {
                    if (room) {
                        assertThat(after)
                                .as("seed %d step %d: a put with room is admitted", seed, step)
                                .isSameAs(b);
                        assertThat(a.blockCount())
                                .as("seed %d step %d: a put with room evicts nothing", seed, step)
                                .isEqualTo(countBefore + 1);
                        roomyPuts++;
                    }
                    if (after != null) {
                        assertThat(after).isSameAs(b);
                        put.put(k, b);
                        if (a.blockCount() != countBefore + 1) {
                            mustHave.clear(); // the put evicted blocks: which ones the model cannot say
                        }
                        mustHave.add(k);
                    } else {
                        assertThat(a.blockCount())
                                .as("seed %d step %d: a refused put evicts nothing", seed, step)
                                .isEqualTo(countBefore);
                    }
                }
            } else if (op < 99) {
                views[v].evictFile(file);
                put.keySet().removeIf(x -> x.view() == v && x.file() == file);
                mustHave.removeIf(x -> x.view() == v && x.file() == file);
            } else {
                views[v].clear();
                put.keySet().removeIf(x -> x.view() == v);
                mustHave.removeIf(x -> x.view() == v);
            }
            if (step % 97 == 0 || op >= 97) {
                checkAccounting(views, put, mustHave, files, offsets, capacity, "seed " + seed + " step " + step);
            }
        }
        checkAccounting(views, put, mustHave, files, offsets, capacity, "seed " + seed + " end");
        // A cache that kept nothing (or dropped blocks silently) fails the checks above; these show they ran.
        assertThat(hits).as("seed %d: gets that found a block", seed).isPositive();
        assertThat(mustHits)
                .as("seed %d: gets of blocks that must be cached", seed)
                .isPositive();
        assertThat(roomyPuts).as("seed %d: puts into a cache with room", seed).isPositive();
        a.clear();
        views[1].clear();
        assertThat(a.usedBytes()).isZero();
        assertThat(a.blockCount()).isZero();
    }

    private static void checkAccounting(
            BlockCache[] views, Map<K, Block> put, Set<K> mustHave, int files, int offsets, long capacity, String ctx) {
        for (K k : mustHave) {
            assertThat(views[k.view()].get(k.file(), k.offset()))
                    .as(ctx + ": " + k + " cached and nothing evicted since")
                    .isSameAs(put.get(k));
        }
        long bytes = 0;
        long blocks = 0;
        for (int v = 0; v < views.length; v++) {
            for (long f = 0; f < files; f++) {
                for (int o = 0; o < offsets; o++) {
                    Block got = views[v].get(f, o * 4096L);
                    if (got != null) {
                        assertThat(got).as(ctx).isSameAs(put.get(new K(v, f, o * 4096L)));
                        bytes += BlockCache.charge(got);
                        blocks++;
                    }
                }
            }
        }
        assertThat(views[0].usedBytes()).as(ctx + ": charge = cached blocks").isEqualTo(bytes);
        assertThat(views[1].blockCount()).as(ctx).isEqualTo(blocks);
        assertThat(bytes).as(ctx).isLessThanOrEqualTo(capacity);
    }

    /**
     * Threads put, get and evict files of a shared cache at once, each key always with its own block: a get never
     * returns another key's block, the charge observed while they run never passes the capacity, and at the end the
     * charge and count equal the blocks gets find (no charge lost or counted twice by racing puts and evictions).
     */
    @Test
    void concurrentUseKeepsTheBoundAndTheAccounting() throws Exception {
        long capacity = (1 << 20) + rnd.nextInt(3 << 20); // 2 to 4 shards
        BlockCache a = new BlockCache(capacity);
        BlockCache[] views = {a, a.newView()};
        int files = 6;
        int offsets = 400;
        Block[][][] canonical = new Block[2][files][offsets];
        for (int v = 0; v < 2; v++) {
            for (int f = 0; f < files; f++) {
                for (int o = 0; o < offsets; o++) {
                    canonical[v][f][o] = block(64 + rnd.nextInt(12_000), o * 4096L);
                }
            }
        }
        int threads = 4;
        int steps = 60_000;
        AtomicLong maxSeen = new AtomicLong();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        try {
            List<Future<Long>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long threadSeed = seed + 31L * (t + 1);
                workers.add(pool.submit(() -> {
                    Random r = new Random(threadSeed);
                    start.await();
                    long hits = 0;
                    for (int i = 0; i < steps; i++) {
                        int v = r.nextInt(2);
                        int f = r.nextInt(files);
                        // skewed: a hot quarter of the offsets takes most gets
                        int o = r.nextInt(4) == 0 ? r.nextInt(offsets) : r.nextInt(offsets / 4);
                        int op = r.nextInt(1000);
                        if (op < 700) {
                            Block got = views[v].get(f, o * 4096L);
                            if (got != null) {
                                if (got != canonical[v][f][o]) {
                                    throw new AssertionError("seed " + seed + ": another key's block");
                                }
                                hits++;
                            } else {
                                views[v].put(f, o * 4096L, canonical[v][f][o]);
                            }
                        } else if (op < 998) {
                            views[v].put(f, o * 4096L, canonical[v][f][o]);
                        } else {
                            views[v].evictFile(f);
                        }
                    }
                    return hits;
                }));
            }
            Future<?> watcher = pool.submit(() -> {
                start.await();
                while (!workers.stream().allMatch(Future::isDone)) {
                    maxSeen.accumulateAndGet(a.usedBytes(), Math::max);
                    Thread.onSpinWait();
                }
                return null;
            });
            long hits = 0;
            for (Future<Long> w : workers) {
                hits += w.get();
            }
            watcher.get();
            assertThat(hits).as("seed %d: the skewed gets hit", seed).isGreaterThan(0);
        } finally {
            pool.shutdownNow();
        }
        assertThat(maxSeen.get()).as("seed %d: charge seen while running", seed).isLessThanOrEqualTo(capacity);
        long bytes = 0;
        long blocks = 0;
        for (int v = 0; v < 2; v++) {
            for (int f = 0; f < files; f++) {
                for (int o = 0; o < offsets; o++) {
                    Block got = views[v].get(f, o * 4096L);
                    if (got != null) {
                        assertThat(got).as("seed %d", seed).isSameAs(canonical[v][f][o]);
                        bytes += BlockCache.charge(got);
                        blocks++;
                    }
                }
            }
        }
        assertThat(a.usedBytes()).as("seed %d: charge = cached blocks", seed).isEqualTo(bytes);
        assertThat(a.blockCount()).as("seed %d", seed).isEqualTo(blocks);
        assertThat(bytes).isLessThanOrEqualTo(capacity).isGreaterThan(capacity / 2);
        views[0].clear();
        views[1].clear();
        assertThat(a.usedBytes()).isZero();
        assertThat(a.blockCount()).isZero();
    }
}

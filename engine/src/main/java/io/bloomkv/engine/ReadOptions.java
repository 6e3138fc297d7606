package io.bloomkv.engine;

/** Options of one read ({@link Db#get(byte[], ReadOptions)}, {@link Db#iterator(ReadOptions)}). */
public final class ReadOptions {
    private Snapshot snapshot;
    private byte[] iterateLowerBound;
    private byte[] iterateUpperBound;

    private ReadOptions() {}

    /** Read the latest state. */
    public static ReadOptions defaults() {
        return new ReadOptions();
    }

    /** Read at {@code snapshot} (null = the latest state). */
    public ReadOptions snapshot(Snapshot snapshot) {
        this.snapshot = snapshot;
        return this;
    }

    public Snapshot snapshot() {
        return snapshot;
    }

    /**
     * Iterators see only keys {@code >= lowerBound} (inclusive, RocksDB's {@code iterate_lower_bound});
     * null = unbounded. A seek below it lands on it; moving backward stops before passing it. An empty bound restricts
     * nothing (every key is {@code >=} it), as in RocksDB. A bound longer than {@link Db#MAX_KEY_SIZE} is taken too,
     * as in RocksDB: no stored key is that long, so it admits the keys above its first {@code MAX} bytes. Copied.
     */
    public ReadOptions iterateLowerBound(byte[] lowerBound) {
        this.iterateLowerBound = lowerBound == null ? null : lowerBound.clone();
        return this;
    }

    public byte[] iterateLowerBound() {
        return iterateLowerBound == null ? null : iterateLowerBound.clone();
    }

    /**
     * Iterators see only keys {@code < upperBound} (exclusive, RocksDB's {@code iterate_upper_bound});
     * null = unbounded. Moving forward stops at it without reading past it; {@link DbIterator#seekToLast()}
     * and {@link DbIterator#seekForPrev} start below it. An empty bound admits no key (none is {@code <} it): every
     * positioning leaves the iterator not valid, as in RocksDB. A bound longer than {@link Db#MAX_KEY_SIZE} is taken
     * too, as in RocksDB: no stored key is that long, so it admits the keys at or below its first {@code MAX} bytes
     * (building a bound by appending 0xFF bytes to a key of {@code MAX} bytes works). Copied.
     */
    public ReadOptions iterateUpperBound(byte[] upperBound) {
        this.iterateUpperBound = upperBound == null ? null : upperBound.clone();
        return this;
    }

    public byte[] iterateUpperBound() {
        return iterateUpperBound == null ? null : iterateUpperBound.clone();
    }

    /**
     * The lower bound itself (the engine's own copy, made by the setter; never modified), or null. It may be longer
     * than {@link Db#MAX_KEY_SIZE}: {@link LongKeys#iteratorBounds} reduces it for the iterator.
     */
    byte[] lowerBound() {
        return iterateLowerBound;
    }

    /** The upper bound itself (as {@link #lowerBound()}), or null. */
    byte[] upperBound() {
        return iterateUpperBound;
    }

    private boolean prefixSameAsStart;

    /**
     * RocksDB's {@code prefix_same_as_start}, for a database with {@link Options#prefixLength} p > 0: an iterator's
     * {@code seek(target)} or {@code seekForPrev(target)} with a target of at least p bytes only visits keys starting
     * with the target's first p bytes, in both directions (it becomes invalid past them), and skips every table whose
     * prefix filter says none is there, without reading it; {@code seekToFirst} and {@code seekToLast} visit only the
     * keys sharing the prefix of the key they land on. Targets shorter than p (the empty target among them: a
     * {@code seek} of it lands on the first key and confines nothing), and databases without a prefix length, iterate
     * over everything in key order, as without this option. RocksDB sets no prefix for a target outside its
     * fixed-length extractor's domain either, but leaves iteration outside a prefix undefined in prefix mode: its
     * iterator may then skip keys of other prefixes, where this one keeps to the key order. Default false.
     */
    public ReadOptions prefixSameAsStart(boolean sameAsStart) {
        this.prefixSameAsStart = sameAsStart;
        return this;
    }

    public boolean prefixSameAsStart() {
        return prefixSameAsStart;
    }
}

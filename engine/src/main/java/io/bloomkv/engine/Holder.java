package io.bloomkv.engine;

/**
 * A box for one value a call hands back beside its result (rocksdbjni's {@code org.rocksdb.Holder}, with the same
 * constructors and accessors, so ported code reads the same): {@link Db#keyMayExist(byte[], Holder)} sets it to the
 * key's value when it found the value in memory, to null otherwise. Not thread-safe.
 *
 * @param <T> the type of the value held
 */
public final class Holder<T> {
    private T value;

    /** A holder of null. */
    public Holder() {}

    /** A holder of {@code value}. */
    public Holder(T value) {
        this.value = value;
    }

    /** The value held (null when none). */
    public T getValue() {
        return value;
    }

    /** Replaces the value held. */
    public void setValue(T value) {
        this.value = value;
    }
}

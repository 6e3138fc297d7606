package io.bloomkv.engine.internal.iterator;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import io.bloomkv.engine.internal.version.FileMetaData;
import java.util.NoSuchElementException;

/**
 * Iterates the tables of one level >= 1 (disjoint, sorted by key) as one sequence, opening one
 * table iterator at a time, in both directions. The caller keeps the tables alive (by holding their Version).
 */
public final class LevelIterator implements InternalIterator {
    private final FileMetaData[] files;
    private final TableReader[] readers;
    private int index = -1;
    private InternalIterator table;
    /** User-key bounds [lower, upper) of a bounded read, or both null: tables are then opened behind their range filters. */
    private final byte[] lower;

    private final byte[] upper;

    private final RangeProbeMemo memo;

    public LevelIterator(FileMetaData[] files, TableReader[] readers) {
        this(files, readers, null, null, null);
    }

    /**
     * A level read within [lower, upper) (user keys; null = open): each table is opened behind its range filter
     * ({@link RangeFilteredIterator}). The level is still walked table by table past the bounds (the bounded
     * {@code DbIterator} stops there): closing it early at the first table wholly outside them left it in a state
     * a later change of direction read keys below the lower bound from (ReverseIterationTest).
     */
    public LevelIterator(FileMetaData[] files, TableReader[] readers, byte[] lower, byte[] upper) {
        this(files, readers, lower, upper, null);
    }

    /** As {@link #LevelIterator(FileMetaData[], TableReader[], byte[], byte[])}, its tables taking answers from memo. */
    public LevelIterator(FileMetaData[] files, TableReader[] readers, byte[] lower, byte[] upper, RangeProbeMemo memo) {
        this.files = files;
        this.readers = readers;
        this.lower = lower;
        this.upper = upper;
        this.memo = memo;
    }

    private boolean bounded() {
        return lower != null || upper != null;
    }

    private void openTable(int i) {
        if (table != null) {
            table.close();
            table = null;
        }
        index = i;
        if (i < files.length) {
            table = bounded() ? new RangeFilteredIterator(readers[i], lower, upper, memo) : readers[i].iterator();
        }
    }

    /** Moves forward over exhausted tables until one has an entry or the level ends. */
    private void skipEmpty() {
        while (table != null && !table.valid()) {
            openTable(index + 1);
            if (table != null) {
                table.seekToFirst();
            }
        }
    }

    @Override
    public boolean valid() {
        return table != null && table.valid();
    }

    @Override
    public void seekToFirst() {
        openTable(0);
        if (table != null) {
            table.seekToFirst();
        }
        skipEmpty();
    }

    @Override
    public void seek(byte[] target) {
        int lo = 0;
        int hi = files.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (InternalKey.compare(files[mid].largest(), target) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        openTable(lo);
        if (table != null) {
            table.seek(target);
        }
        skipEmpty();
    }

    @Override
    public void next() {
        if (!valid()) {
            throw new NoSuchElementException("iterator is not valid");
        }
        table.next();
        skipEmpty();
    }

    @Override
    public void seekToLast() {
        if (files.length == 0) {
            close();
            return;
        }
        openTable(files.length - 1);
        table.seekToLast();
        skipEmptyBackward();
    }

    @Override
    public void prev() {
        if (!valid()) {
            throw new NoSuchElementException("iterator is not valid");
        }
        table.prev();
        skipEmptyBackward();
    }

    /** Moves backward over exhausted tables until one has an entry or the level's start is passed. */
    private void skipEmptyBackward() {
        while (table != null && !table.valid()) {
            if (index == 0) {
                table.close();
                table = null;
                index = -1;
            } else {
                openTable(index - 1);
                table.seekToLast();
            }
        }
    }

    @Override
    public byte[] key() {
        if (!valid()) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return table.key();
    }

    @Override
    public byte[] value() {
        if (!valid()) {
            throw new NoSuchElementException("iterator is not valid");
        }
        return table.value();
    }

    @Override
    public void close() {
        if (table != null) {
            table.close();
            table = null;
        }
        index = files.length;
    }
}

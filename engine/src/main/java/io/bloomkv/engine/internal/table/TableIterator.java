package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.util.Coding;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.NoSuchElementException;

/**
 * Iterates a whole table: the index block selects data blocks, read on demand (through the block
 * cache when there is one), in both directions. Holds a reference to its {@link TableReader} until {@link #close()}.
 */
final class TableIterator implements InternalIterator {
    private final TableReader table;
    private final BlockIterator index;
    /** Sequential reads through a window of the file (compaction), or null: blocks through the block cache. */
    private final Readahead readahead;

    private BlockIterator data;
    private boolean closed;

    TableIterator(TableReader table) {
        this(table, null);
    }

    TableIterator(TableReader table, Readahead readahead) {
        this.table = table;
        this.readahead = readahead;
        this.index = table.indexBlock().iterator(InternalKey.COMPARATOR);
    }

    @Override
    public boolean valid() {
        return !closed && data != null && data.valid();
    }

    @Override
    public void seekToFirst() {
        ensureOpen();
        index.seekToFirst();
        loadBlock();
        if (data != null) {
            data.seekToFirst();
        }
        skipExhaustedBlocks();
    }

    @Override
    public void seek(byte[] target) {
        ensureOpen();
        if (target.length >= InternalKey.TRAILER_SIZE) {
            int userLen = target.length - InternalKey.TRAILER_SIZE;
            table.seekIndex(index, target, userLen, Coding.getFixed64(target, userLen));
        } else {
            index.seek(target);
        }
        loadBlock();
        if (data != null) {
            data.seek(target);
        }
        skipExhaustedBlocks();
    }

    @Override
    public void next() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        data.next();
        skipExhaustedBlocks();
    }

    @Override
    public void seekToLast() {
        ensureOpen();
        index.seekToLast();
        loadBlock();
        if (data != null) {
            data.seekToLast();
        }
        skipExhaustedBlocksBackward();
    }

    @Override
    public void prev() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        data.prev();
        skipExhaustedBlocksBackward();
    }

    @Override
    public byte[] key() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        return data.key();
    }

    @Override
    public byte[] value() {
        if (!valid()) {
            throw new NoSuchElementException();
        }
        return data.value();
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            data = null;
            if (readahead != null) {
                readahead.release();
            }
            table.release();
        }
    }

    private void skipExhaustedBlocks() {
        while (data != null && !data.valid()) {
            index.next();
            loadBlock();
            if (data != null) {
                data.seekToFirst();
            }
        }
    }

    private void skipExhaustedBlocksBackward() {
        while (data != null && !data.valid()) {
            index.prev();
            loadBlock();
            if (data != null) {
                data.seekToLast();
            }
        }
    }

    private void loadBlock() {
        if (!index.valid()) {
            data = null;
            return;
        }
        try {
            BlockHandle h = table.handleOf(index);
            data = (readahead == null ? table.dataBlock(h, false) : table.sequentialDataBlock(h, readahead))
                    .iterator(InternalKey.COMPARATOR);
        } catch (IOException e) {
            data = null;
            throw new UncheckedIOException(e);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("table iterator is closed");
        }
        table.ensureLive();
    }
}

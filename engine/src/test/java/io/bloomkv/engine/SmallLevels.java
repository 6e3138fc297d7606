package io.bloomkv.engine;

/** Options shared by the differential tests that want many small tables and levels from a short history. */
final class SmallLevels {
    private SmallLevels() {}

    /**
     * 4 KiB memtables and tables of 256-byte blocks, levels from 16 KiB growing 4x, compaction from two level-0 tables
     * and writes stalled at six: a few hundred writes make flushes and compactions at every level. Returns a new
     * {@link Options} the caller may change further.
     */
    static Options options() {
        return Options.defaults()
                .writeBufferSize(4 << 10)
                .blockSize(256)
                .targetFileSize(4 << 10)
                .maxBytesForLevelBase(16 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .l0SlowdownWritesTrigger(6)
                .l0StopWritesTrigger(6);
    }
}

package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two databases under one {@link SharedBlockCache}: one bound, separate key spaces, close drops a database's blocks. */
class SharedBlockCacheTest {
    @TempDir
    Path dir;

    @Test
    void twoDatabasesShareOneBoundWithoutMixingTheirBlocks() {
        SharedBlockCache cache = new SharedBlockCache(64 << 10);
        Options o = Options.defaults()
                .blockSize(1024)
                .blockCache(cache)
                .useMmapReads(false); // mapped tables of uncompressed blocks skip the block cache
        try (Db a = Db.open(dir.resolve("a"), o);
                Db b = Db.open(dir.resolve("b"), o.copy())) {
            // Same keys, same file numbers in both databases, different values.
            for (int i = 0; i < 2000; i++) {
                a.put(TestKeys.key(i), TestKeys.bytes("a" + i));
                b.put(TestKeys.key(i), TestKeys.bytes("b" + i));
            }
            a.flush();
            b.flush();
            assertThat(a.tables().get(0).fileNumber())
                    .isEqualTo(b.tables().get(0).fileNumber());
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 2000; i += 7) {
                    assertThat(TestKeys.str(a.get(TestKeys.key(i)))).isEqualTo("a" + i);
                    assertThat(TestKeys.str(b.get(TestKeys.key(i)))).isEqualTo("b" + i);
                }
            }
            assertThat(a.stats().blockCacheHits()).as("the second round hits").isGreaterThan(0);
            assertThat(b.stats().blockCacheHits()).isGreaterThan(0);
            assertThat(cache.usedBytes()).isGreaterThan(0).isLessThanOrEqualTo(cache.capacityBytes());
            long both = cache.blockCount();
            a.close();
            assertThat(cache.blockCount())
                    .as("closing a drops a's blocks only")
                    .isLessThan(both)
                    .isGreaterThan(0);
            assertThat(TestKeys.str(b.get(TestKeys.key(14)))).isEqualTo("b14");
        }
        assertThat(cache.blockCount()).isZero();
        assertThatThrownBy(() -> new SharedBlockCache(0)).isInstanceOf(InvalidArgumentException.class);
    }
}

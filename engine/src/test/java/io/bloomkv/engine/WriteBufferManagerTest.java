package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Several databases under one {@link WriteBufferManager}: memtables freeze early, the charge is released exactly once. */
class WriteBufferManagerTest {
    @TempDir
    Path dir;

    @Test
    void databasesSharingABudgetFlushEarlyAndReleaseTheirCharge() {
        long budget = 256 << 10;
        WriteBufferManager wbm = new WriteBufferManager(budget);
        // Each database alone could hold 4 MiB of memtable: only the shared budget makes them flush.
        Options o = Options.defaults().writeBufferSize(4L << 20).writeBufferManager(wbm);
        List<Db> dbs = new ArrayList<>();
        try {
            for (int d = 0; d < 8; d++) {
                dbs.add(Db.open(dir.resolve("db" + d), o.copy()));
            }
            byte[] value = new byte[200];
            long maxMutable = 0;
            for (int i = 0; i < 20_000; i++) {
                dbs.get(i % dbs.size()).put(TestKeys.key(i), value);
                maxMutable = Math.max(maxMutable, wbm.mutableBytes());
            }
            for (Db db : dbs) {
                db.waitForBackgroundWork();
            }
            long tables = 0;
            for (Db db : dbs) {
                tables += db.stats().tableCount();
            }
            assertThat(tables)
                    .as("~4 MB written into a 256 KiB budget: memtables were flushed")
                    .isGreaterThan(8);
            // A write is charged at the next write of its database: allow one unflushed write per database on top.
            assertThat(maxMutable).isLessThanOrEqualTo(budget + 8 * 4096L);
            assertThat(wbm.usedBytes()).isGreaterThan(0);
            for (int i = 0; i < 20_000; i += 97) {
                assertThat(dbs.get(i % dbs.size()).get(TestKeys.key(i))).isEqualTo(value);
            }
        } finally {
            for (Db db : dbs) {
                db.close();
            }
        }
        assertThat(wbm.usedBytes())
                .as("every closed database released its charge")
                .isZero();
        assertThat(wbm.mutableBytes()).isZero();
    }

    @Test
    void withoutBudgetPressureNothingFlushes() {
        WriteBufferManager wbm = new WriteBufferManager(64L << 20);
        try (Db db = Db.open(dir.resolve("one"), Options.defaults().writeBufferManager(wbm))) {
            for (int i = 0; i < 1000; i++) {
                db.put(TestKeys.key(i), new byte[100]);
            }
            assertThat(db.stats().tableCount()).isZero();
            assertThat(wbm.shouldFlush()).isFalse();
            assertThat(wbm.usedBytes()).isGreaterThan(0);
            db.flush();
            db.put(TestKeys.key(1), new byte[1]);
            assertThat(wbm.usedBytes()).as("the flushed memtable was released").isLessThan(64 << 10);
        }
        assertThat(wbm.usedBytes()).isZero();
        assertThatThrownBy(() -> new WriteBufferManager(0)).isInstanceOf(InvalidArgumentException.class);
    }

    @Test
    void aBudgetHeldByAnIdleDatabaseDoesNotMakeEveryWriteAFlush() {
        long budget = 256 << 10;
        WriteBufferManager wbm = new WriteBufferManager(budget);
        Options o = Options.defaults().writeBufferSize(4L << 20).writeBufferManager(wbm);
        try (Db idleA = Db.open(dir.resolve("idleA"), o);
                Db idleB = Db.open(dir.resolve("idleB"), o.copy());
                Db busy = Db.open(dir.resolve("busy"), o.copy())) {
            // Two databases written, then idle, holding together just under 7/8 of the budget in their memtables.
            byte[] value = new byte[200];
            int i = 0;
            while (wbm.mutableBytes() < budget * 6 / 10) {
                idleA.put(TestKeys.key(i++), value);
            }
            while (wbm.mutableBytes() < budget * 85 / 100) {
                idleB.put(TestKeys.key(i++), value);
            }
            assertThat(wbm.shouldFlush()).isFalse();
            for (int k = 0; k < 2000; k++) {
                busy.put(TestKeys.key(k), new byte[50]);
            }
            busy.waitForBackgroundWork();
            // ~150 KB written past the budget: tables of at least budget / 64 (4 KiB) each, not one per write.
            assertThat(busy.stats().flushes())
                    .isGreaterThan(0)
                    .isLessThanOrEqualTo(2000L * 120 / wbm.minFreezeBytes() + 1);
            assertThat(idleA.stats().flushes() + idleB.stats().flushes())
                    .as("idle databases do not flush")
                    .isZero();
            assertThat(busy.get(TestKeys.key(1999))).hasSize(50);
        }
        assertThat(wbm.usedBytes()).isZero();
    }
}

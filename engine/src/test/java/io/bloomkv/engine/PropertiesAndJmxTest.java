package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Db#property} against {@link Db#stats}, and the {@link DbMXBean} in the platform MBean server. */
class PropertiesAndJmxTest {
    @TempDir
    Path dir;

    private static Options opts() {
        return Options.defaults()
                .writeBufferSize(32 << 10)
                .blockSize(512)
                .autoCompaction(false)
                .syncMode(SyncMode.NONE);
    }

    @Test
    void propertiesAnswerAsStatsAndUnknownNamesAreEmpty() {
        try (Db db = Db.open(dir, opts())) {
            for (int i = 0; i < 2000; i++) {
                db.put(TestKeys.key(i), TestKeys.key(i));
            }
            db.flush();
            for (int i = 0; i < 10; i++) {
                db.put(TestKeys.key(100_000 + i), TestKeys.key(i));
            }
            Stats s = db.stats();
            assertThat(db.property("bloomkv.estimate-num-keys")).hasValue(Long.toString(2010));
            assertThat(db.property("bloomkv.num-files-at-level0")).hasValue(Integer.toString(s.levelTables(0)));
            assertThat(s.levelTables(0)).isPositive();
            assertThat(db.property("bloomkv.num-files-at-level1")).hasValue("0");
            assertThat(db.property("bloomkv.num-files-at-level" + s.numLevels()))
                    .isEmpty();
            assertThat(db.property("bloomkv.num-files-at-levelx")).isEmpty();
            assertThat(db.property("bloomkv.filter-memory")).hasValue(Long.toString(s.filterMemoryBytes()));
            assertThat(s.filterMemoryBytes()).isPositive();
            assertThat(db.property("bloomkv.num-tables-without-filter")).hasValue("0");
            assertThat(db.property("bloomkv.total-sst-files-size")).hasValue(Long.toString(s.tableBytes()));
            assertThat(db.property("bloomkv.background-errors")).hasValue("0");
            assertThat(db.property("bloomkv.background-error")).hasValue("");
            assertThat(db.property("bloomkv.num-levels")).hasValue(Integer.toString(s.numLevels()));
            assertThat(db.property("bloomkv.levelstats").orElseThrow())
                    .startsWith("Level Files")
                    .contains(String.format("%5d %5d", 0, s.levelTables(0)));
            assertThat(db.property("bloomkv.stats").orElseThrow()).contains("filter: checks");
            assertThat(db.property("bloomkv.num-entries-active-mem-table")).hasValue("10");
            assertThat(s.estimateNumKeys()).isEqualTo(2010);
            assertThat(s.activeMemtableEntries()).isEqualTo(10);
            assertThat(s.activeMemtableBytes()).isPositive().isEqualTo(s.memtableBytes()); // nothing frozen
            assertThat(s.backgroundErrors()).isZero();
            assertThat(s.liveVersions()).as("the current Version at least").isPositive();
            assertThat(s.compactionPending()).isFalse(); // autoCompaction(false)
            db.delete(TestKeys.key(3));
            db.delete(TestKeys.key(100_003));
            Stats d = db.stats();
            assertThat(d.memtableDeletes()).isEqualTo(2);
            assertThat(d.activeMemtableDeletes()).isEqualTo(2);
            assertThat(d.estimateNumKeys()).isEqualTo(2010 + 2 - 2 * 2);
            assertThat(db.property("bloomkv.block-cache-capacity"))
                    .hasValue(Long.toString(Options.defaults().blockCacheSize()));
            assertThat(db.property("bloomkv.no-such-property")).isEmpty();
            assertThat(db.property("rocksdb.estimate-num-keys")).isEmpty();
            assertThat(db.property("")).isEmpty();
            assertThatThrownBy(() -> db.property(null)).isInstanceOf(InvalidArgumentException.class);
            for (String name : DbProperties.NAMES) {
                String concrete = name.replace("<N>", "0");
                if (!concrete.equals("bloomkv.block-cache-usage")) {
                    assertThat(db.property(concrete)).as(concrete).isPresent();
                }
            }
        }
    }

    /**
     * With {@code bitsPerKey(0)} every table is read without a filter: {@code bloomkv.num-tables-without-filter} counts
     * them all, and the info log does not warn of what the options asked for (FilterMemoryBudgetTest checks the warning
     * when a budget is the cause).
     */
    @Test
    void tablesWrittenWithoutFiltersAreCountedWithoutAWarning() throws Exception {
        DbLogTest.Recording log = new DbLogTest.Recording();
        try (Db db = Db.open(dir, opts().bitsPerKey(0).listeners(new DbLog(log)))) {
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 100; i++) {
                    db.put(TestKeys.key(100 * round + i), TestKeys.key(i));
                }
                db.flush();
            }
            assertThat(db.stats().tableCount()).isEqualTo(3);
            assertThat(db.property("bloomkv.num-tables-without-filter")).hasValue("3");
        }
        assertThat(log.lines).noneMatch(l -> l.contains("without a filter"));
    }

    /**
     * {@code bloomkv.background-work-paused} and the MBean's {@code BackgroundWorkPaused} show a pause from {@link
     * Db#pauseBackgroundWork} until the continue matching the last of nested pauses; a read-only database, which only
     * counts pauses, shows them too.
     */
    @Test
    void aPauseOfBackgroundWorkShowsInThePropertyAndTheMBean() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = DbJmx.objectName(dir.toString());
        try (Db db = Db.open(dir, opts())) {
            db.put(TestKeys.key(1), TestKeys.key(1));
            assertPaused(db, server, name, false);
            db.pauseBackgroundWork();
            assertPaused(db, server, name, true);
            db.pauseBackgroundWork();
            db.continueBackgroundWork();
            assertPaused(db, server, name, true); // one pause left
            db.continueBackgroundWork();
            assertPaused(db, server, name, false);
            db.flush(); // background work runs again
        }
        Db ro = Db.open(dir, opts().readOnly(true));
        try {
            assertPaused(ro, server, name, false);
            ro.pauseBackgroundWork();
            assertPaused(ro, server, name, true);
            ro.continueBackgroundWork();
            assertPaused(ro, server, name, false);
        } finally {
            ro.close();
        }
    }

    private static void assertPaused(Db db, MBeanServer server, ObjectName name, boolean paused) throws Exception {
        assertThat(db.property("bloomkv.background-work-paused")).hasValue(paused ? "1" : "0");
        assertThat((Boolean) server.getAttribute(name, "BackgroundWorkPaused")).isEqualTo(paused);
    }

    /** Puts, merges and deletions are counted apart: a merge is not a delete (Stats and the MBean). */
    @Test
    void mergesAreCountedApartFromDeletes() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Path p = dir.resolve("counts");
        ObjectName name = new ObjectName("io.bloomkv:type=Db,name=" + ObjectName.quote(p.toString()));
        try (Db db = Db.open(p, opts().mergeOperator(MergeOperators.stringAppend(',')))) {
            db.put(TestKeys.bytes("a"), TestKeys.bytes("1"));
            for (int i = 0; i < 5; i++) {
                db.merge(TestKeys.bytes("a"), TestKeys.bytes("m" + i));
            }
            db.delete(TestKeys.bytes("b"));
            db.write(new WriteBatch()
                    .merge(TestKeys.bytes("c"), TestKeys.bytes("x"))
                    .delete(TestKeys.bytes("d"))
                    .deleteRange(TestKeys.bytes("e"), TestKeys.bytes("f"))
                    .put(TestKeys.bytes("g"), TestKeys.bytes("y")));
            Stats s = db.stats();
            assertThat(s.puts()).isEqualTo(2);
            assertThat(s.merges()).isEqualTo(6);
            assertThat(s.deletes()).as("point and range deletions").isEqualTo(3);
            assertThat((Long) server.getAttribute(name, "Merges")).isEqualTo(6L);
            assertThat((Long) server.getAttribute(name, "Deletes")).isEqualTo(3L);
            assertThat(s.toString()).contains("puts 2, deletes 3, merges 6");
        }
    }

    @Test
    void mbeanIsRegisteredAtOpenAndRemovedAtClose() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Path asPassed = dir.resolve("db");
        ObjectName name = new ObjectName("io.bloomkv:type=Db,name=" + ObjectName.quote(asPassed.toString()));
        assertThat(server.isRegistered(name)).isFalse();
        try (Db db = Db.open(asPassed, opts())) {
            assertThat(server.isRegistered(name)).isTrue();
            for (int i = 0; i < 3000; i++) {
                db.put(TestKeys.key(2 * i), TestKeys.key(i));
            }
            db.flush();
            for (int i = 0; i < 100; i++) {
                db.get(TestKeys.key(2 * i + 1)); // inside the tables' key ranges: the filters answer
            }
            Stats s = db.stats();
            assertThat((Long) server.getAttribute(name, "FilterUseful"))
                    .isEqualTo(s.filterUseful())
                    .isPositive();
            assertThat((Long) server.getAttribute(name, "Puts")).isEqualTo(3000L);
            assertThat((Long) server.getAttribute(name, "FilterMemoryBytes")).isEqualTo(s.filterMemoryBytes());
            assertThat((Integer) server.getAttribute(name, "TablesWithoutFilter"))
                    .isZero();
            assertThat((Long) server.getAttribute(name, "MemtableBytes")).isEqualTo(s.memtableBytes());
            int[] files = (int[]) server.getAttribute(name, "LevelFiles");
            assertThat(files).hasSize(s.numLevels());
            assertThat(files[0]).isEqualTo(s.levelTables(0));
            assertThat((Integer) server.getAttribute(name, "BackgroundErrors")).isZero();
            assertThat((String) server.getAttribute(name, "Directory"))
                    .isEqualTo(db.directory().toString());
            assertThat((String) server.getAttribute(name, "LevelStats")).startsWith("Level Files");
            // a read-only open of the same path in this JVM does not take the name, nor remove it
            Db ro = Db.open(asPassed, opts().readOnly(true));
            assertThat(server.isRegistered(DbJmx.objectName(asPassed.toString(), 2)))
                    .as("it has its own")
                    .isTrue();
            ro.close();
            assertThat(server.isRegistered(DbJmx.objectName(asPassed.toString(), 2)))
                    .isFalse();
            assertThat(server.isRegistered(name)).isTrue();
        }
        assertThat(server.isRegistered(name)).isFalse();
    }

    /**
     * Two databases open at once under one directory string (one path on two in-memory file systems; the same holds
     * for a read-only open beside a writer) each have their own MBean, answering for itself, and each is removed at its
     * close. Before, the second was not registered at all: JMX showed one of the two databases.
     */
    @Test
    void everyOpenDatabaseHasItsOwnMBeanEvenUnderOneDirectoryString() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Path same = Path.of("/jmx-twins");
        ObjectName first = DbJmx.objectName(same.toString(), 1);
        ObjectName second = DbJmx.objectName(same.toString(), 2);
        try (Db a = Db.open(same, opts().fileSystem(new io.bloomkv.engine.fs.InMemoryFileSystem()));
                Db b = Db.open(same, opts().fileSystem(new io.bloomkv.engine.fs.InMemoryFileSystem()))) {
            for (int i = 0; i < 3; i++) {
                a.put(TestKeys.key(i), TestKeys.key(i));
            }
            for (int i = 0; i < 7; i++) {
                b.put(TestKeys.key(i), TestKeys.key(i));
            }
            assertThat((Long) server.getAttribute(first, "Puts")).isEqualTo(3L);
            assertThat((Long) server.getAttribute(second, "Puts")).isEqualTo(7L);
            a.close();
            assertThat(server.isRegistered(first)).isFalse();
            assertThat((Long) server.getAttribute(second, "Puts"))
                    .as("b keeps its own after a closes")
                    .isEqualTo(7L);
            try (Db c = Db.open(same, opts().fileSystem(new io.bloomkv.engine.fs.InMemoryFileSystem()))) {
                c.put(TestKeys.key(0), TestKeys.key(0));
                assertThat((Long) server.getAttribute(first, "Puts"))
                        .as("the freed plain name goes to the next open")
                        .isEqualTo(1L);
            }
        }
        assertThat(server.isRegistered(first)).isFalse();
        assertThat(server.isRegistered(second)).isFalse();
    }

    /**
     * {@code num-entries-imm-mem-tables} counts the frozen memtables' entries only, also while writers fill the active
     * one: with no memtable waiting for flush it is 0 at every read. It was the difference of two reads of the active
     * memtable's count, so a write between them made it negative.
     */
    @Test
    void immutableMemtableEntriesAreNotTakenFromTheActiveCountWhileItGrows() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        try (Db db = Db.open(dir, opts().writeBufferSize(256 << 20))) {
            Thread[] writers = new Thread[2];
            for (int w = 0; w < writers.length; w++) {
                int base = w * 100_000_000;
                writers[w] = new Thread(() -> {
                    for (int i = 0; !stop.get() && i < 500_000; i++) { // far less than the write buffer
                        db.put(TestKeys.key(base + i), TestKeys.key(i));
                    }
                });
                writers[w].start();
            }
            try {
                java.util.Map<String, Integer> seen = new java.util.TreeMap<>();
                long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(3);
                int reads = 0;
                while (System.nanoTime() < deadline && writers[0].isAlive()) {
                    seen.merge(db.property("bloomkv.num-entries-imm-mem-tables").orElseThrow(), 1, Integer::sum);
                    reads++;
                }
                assertThat(reads).isPositive();
                assertThat(db.property("bloomkv.num-immutable-mem-table")).hasValue("0");
                assertThat(seen).as("values read, with their counts").containsOnlyKeys("0");
            } finally {
                stop.set(true);
                for (Thread t : writers) {
                    t.join();
                }
            }
        }
    }

    /** An MBean that refuses to be unregistered. */
    public interface StubbornMBean {
        int getValue();
    }

    /** Implements {@link StubbornMBean}; refuses while {@link #refuse}. */
    public static final class Stubborn implements StubbornMBean, javax.management.MBeanRegistration {
        volatile boolean refuse = true;

        @Override
        public int getValue() {
            return 0;
        }

        @Override
        public ObjectName preRegister(MBeanServer server, ObjectName name) {
            return name;
        }

        @Override
        public void postRegister(Boolean done) {}

        @Override
        public void preDeregister() {
            if (refuse) {
                throw new IllegalStateException("not now");
            }
        }

        @Override
        public void postDeregister() {}
    }

    /**
     * A close whose MBean cannot be unregistered (here another MBean took its name and refuses to go) still closes the
     * database (threads stopped, directory lock released: it opens again) and throws afterwards. Before, close threw
     * before closing anything, leaving the database open and locked.
     */
    @Test
    void aCloseWhoseMBeanCannotBeUnregisteredStillCloses() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Path p = dir.resolve("stubborn");
        ObjectName name = DbJmx.objectName(p.toString(), 1);
        Db db = Db.open(p, opts());
        db.put(TestKeys.key(1), TestKeys.key(1));
        server.unregisterMBean(name);
        Stubborn stubborn = new Stubborn();
        server.registerMBean(stubborn, name);
        try {
            assertThatThrownBy(db::close).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> db.get(TestKeys.key(1))).isInstanceOf(DbClosedException.class);
            try (Db again = Db.open(p, opts())) {
                assertThat(again.get(TestKeys.key(1))).isEqualTo(TestKeys.key(1));
            }
        } finally {
            db.close();
            stubborn.refuse = false;
            server.unregisterMBean(name);
        }
    }
}

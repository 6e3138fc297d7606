package io.bloomkv.engine;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.function.Supplier;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The {@link DbMXBean} of one open database and its registration in the platform MBean server. Registered by
 * {@link Db#open} once the database serves, unregistered by {@link Db#close} (before the database stops, so no
 * JMX read meets a closed database mid-way; a read racing close answers the last stats seen).
 */
final class DbJmx implements DbMXBean {
    /** The domain and type of every bloomkv database's MBean. */
    static final String NAME_PREFIX = "io.bloomkv:type=Db,name=";

    private final Db db;
    private final Supplier<BloomKvException> backgroundError;
    private volatile Stats last = new Stats();

    private DbJmx(Db db, Supplier<BloomKvException> backgroundError) {
        this.db = db;
        this.backgroundError = backgroundError;
    }

    /** The MBean name of a database opened with {@code dirAsPassed}. */
    static ObjectName objectName(String dirAsPassed) {
        try {
            return new ObjectName(NAME_PREFIX + ObjectName.quote(dirAsPassed));
        } catch (JMException e) {
            throw new IllegalStateException("a quoted value always makes a valid ObjectName", e);
        }
    }

    /**
     * The MBean name of the {@code instance}-th database open at once with {@code dirAsPassed}: {@link #objectName}
     * for the first, with {@code ,instance=<n>} added for the others.
     */
    static ObjectName objectName(String dirAsPassed, int instance) {
        if (instance <= 1) {
            return objectName(dirAsPassed);
        }
        try {
            return new ObjectName(NAME_PREFIX + ObjectName.quote(dirAsPassed) + ",instance=" + instance);
        } catch (JMException e) {
            throw new IllegalStateException("a quoted value and a number always make a valid ObjectName", e);
        }
    }

    /**
     * Registers the MBean of {@code db}; the returned handle unregisters it. When the name is taken by another open
     * database (the same path opened read-only beside a writer, or two databases at one path of two
     * {@link io.bloomkv.engine.fs.InMemoryFileSystem}s), the MBean takes the first free {@code instance} number from
     * 2 on ({@link #objectName(String, int)}): every open database has its own.
     */
    static AutoCloseable register(Db db, String dirAsPassed, Supplier<BloomKvException> backgroundError) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        DbJmx bean = new DbJmx(db, backgroundError);
        ObjectName name;
        for (int instance = 1; ; instance++) {
            name = objectName(dirAsPassed, instance);
            try {
                server.registerMBean(bean, name);
                break;
            } catch (InstanceAlreadyExistsException e) {
                // taken by another open database: try the next instance number
            } catch (JMException e) {
                throw new IllegalStateException("cannot register the MBean " + name, e);
            }
        }
        ObjectName registered = name;
        return () -> {
            try {
                server.unregisterMBean(registered);
            } catch (InstanceNotFoundException e) {
                // unregistered by someone else: nothing left to do
            }
        };
    }

    private Stats stats() {
        try {
            Stats s = db.stats();
            last = s;
            return s;
        } catch (DbClosedException e) {
            return last;
        }
    }

    @Override
    public String getDirectory() {
        return db.directory().toString();
    }

    @Override
    public long getFilterChecks() {
        return stats().filterChecks();
    }

    @Override
    public long getFilterUseful() {
        return stats().filterUseful();
    }

    @Override
    public long getFilterPositive() {
        return stats().filterPositive();
    }

    @Override
    public long getFilterTruePositive() {
        return stats().filterTruePositive();
    }

    @Override
    public double getFilterFalsePositiveRate() {
        return stats().measuredFalsePositiveRate();
    }

    @Override
    public long getBlockReads() {
        return stats().blockReads();
    }

    @Override
    public long getBlockReadBytes() {
        return stats().blockReadBytes();
    }

    @Override
    public long getBlockCacheHits() {
        return stats().blockCacheHits();
    }

    @Override
    public long getBlockCacheMisses() {
        return stats().blockCacheMisses();
    }

    @Override
    public long getGets() {
        return stats().gets();
    }

    @Override
    public long getPuts() {
        return stats().puts();
    }

    @Override
    public long getDeletes() {
        return stats().deletes();
    }

    @Override
    public long getMerges() {
        return stats().merges();
    }

    @Override
    public long getWriteStalls() {
        return stats().writeStalls();
    }

    @Override
    public long getWriteStallMicros() {
        return stats().writeStallMicros();
    }

    @Override
    public long getWriteSlowdowns() {
        return stats().writeSlowdowns();
    }

    @Override
    public long getFlushes() {
        return stats().flushes();
    }

    @Override
    public long getCompactions() {
        return stats().compactions();
    }

    @Override
    public long getCompactionBytesRead() {
        return stats().compactionBytesRead();
    }

    @Override
    public long getCompactionBytesWritten() {
        return stats().compactionBytesWritten();
    }

    @Override
    public double getWriteAmplification() {
        return stats().writeAmplification();
    }

    @Override
    public long getMemtableBytes() {
        return stats().memtableBytes();
    }

    @Override
    public long getBlockCacheBytes() {
        return Math.max(0, db.blockCacheUsedBytes());
    }

    @Override
    public long getFilterMemoryBytes() {
        return stats().filterMemoryBytes();
    }

    @Override
    public int getTablesWithoutFilter() {
        return stats().tablesWithoutFilter();
    }

    @Override
    public long getOpenTables() {
        Stats s = stats();
        return s.tablesOpened() - s.tablesClosed();
    }

    @Override
    public long getLastSequence() {
        return stats().lastSequence();
    }

    @Override
    public int[] getLevelFiles() {
        Stats s = stats();
        int[] out = new int[s.numLevels()];
        Arrays.setAll(out, s::levelTables);
        return out;
    }

    @Override
    public long[] getLevelBytes() {
        Stats s = stats();
        long[] out = new long[s.numLevels()];
        Arrays.setAll(out, s::levelBytes);
        return out;
    }

    @Override
    public String getLevelStats() {
        return DbProperties.levelStats(stats());
    }

    @Override
    public int getBackgroundErrors() {
        return backgroundError.get() == null ? 0 : 1;
    }

    @Override
    public boolean isBackgroundWorkPaused() {
        return db.backgroundWorkPaused(); // reads the pause counts, also after close
    }

    @Override
    public String getBackgroundError() {
        BloomKvException e = backgroundError.get();
        return e == null ? "" : e.toString();
    }
}

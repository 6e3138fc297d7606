package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** The info log ({@link DbLog}): flushes and compactions at INFO, stalls at WARN, background errors at ERROR. */
class DbLogTest {
    @TempDir
    Path dir;

    /** A logger that keeps "LEVEL message" lines, every level enabled (subclasses turn levels off). */
    static class Recording extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(
                Level level, Marker marker, String pattern, Object[] args, Throwable t) {
            lines.add(level + " " + MessageFormatter.basicArrayFormat(pattern, args) + (t == null ? "" : " " + t));
        }

        @Override
        public boolean isTraceEnabled() {
            return true;
        }

        @Override
        public boolean isDebugEnabled() {
            return true;
        }

        @Override
        public boolean isInfoEnabled() {
            return true;
        }

        @Override
        public boolean isWarnEnabled() {
            return true;
        }

        @Override
        public boolean isErrorEnabled() {
            return true;
        }
    }

    @Test
    void flushesCompactionsStallsAndErrorsAreLoggedAtTheirLevels() {
        Recording rec = new Recording();
        DbLog log = new DbLog(rec);
        Options opts = Options.defaults()
                .writeBufferSize(8 << 10)
                .blockSize(512)
                .targetFileSize(8 << 10)
                .maxBytesForLevelBase(32 << 10)
                .levelSizeMultiplier(4)
                .l0CompactionTrigger(2)
                .syncMode(SyncMode.NONE)
                .listeners(log);
        try (Db db = Db.open(dir, opts)) {
            for (int i = 0; i < 4000; i++) {
                db.put(TestKeys.key(i % 1000), TestKeys.key(i));
            }
            db.flush();
            db.waitForBackgroundWork();
        }
        assertThat(rec.lines).anyMatch(l -> l.startsWith("INFO [" + dir.toAbsolutePath() + "] flush begun"));
        assertThat(rec.lines)
                .anyMatch(l -> l.startsWith("INFO ") && l.contains("flush finished") && l.contains("-> table #"));
        assertThat(rec.lines).anyMatch(l -> l.startsWith("INFO ") && l.contains("compaction finished"));
        assertThat(rec.lines).anyMatch(l -> l.startsWith("DEBUG table file deleted"));

        log.onWriteStallChanged(new EventListener.WriteStallInfo(dir, true, 36, 1));
        log.onWriteStallChanged(new EventListener.WriteStallInfo(dir, false, 3, 0));
        boolean ignored = log.onBackgroundError(new EventListener.BackgroundErrorInfo(
                dir, "compaction", new BloomKvIOException("disk gone", new java.io.IOException("EIO")), true));
        assertThat(ignored).as("the log never ignores an error").isFalse();
        assertThat(rec.lines)
                .contains(
                        "WARN [" + dir + "] stalling writes: 36 level-0 tables, 1 memtables waiting for flush",
                        "INFO [" + dir + "] writes resumed");
        assertThat(rec.lines)
                .anyMatch(l -> l.startsWith("ERROR [" + dir + "] background compaction failed (recoverable)")
                        && l.contains("disk gone"));
        assertThat(DbLog.withLog(List.of()))
                .as("no binding in the tests: SLF4J's no-op logger, no log listener")
                .hasSize(DbLog.LOG.isErrorEnabled() ? 1 : 0);
    }

    /** A logger set to WARN (a common production level) still gets the stalls and the background errors. */
    @Test
    void aLoggerAtWarnStillGetsStallsAndErrors() {
        Recording warnOnly = new Recording() {
            private static final long serialVersionUID = 1L;

            @Override
            public boolean isTraceEnabled() {
                return false;
            }

            @Override
            public boolean isDebugEnabled() {
                return false;
            }

            @Override
            public boolean isInfoEnabled() {
                return false;
            }
        };
        List<EventListener> listeners = DbLog.withLog(List.of(), warnOnly);
        assertThat(listeners).hasSize(1);
        EventListener log = listeners.get(0);
        log.onFlushBegin(new EventListener.FlushInfo(dir, 7, 10, 1000));
        log.onWriteStallChanged(new EventListener.WriteStallInfo(dir, true, 36, 1));
        log.onBackgroundError(new EventListener.BackgroundErrorInfo(
                dir, "flush", new BloomKvIOException("disk gone", new java.io.IOException("EIO")), false));
        assertThat(warnOnly.lines).hasSize(2);
        assertThat(warnOnly.lines.get(0)).startsWith("WARN [" + dir + "] stalling writes");
        assertThat(warnOnly.lines.get(1)).startsWith("ERROR [" + dir + "] background flush failed, writes stopped");

        Recording off = new Recording() {
            private static final long serialVersionUID = 1L;

            @Override
            public boolean isErrorEnabled() {
                return false;
            }
        };
        assertThat(DbLog.withLog(List.of(), off))
                .as("a logger that is off gets no listener")
                .isEmpty();
    }
}

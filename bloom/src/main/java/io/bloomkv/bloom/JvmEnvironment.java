package io.bloomkv.bloom;

import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.Charset;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Prepares the JVM for the libraries bloomkv stands on (Chronicle Bytes, Chronicle's posix calls, XXH3 from
 * zero-allocation-hashing) so that a program embedding bloomkv with no JVM flags prints at most one line, and with
 * the flags nothing. Every bloomkv class that touches those libraries calls {@link #ensureInitialized()} before its
 * first use; an application may call it itself to get the notice at start-up rather than at the first open.
 *
 * <p>What each step answers, and what the flags change (the flags are the {@code chronicle.jvm.flags} of the build,
 * see the user guide's "Embedding" section):
 * <ul>
 *   <li>Chronicle Core initialises a reflection-based buffer cleaner that logs "Make sure you have set the command
 *       line option ... --add-exports java.base/jdk.internal.ref" through {@code java.util.logging} when the export is
 *       missing, although it then picks the {@code Unsafe.invokeCleaner} one, which needs no flag. Where the export is
 *       missing and the application has not configured that logger, its level is set to {@code SEVERE}: the flag
 *       changes nothing for bloomkv.</li>
 *   <li>Chronicle Core prints "Unable to determine max direct memory" to {@code System.err} when
 *       {@code jdk.internal.misc} is not open. That value only picks Chronicle's string fast paths, which bloomkv does
 *       not use: the holder is initialised here once with that one line dropped (everything else written to
 *       {@code System.err} meanwhile goes through).</li>
 *   <li>Java 24 and later (JEP 498) print a four-line notice the first time any code calls a memory-access method of
 *       {@code sun.misc.Unsafe}, unless the JVM runs with {@code --sun-misc-unsafe-memory-access=allow}. Chronicle
 *       Bytes, its posix calls (jffi) and the XXH3 hash all call them; there is no path around it while filters live
 *       in Chronicle stores. The JDK prints that notice once per JVM, for whichever caller comes first; where the
 *       option is left at its default ({@code warn}) and nothing has triggered it yet, bloomkv marks it as given
 *       ({@code sun.misc} is an open package of {@code jdk.unsupported}) and prints its own one line instead, naming
 *       the flag. With {@code debug} or {@code deny} nothing is changed.</li>
 *   <li>Java 24 and later (JEP 472) print a four-line notice at the first JNI library load unless native access is
 *       enabled ({@code --enable-native-access=ALL-UNNAMED}, or the runnable jars' {@code Enable-Native-Access}
 *       manifest entry). Without it bloomkv loads no native library of its own accord: Chronicle's posix calls are
 *       replaced by its no-op provider, so filter bodies come from {@code malloc} on 4 KiB pages instead of the huge
 *       page arena; tables are read with {@code pread} instead of through mappings (the engine's attempt to map each
 *       table file fails with an {@link java.io.IOException} naming the flag, and it reads that table with
 *       {@code pread} instead: opens and reads succeed); the write-ahead log is written with {@code write(2)} instead
 *       of through a mapping; and LZ4 uses its pure-Java codec (the same format). ZSTD, when chosen, still loads its
 *       JNI library.</li>
 * </ul>
 *
 * <p>The one line goes to {@code System.err}, starts with {@code "bloomkv:"}, and is printed at most once per JVM;
 * the system property {@value #NOTICE_PROPERTY}{@code =false} turns it off (the command line does, since a
 * command-line tool prints only its answer). Chronicle's usage analytics are off unless the application set
 * {@code chronicle.analytics.disable} itself.
 */
public final class JvmEnvironment {
    /** System property: {@code false} suppresses the one-line notice. */
    public static final String NOTICE_PROPERTY = "bloomkv.jvm.notice";

    private static final String CLEANER_LOGGER =
            "net.openhft.chronicle.core.internal.cleaner.ReflectionBasedByteBufferCleanerService";
    private static final String MAX_MEMORY_LINE =
            "net.openhft.chronicle.core.Jvm: Unable to determine max direct memory";

    /** Held so that java.util.logging keeps the level set on it (it holds loggers weakly). */
    @SuppressWarnings("unused")
    private static Logger quietCleanerLogger;

    private static boolean nativeAccess = true;
    private static String notice;
    private static boolean initialized;

    private JvmEnvironment() {}

    /**
     * Runs the steps of the class comment once per JVM (later calls return at once). Must run before the first
     * Chronicle, posix or XXH3 class is initialised to have its full effect; bloomkv's own classes see to that.
     */
    public static synchronized void ensureInitialized() {
        if (initialized) {
            return;
        }
        initialized = true;
        if (System.getProperty("chronicle.analytics.disable") == null) {
            System.setProperty("chronicle.analytics.disable", "true");
        }
        Module self = JvmEnvironment.class.getModule();
        Module base = Object.class.getModule();
        int feature = Runtime.version().feature();
        StringBuilder what = new StringBuilder();
        if (feature >= 24 && takeOverUnsafeNotice()) {
            what.append("Chronicle Bytes and the XXH3 hash use sun.misc.Unsafe (JEP 498)");
        }
        if (feature >= 24 && !nativeAccessEnabled(self)) {
            nativeAccess = false;
            usePosixWithoutNativeCode();
            if (what.length() > 0) {
                what.append("; ");
            }
            what.append("native access is off, so filters use 4 KiB pages and mmap reads are unavailable");
        }
        if (!base.isExported("jdk.internal.ref", self)) {
            Logger cleaner = Logger.getLogger(CLEANER_LOGGER);
            if (cleaner.getLevel() == null) {
                cleaner.setLevel(Level.SEVERE);
                quietCleanerLogger = cleaner;
            }
        }
        if (!base.isOpen("jdk.internal.misc", self)) {
            initMaxDirectMemoryQuietly();
        }
        if (what.length() > 0) {
            notice = "bloomkv: " + what + " (add --sun-misc-unsafe-memory-access=allow"
                    + " --enable-native-access=ALL-UNNAMED to the JVM flags for no notice)";
            if (!"false".equalsIgnoreCase(System.getProperty(NOTICE_PROPERTY))) {
                System.err.println(notice);
            }
        }
    }

    /**
     * Whether bloomkv may load native code (posix calls for huge pages and mmap reads, LZ4's JNI codec) without the
     * JDK printing its native-access notice: always on Java 17 to 23; on 24 and later only with native access enabled.
     */
    public static synchronized boolean nativeAccessEnabled() {
        ensureInitialized();
        return nativeAccess;
    }

    /** The one-line notice printed (or suppressed) at initialisation, or null when the JVM has every flag. */
    public static synchronized String notice() {
        ensureInitialized();
        return notice;
    }

    /** Module.isNativeAccessEnabled() (Java 22+), called reflectively: the code compiles for Java 17. */
    private static boolean nativeAccessEnabled(Module self) {
        try {
            Method m = Module.class.getMethod("isNativeAccessEnabled");
            return (Boolean) m.invoke(self);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return true;
        }
    }

    /**
     * Marks the JDK's once-per-JVM sun.misc.Unsafe notice as given, if the option is at its default and the notice
     * has not been printed yet. Returns whether bloomkv took it over (and so owes the user its one line).
     */
    private static boolean takeOverUnsafeNotice() {
        String option = System.getProperty("sun.misc.unsafe.memory.access");
        if (option != null && !option.equals("warn")) {
            return false;
        }
        try {
            Field warned = Class.forName("sun.misc.Unsafe").getDeclaredField("memoryAccessWarned");
            warned.setAccessible(true);
            if (warned.getBoolean(null)) {
                return false; // another library came first: the JDK has printed its notice already
            }
            warned.setBoolean(null, true);
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false; // a JDK without that field: its own notice stands
        }
    }

    /**
     * Selects Chronicle's no-op posix provider before Chronicle Core's static initialiser loads the JNR one (which
     * loads jffi through JNI). Only where native access is off; a provider already loaded is kept.
     */
    private static void usePosixWithoutNativeCode() {
        try {
            if (net.openhft.posix.internal.PosixAPIHolder.POSIX_API == null) {
                net.openhft.posix.internal.PosixAPIHolder.useNoOpPosixApi();
            }
        } catch (LinkageError e) {
            // posix not on the class path: nothing will load jffi either
        }
    }

    /** Initialises Chronicle's max-direct-memory holder with its "Unable to determine" line dropped. */
    private static void initMaxDirectMemoryQuietly() {
        PrintStream original = System.err;
        PrintStream filter = new PrintStream(new LineFilter(original), true, Charset.defaultCharset());
        System.setErr(filter);
        try {
            Class.forName(
                    "net.openhft.chronicle.core.Jvm$MaxMemoryHolder", true, JvmEnvironment.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            // Chronicle Core changed or is absent: its own message, if any, stands
        } finally {
            filter.flush();
            if (System.err == filter) {
                System.setErr(original);
            }
        }
    }

    /** Passes whole lines to {@code out}, except Chronicle's max-direct-memory line. */
    private static final class LineFilter extends OutputStream {
        private final PrintStream out;
        private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();

        LineFilter(PrintStream out) {
            this.out = out;
        }

        @Override
        public synchronized void write(int b) {
            line.write(b);
            if (b == '\n') {
                emit();
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        @Override
        public synchronized void flush() {
            emit();
            out.flush();
        }

        private void emit() {
            if (line.size() == 0) {
                return;
            }
            String s = line.toString(Charset.defaultCharset());
            if (!s.startsWith(MAX_MEMORY_LINE)) {
                out.write(line.toByteArray(), 0, line.size());
            }
            line.reset();
        }
    }
}

package io.bloomkv.tools;

import io.bloomkv.bloom.JvmEnvironment;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The {@code bloomkv} command: operate a database, inspect tables and filters, size a filter. The
 * CLI depends on the engine only (no RocksDB); when the bench harness is on the class path its
 * command ({@code io.bloomkv.bench.BenchCommand}) is mounted as {@code bloomkv bench}. Every failure is
 * one line on stderr and an exit code from {@link ExitCodes}.
 */
@Command(
        name = "bloomkv",
        mixinStandardHelpOptions = true,
        versionProvider = BloomKvCli.Version.class,
        description = "An embeddable LSM key-value store whose SSTables carry off-heap Bloom filters.",
        subcommands = {
            GetCommand.class,
            PutCommand.class,
            DeleteCommand.class,
            ScanCommand.class,
            SstCommand.class,
            DbCommand.class,
            BloomCommand.class,
            StressCommand.class,
            CrashTestCommand.class,
            CheckpointCommand.class,
            IngestCommand.class,
            BackupCommand.class,
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success",
            "1:get: key not found; bench, stress, crashtest: wrong answers or lost writes",
            "2:bad arguments",
            "3:missing path, not a database, I/O error",
            "4:corruption (bad checksum, magic or format)",
            "5:database locked by another process",
            "70:internal error (see --verbose)",
        })
public final class BloomKvCli implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(
            names = ErrorHandler.VERBOSE,
            scope = ScopeType.INHERIT,
            description = "On failure, print the stack trace after the error line.")
    boolean verbose;

    /** Runs the command line and exits with its exit code. */
    public static void main(String[] args) {
        System.setProperty("chronicle.analytics.disable", "true");
        // No SLF4J binding is shipped: keep its "no providers" notice off stderr, which carries only errors (and the
        // progress of the long commands, see Progress).
        System.setProperty("slf4j.internal.verbosity", "ERROR");
        // A command prints only its answer: no bloomkv notice about missing JVM flags (see JvmEnvironment).
        System.setProperty(JvmEnvironment.NOTICE_PROPERTY, "false");
        // The bench draws its PNG charts (XChart) without a display.
        System.setProperty("java.awt.headless", "true");
        System.exit(newCommandLine().execute(args));
    }

    /** A fully configured command line: subcommands, error handling, exit codes. */
    public static CommandLine newCommandLine() {
        return newCommandLine(CommandLine.defaultFactory());
    }

    /** {@link #newCommandLine()} whose commands and mixins {@code factory} creates (tests use it to watch them). */
    static CommandLine newCommandLine(CommandLine.IFactory factory) {
        return newCommandLine(factory, benchCommandIfPresent());
    }

    /**
     * {@link #newCommandLine(CommandLine.IFactory)} with {@code bench} as the bench command; null (the bench jar is not
     * on the class path) mounts {@link BenchNotInJar}, which says where the bench is.
     */
    static CommandLine newCommandLine(CommandLine.IFactory factory, Object bench) {
        ErrorHandler handler = new ErrorHandler();
        CommandLine cl = new CommandLine(new BloomKvCli(), factory);
        // The bench harness, mounted as is: `bloomkv bench` == `java -jar bloomkv-bench.jar`; without it, a command
        // that names the launcher and the bench jar rather than "Unmatched arguments".
        cl.addSubcommand("bench", bench != null ? bench : new BenchNotInJar());
        cl.setExecutionExceptionHandler(handler);
        cl.setParameterExceptionHandler(handler);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setUsageHelpAutoWidth(true);
        return cl;
    }

    /** Class of the bench's picocli command, mounted only when the bench jar is on the class path. */
    static final String BENCH_COMMAND = "io.bloomkv.bench.BenchCommand";

    /** A new bench command when the bench harness is on the class path, else null. */
    static Object benchCommandIfPresent() {
        return commandIfPresent(BENCH_COMMAND);
    }

    /** A new instance of the command class {@code className} when it is on the class path, else null. */
    static Object commandIfPresent(String className) {
        Class<?> type;
        try {
            type = Class.forName(className, true, BloomKvCli.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return null;
        }
        try {
            return type.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create " + className, e);
        }
    }

    /** {@code bloomkv} with no subcommand: print the usage to stderr, exit {@link ExitCodes#USAGE}. */
    @Override
    public Integer call() {
        spec.commandLine().getErr().println("bloomkv: missing command");
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    /**
     * {@code bloomkv bench} when the bench harness is not on the class path ({@code java -jar bloomkv.jar}, which holds
     * no RocksDB): exit code 2 naming the launcher and the bench jar, whatever the arguments.
     */
    @Command(
            name = "bench",
            description =
                    "Run the bench harness: 'tools/bloomkv bench' (bench/target/bloomkv-bench.jar; not in this jar).")
    static final class BenchNotInJar implements Callable<Integer> {
        @CommandLine.Unmatched
        java.util.List<String> arguments;

        @Override
        public Integer call() {
            throw new CliException(
                    ExitCodes.USAGE,
                    "the bench harness is not in this jar: run 'tools/bloomkv bench ...' (it runs"
                            + " bench/target/bloomkv-bench.jar, built by mvn package) or 'java -jar"
                            + " bench/target/bloomkv-bench.jar ...'");
        }
    }

    /** Reads the version that Maven wrote into {@code bloomkv-version.properties}. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties p = new Properties();
            try (InputStream in = BloomKvCli.class.getResourceAsStream("/bloomkv-version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            }
            return new String[] {
                "bloomkv " + p.getProperty("version", "unknown"),
                "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")",
            };
        }
    }
}

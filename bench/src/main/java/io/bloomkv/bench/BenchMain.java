package io.bloomkv.bench;

import io.bloomkv.bench.jmh.JmhMain;
import io.bloomkv.bench.kafka.KafkaStreamsBench;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import picocli.CommandLine;

/**
 * The bench jar's main: {@code java -jar bloomkv-bench.jar [bench flags]} runs {@link BenchCommand}
 * (no flags: the embedded default); {@code java -jar bloomkv-bench.jar jmh [JMH args]} runs the JMH
 * suite with the Chronicle JVM flags passed to its forks; {@code java -jar bloomkv-bench.jar kafka-streams [flags]}
 * runs {@link KafkaStreamsBench}; {@code scale-chart OUT.png results.json...} draws ops/s and write
 * amplification against key count from several runs ({@link io.bloomkv.bench.report.ScaleChart}); {@code range-fpr}
 * measures range filters against their bound ({@link io.bloomkv.bench.range.RangeFprSweep}); {@code rangeseek} runs
 * the seekempty / seekshort workloads ({@link io.bloomkv.bench.range.RangeSeekBench}); {@code cpu-cost
 * [bench flags]} prints CPU time and allocation per put and get and background CPU per table byte written
 * ({@link io.bloomkv.bench.cpu.CpuCost}). {@link BenchCommand}'s help lists these names in its footer: a new one goes
 * there too.
 */
public final class BenchMain {
    private BenchMain() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("chronicle.analytics.disable", "true");
        System.setProperty("java.awt.headless", "true");
        // progressbar's SLF4J has no provider in this jar: keep its start-up notice off the console
        System.setProperty("slf4j.internal.verbosity", "ERROR");
        if (args.length > 0 && args[0].equals("scale-chart")) {
            io.bloomkv.bench.report.ScaleChart.main(java.util.Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("range-fpr")) {
            io.bloomkv.bench.range.RangeFprSweep.main(java.util.Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("rangeseek")) {
            io.bloomkv.bench.range.RangeSeekBench.main(java.util.Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("cpu-cost")) {
            System.exit(cpuCost(
                    Arrays.copyOfRange(args, 1, args.length),
                    new PrintWriter(System.out, true),
                    new PrintWriter(System.err, true)));
        }
        if (args.length > 0 && args[0].equals("jmh")) {
            String[] rest = new String[args.length - 1];
            System.arraycopy(args, 1, rest, 0, rest.length);
            JmhMain.main(rest);
            return;
        }
        if (args.length > 0 && args[0].equals("kafka-streams")) {
            String[] rest = Arrays.copyOfRange(args, 1, args.length);
            System.exit(new CommandLine(new KafkaStreamsBench()).execute(rest));
        }
        int exit = new CommandLine(new BenchCommand()).execute(args);
        System.exit(exit);
    }

    /**
     * {@code cpu-cost [bench flags]}: the exit code. A bad flag is a usage error as in the bench (its message and the
     * usage on {@code err}, exit code 2, no stack trace); {@code --help} prints the usage and measures nothing.
     */
    static int cpuCost(String[] args, PrintWriter out, PrintWriter err) throws IOException {
        BenchCommand cmd = new BenchCommand();
        CommandLine cl = new CommandLine(cmd);
        cl.setOut(out);
        cl.setErr(err);
        try {
            cl.parseArgs(args);
            if (cl.isUsageHelpRequested() || cl.isVersionHelpRequested()) {
                cl.usage(out);
                return 0;
            }
            cmd.config(Path.of(".")); // every flag checked before anything is created
        } catch (CommandLine.ParameterException e) {
            err.println(e.getMessage());
            if (!CommandLine.UnmatchedArgumentException.printSuggestions(e, err)) {
                cl.usage(err);
            }
            return cl.getCommandSpec().exitCodeOnInvalidInput();
        }
        Path work = Files.createTempDirectory("bloomkv-cpu-cost");
        try {
            io.bloomkv.bench.cpu.CpuCost.run(cmd.config(work), out);
        } finally {
            Files.deleteIfExists(work);
        }
        return 0;
    }
}

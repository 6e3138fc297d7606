package io.bloomkv.bench.jmh;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * {@code java -jar bloomkv-bench.jar jmh [JMH args]}: JMH's own command line, plus the Chronicle
 * JVM flags appended to every fork's JVM arguments. The flags come from a resource Maven filters
 * from the parent pom's {@code chronicle.jvm.flags} property (the one place they are written).
 */
public final class JmhMain {
    /** Classpath resource holding {@code chronicle.jvm.flags=...}. */
    public static final String FLAGS_RESOURCE = "/io/bloomkv/bench/jvm.properties";

    private JmhMain() {}

    /** The Chronicle JVM flags, split on whitespace. @throws IllegalStateException if the resource is missing or unfiltered */
    public static List<String> chronicleFlags() {
        Properties p = new Properties();
        try (InputStream in = JmhMain.class.getResourceAsStream(FLAGS_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + FLAGS_RESOURCE);
            }
            p.load(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + FLAGS_RESOURCE, e);
        }
        String flags = p.getProperty("chronicle.jvm.flags", "").trim();
        if (flags.isEmpty() || flags.contains("${")) {
            throw new IllegalStateException(FLAGS_RESOURCE + " was not filtered by Maven: '" + flags + "'");
        }
        return Arrays.asList(flags.split("\\s+"));
    }

    public static void main(String[] args) throws Exception {
        CommandLineOptions cli;
        try {
            cli = new CommandLineOptions(args);
        } catch (CommandLineOptionException e) {
            System.err.println("jmh: " + e.getMessage());
            System.exit(1);
            return;
        }
        if (cli.shouldHelp()
                || cli.shouldList()
                || cli.shouldListWithParams()
                || cli.shouldListProfilers()
                || cli.shouldListResultFormats()) {
            org.openjdk.jmh.Main.main(args);
            return;
        }
        List<String> append = new ArrayList<>(chronicleFlags());
        append.add("-Dslf4j.internal.verbosity=ERROR"); // progressbar's SLF4J has no provider: no start-up notice
        if (cli.getJvmArgsAppend().hasValue()) {
            append.addAll(cli.getJvmArgsAppend().get());
        }
        ChainedOptionsBuilder b = new OptionsBuilder().parent(cli).jvmArgsAppend(append.toArray(new String[0]));
        new Runner(b.build()).run();
    }
}

package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.inspect.OpenResources;
import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * Runs the {@code bloomkv} command line in-process and captures what it prints. Every run must give
 * back the tables (and their off-heap filters) it opened: checked with the inspect API's OpenResources counters.
 */
final class Cli {
    /** The outcome of one run. */
    record Result(int exitCode, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
        }
    }

    private Cli() {}

    static Result run(String... args) {
        return run(CommandLine.defaultFactory(), args);
    }

    /** {@link #run(String...)} with the commands and their mixins created by {@code factory}. */
    static Result run(CommandLine.IFactory factory, String... args) {
        CommandLine cl = BloomKvCli.newCommandLine(factory);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        long tablesBefore = OpenResources.tables();
        long filterBytesBefore = OpenResources.filterBytes();
        int code = cl.execute(args);
        Result result = new Result(code, out.toString(), err.toString());
        assertThat(OpenResources.tables())
                .as("tables left open by " + String.join(" ", args) + "\n" + result)
                .isEqualTo(tablesBefore);
        assertThat(OpenResources.filterBytes())
                .as("filter bytes left by " + String.join(" ", args))
                .isEqualTo(filterBytesBefore);
        return result;
    }
}

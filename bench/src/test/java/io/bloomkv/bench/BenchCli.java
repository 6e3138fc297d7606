package io.bloomkv.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs the bench command line in-process, as the tests do. */
final class BenchCli {
    private BenchCli() {}

    /** Runs {@code bench args}, asserts it exited with 0 (showing both streams if not), and returns its stdout. */
    static String runOk(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new BenchCommand());
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int exit = cl.execute(args);
        assertThat(exit).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();
        return out.toString();
    }
}

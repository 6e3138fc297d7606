package io.bloomkv.tools;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs the {@code bloomkv} command line in-process and captures what it prints. */
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
        CommandLine cl = BloomKvCli.newCommandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Result(code, out.toString(), err.toString());
    }
}

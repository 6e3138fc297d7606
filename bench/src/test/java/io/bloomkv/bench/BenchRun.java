package io.bloomkv.bench;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/** One in-process run of the bench command for tests: its exit code and what it wrote to out and err. */
record BenchRun(int exit, String out, String err) {
    /** Runs the bench with {@code args} and then {@code --db-dir} and {@code --report-dir} under {@code tmp}. */
    static BenchRun of(Path tmp, List<String> args) {
        List<String> all = new ArrayList<>(args);
        all.addAll(List.of(
                "--db-dir",
                tmp.resolve("db").toString(),
                "--report-dir",
                tmp.resolve("report").toString()));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new BenchCommand());
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int exit = cl.execute(all.toArray(String[]::new));
        return new BenchRun(exit, out.toString(), err.toString());
    }
}

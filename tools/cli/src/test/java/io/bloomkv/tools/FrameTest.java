package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.DbLockedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The frame of the command line: help, version, usage errors, exit codes, --verbose. */
class FrameTest {

    @Test
    void helpListsEveryCommandAndExitsZero() {
        Cli.Result r = Cli.run("--help");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("get", "put", "delete", "scan", "sst", "db", "bloom", "bench", "Exit codes:");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void versionNamesTheProject() {
        Cli.Result r = Cli.run("--version");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).startsWith("bloomkv ");
    }

    @Test
    void noCommandIsAUsageError() {
        Cli.Result r = Cli.run();
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).startsWith("bloomkv: missing command");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void unknownOptionIsOneLineAndExitTwo() {
        Cli.Result r = Cli.run("bloom", "calc", "--keys", "10", "--fpp", "0.01", "--bogus");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err().lines()).hasSize(1);
        assertThat(r.err())
                .startsWith("bloomkv bloom calc: Unknown option: '--bogus'")
                .contains("--help");
        assertThat(r.out()).isEmpty();
    }

    /** A command group without its subcommand is a usage error named in one line, the same for every group. */
    @Test
    void groupWithoutSubcommandIsOneLineAndExitTwo() {
        for (String group : new String[] {"sst", "db", "bloom", "backup"}) {
            Cli.Result r = Cli.run(group);
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err()).as(r.toString()).startsWith("bloomkv " + group + ": Missing required subcommand");
            assertThat(r.err().lines()).as(r.toString()).hasSize(1);
            assertThat(r.out()).isEmpty();
        }
    }

    @Test
    void unknownCommandIsAUsageError() {
        Cli.Result r = Cli.run("frobnicate");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err().lines()).hasSize(1);
        assertThat(r.err()).contains("frobnicate");
    }

    @Test
    void badNumberIsAUsageError() {
        Cli.Result r = Cli.run("bloom", "calc", "--keys", "many", "--fpp", "0.01");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("many").doesNotContain("Exception");
    }

    @Test
    void verboseAddsTheStackTraceOfAUsageError() {
        Cli.Result r = Cli.run("bloom", "calc", "--keys", "10", "--fpp", "2", "--verbose");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).startsWith("bloomkv bloom calc: --fpp must be in (0, 1): 2.0");
        assertThat(r.err()).contains("ParameterException", "\tat ");
    }

    /**
     * A merge refused for want of an operator names the missing option; an operator that failed on the stored operands
     * (a custom or wrong one) is named as likely not the database's, not as a missing option.
     */
    @Test
    void mergeFailuresSayWhetherTheOperatorIsMissingOrWrong() {
        ErrorHandler.Classified missing = ErrorHandler.classify(new io.bloomkv.engine.MergeOperatorException(
                "database /x holds merge operands: open it with Options.mergeOperator"));
        assertThat(missing.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.message()).endsWith("(give --merge-operator)");
        ErrorHandler.Classified wrong = ErrorHandler.classify(new io.bloomkv.engine.MergeOperatorException(
                "merge operator uint64add failed", new IllegalArgumentException("operand of 3 bytes")));
        assertThat(wrong.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(wrong.message())
                .contains("the operator the database was written with")
                .doesNotContain("give --merge-operator");
    }

    @Test
    void exceptionsMapToTheirExitCodes() {
        Path f = Path.of("/x/000007.sst");
        assertThat(ErrorHandler.classify(new CorruptionException("bad block checksum", f, 4096)))
                .isEqualTo(new ErrorHandler.Classified(
                        ExitCodes.CORRUPTION, "corruption: bad block checksum (file /x/000007.sst, offset 4096)"));
        assertThat(ErrorHandler.classify(new DbLockedException(Path.of("/x"))).exitCode())
                .isEqualTo(ExitCodes.LOCKED);
        assertThat(ErrorHandler.classify(new UncheckedIOException(new NoSuchFileException("/nope"))))
                .isEqualTo(new ErrorHandler.Classified(ExitCodes.IO_ERROR, "no such file or directory: /nope"));
        assertThat(ErrorHandler.classify(new IOException("disk on fire")).exitCode())
                .isEqualTo(ExitCodes.IO_ERROR);
        assertThat(ErrorHandler.classify(new CliException(ExitCodes.NOT_FOUND, "x"))
                        .exitCode())
                .isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(ErrorHandler.classify(new IllegalStateException("bug")))
                .isEqualTo(new ErrorHandler.Classified(
                        ExitCodes.INTERNAL, "internal error: java.lang.IllegalStateException: bug"));
    }
}

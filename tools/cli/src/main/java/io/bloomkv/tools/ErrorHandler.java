package io.bloomkv.tools;

import io.bloomkv.engine.BloomKvException;
import io.bloomkv.engine.CorruptionException;
import io.bloomkv.engine.DbLockedException;
import io.bloomkv.engine.InvalidArgumentException;
import io.bloomkv.engine.NotADatabaseException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * Turns every failure into one line on stderr ({@code bloomkv <command>: <what went wrong>}) and
 * an exit code from {@link ExitCodes}. The stack trace follows only with {@code --verbose}.
 */
final class ErrorHandler implements IExecutionExceptionHandler, IParameterExceptionHandler {
    static final String VERBOSE = "--verbose";

    /** A failure classified for the user: the exit code and the one-line message. */
    record Classified(int exitCode, String message) {}

    @Override
    public int handleExecutionException(Exception ex, CommandLine commandLine, ParseResult fullParseResult) {
        Classified c = classify(ex);
        PrintWriter err = commandLine.getErr();
        err.println(commandLine.getCommandSpec().qualifiedName() + ": " + c.message());
        if (isVerbose(fullParseResult)) {
            ex.printStackTrace(err);
        } else if (c.exitCode() == ExitCodes.INTERNAL) {
            err.println("(run again with --verbose for the stack trace)");
        }
        err.flush();
        return c.exitCode();
    }

    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        String message = ex.getMessage();
        if (message != null && message.startsWith("Error: ")) {
            // picocli's message for a missing group ("Error: Missing required argument (specify one of these)"):
            // every error line already says which command failed.
            message = message.substring("Error: ".length());
        }
        if (ex instanceof CommandLine.MissingParameterException) {
            // picocli checks for missing parameters before it reports unknown options, so an ldb-style
            // "get --db=DIR KEY" said only "Missing required parameter: 'KEY'": name the unknown option instead.
            String unknown = unknownOption(cmd.getCommandSpec(), args);
            if (unknown != null) {
                message = "Unknown option: '" + unknown + "'" + dbHint(unknown, cmd.getCommandSpec());
            }
        } else if (ex instanceof CommandLine.UnmatchedArgumentException u
                && !u.getUnmatched().isEmpty()) {
            message += dbHint(u.getUnmatched().get(0), cmd.getCommandSpec());
        }
        err.println(name + ": " + message + " (see '" + name + " --help')");
        if (Arrays.asList(args).contains(VERBOSE)) {
            ex.printStackTrace(err);
        }
        err.flush();
        return ExitCodes.USAGE;
    }

    /** The first argument before {@code --} that looks like a long option {@code spec} does not have, or null. */
    static String unknownOption(CommandLine.Model.CommandSpec spec, String[] args) {
        for (String a : args) {
            if (a.equals("--")) {
                break; // the end of the options: what follows is positional, whatever it looks like
            }
            if (!a.startsWith("--")) {
                continue;
            }
            int eq = a.indexOf('=');
            String optionName = eq < 0 ? a : a.substring(0, eq);
            if (spec.findOption(optionName) == null && !optionName.equals(VERBOSE)) {
                return a;
            }
        }
        return null;
    }

    /** A hint for ldb's {@code --db=DIR}: bloomkv takes the database directory as a positional argument. */
    private static String dbHint(String unknown, CommandLine.Model.CommandSpec spec) {
        if (!(unknown.equals("--db") || unknown.startsWith("--db="))
                || spec.positionalParameters().isEmpty()) {
            return "";
        }
        String first = spec.positionalParameters().get(0).paramLabel();
        return "; " + first + " is the first argument, not an option as ldb's --db: '" + spec.qualifiedName() + " "
                + first + " ...'";
    }

    static boolean isVerbose(ParseResult result) {
        for (ParseResult r = result; r != null; r = r.subcommand()) {
            if (r.hasMatchedOption(VERBOSE)) {
                return true;
            }
        }
        return false;
    }

    /** Maps an exception (looking through its causes) to an exit code and a message. */
    static Classified classify(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof CliException e) {
                return new Classified(e.exitCode(), e.getMessage());
            }
            if (t instanceof DbLockedException || t instanceof io.bloomkv.engine.BackupEngineLockedException) {
                return new Classified(ExitCodes.LOCKED, message(t));
            }
            if (t instanceof NotADatabaseException) {
                return new Classified(ExitCodes.IO_ERROR, message(t));
            }
            if (t instanceof io.bloomkv.engine.MergeOperatorException) {
                // The open's refusal (or a read's) of a database with operands and no operator names the missing
                // option; an operator that failed on the stored operands is likely not the one they were written with.
                String m = String.valueOf(t.getMessage());
                boolean missing =
                        m.contains("without a merge operator") || m.contains("open it with Options.mergeOperator");
                return new Classified(
                        ExitCodes.USAGE,
                        message(t)
                                + (missing
                                        ? " (give --merge-operator)"
                                        : " (is --merge-operator the operator the database was written with?)"));
            }
            if (t instanceof io.bloomkv.engine.TtlMismatchException e) {
                return new Classified(
                        ExitCodes.USAGE, message(t) + (e.ttlDatabase() ? " (give --ttl SECONDS)" : " (drop --ttl)"));
            }
            if (t instanceof InvalidArgumentException) {
                // Ingesting a file with merge operands into a database opened without an operator names the API's
                // option; the command line's is --merge-operator.
                String hint = String.valueOf(t.getMessage()).contains("has no merge operator")
                        ? " (give --merge-operator)"
                        : "";
                return new Classified(ExitCodes.USAGE, "invalid argument: " + message(t) + hint);
            }
            if (t instanceof CorruptionException) {
                return new Classified(ExitCodes.CORRUPTION, "corruption: " + message(t));
            }
            if (t instanceof NoSuchFileException e) {
                return new Classified(ExitCodes.IO_ERROR, "no such file or directory: " + e.getFile());
            }
            if (t instanceof NotDirectoryException e) {
                return new Classified(ExitCodes.IO_ERROR, "not a directory: " + e.getFile());
            }
            if (t instanceof AccessDeniedException e) {
                return new Classified(ExitCodes.IO_ERROR, "permission denied: " + e.getFile());
            }
            if (t instanceof FileNotFoundException) {
                return new Classified(ExitCodes.IO_ERROR, "file not found: " + message(t));
            }
        }
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof IOException || t instanceof UncheckedIOException) {
                return new Classified(ExitCodes.IO_ERROR, "I/O error: " + message(t));
            }
        }
        if (ex instanceof BloomKvException) {
            return new Classified(ExitCodes.IO_ERROR, message(ex));
        }
        if (ex instanceof IllegalArgumentException) {
            return new Classified(ExitCodes.USAGE, "invalid argument: " + message(ex));
        }
        return new Classified(ExitCodes.INTERNAL, "internal error: " + ex);
    }

    private static String message(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }
}

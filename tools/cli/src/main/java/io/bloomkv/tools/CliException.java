package io.bloomkv.tools;

/**
 * A failure the command line reports as one line on stderr with a chosen exit code
 * ({@link ExitCodes}). Thrown by commands for conditions they detect themselves, such as a
 * missing database directory.
 */
public final class CliException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int exitCode;

    public CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}

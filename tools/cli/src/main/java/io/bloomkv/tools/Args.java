package io.bloomkv.tools;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/** Converts command-line text to bytes, reporting malformed input as a usage error. */
final class Args {
    private Args() {}

    /** @throws ParameterException (exit code {@link ExitCodes#USAGE}) when {@code text} is malformed */
    static byte[] parse(CommandSpec spec, ByteFormat format, String text, String label) {
        try {
            return format.parse(text);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), label + ": " + e.getMessage(), e);
        }
    }
}

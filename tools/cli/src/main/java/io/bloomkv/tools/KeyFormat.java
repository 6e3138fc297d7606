package io.bloomkv.tools;

import picocli.CommandLine.Option;

/**
 * The {@code --hex} and {@code --key-hex} options of the commands that take or show keys but no values ({@code delete},
 * {@code db stats}): both make keys hex. Such a command has no {@code --value-hex}, which would do nothing there;
 * picocli refuses it as an unknown option (exit code 2). Commands with values take {@link KeyValueFormat}.
 */
final class KeyFormat {
    @Option(names = "--hex", description = "Keys are hex (as --key-hex: this command has no values).")
    boolean hex;

    @Option(names = "--key-hex", description = "Keys are hex.")
    boolean keyHex;

    ByteFormat keys() {
        return hex || keyHex ? ByteFormat.HEX : ByteFormat.UTF8;
    }
}

package io.bloomkv.tools;

import picocli.CommandLine.Option;

/**
 * The {@code --hex}, {@code --key-hex} and {@code --value-hex} options of a command that shows keys and values but
 * takes none ({@code sst dump}): as {@link KeyValueFormat}, worded for output only, since such a command has no key or
 * value input for them to apply to.
 */
final class OutputKeyValueFormat {
    @Option(names = "--hex", description = "Show keys and values in hex.")
    boolean hex;

    @Option(names = "--key-hex", description = "Show keys in hex.")
    boolean keyHex;

    @Option(names = "--value-hex", description = "Show values in hex.")
    boolean valueHex;

    ByteFormat keys() {
        return hex || keyHex ? ByteFormat.HEX : ByteFormat.UTF8;
    }

    ByteFormat values() {
        return hex || valueHex ? ByteFormat.HEX : ByteFormat.UTF8;
    }
}

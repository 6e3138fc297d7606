package io.bloomkv.tools;

import picocli.CommandLine.Option;

/**
 * The {@code --hex}, {@code --key-hex} and {@code --value-hex} options shared by the commands that
 * take or show keys and values. UTF-8 unless asked otherwise; see {@link ByteFormat}.
 */
public final class KeyValueFormat {
    @Option(names = "--hex", description = "Keys and values are hex, on input and output.")
    boolean hex;

    @Option(names = "--key-hex", description = "Keys are hex, on input and output.")
    boolean keyHex;

    @Option(names = "--value-hex", description = "Values are hex, on input and output.")
    boolean valueHex;

    public ByteFormat keys() {
        return hex || keyHex ? ByteFormat.HEX : ByteFormat.UTF8;
    }

    public ByteFormat values() {
        return hex || valueHex ? ByteFormat.HEX : ByteFormat.UTF8;
    }
}

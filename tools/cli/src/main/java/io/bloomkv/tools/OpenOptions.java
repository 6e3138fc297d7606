package io.bloomkv.tools;

import io.bloomkv.engine.Options;
import picocli.CommandLine.Mixin;

/**
 * What every command that opens an existing database needs to open it: {@code --merge-operator} (a database holding
 * merge operands opens only with one) and {@code --ttl} (a TTL database opens only with one, and only a TTL database
 * accepts one). The engine's refusals name these options (ErrorHandler), so every such command takes both.
 */
final class OpenOptions {
    @Mixin
    MergeOperatorOption mergeOperator = new MergeOperatorOption();

    @Mixin
    TtlOption ttl = new TtlOption();

    /** {@code options} with the merge operator and the TTL given (unchanged without them). */
    Options apply(Options options) {
        return ttl.apply(mergeOperator.apply(options));
    }
}

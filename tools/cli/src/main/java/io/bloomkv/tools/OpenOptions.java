package io.bloomkv.tools;

import io.bloomkv.engine.EventListener;
import io.bloomkv.engine.Options;
import java.util.List;
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

    /**
     * Listeners the database is opened with: none on the command line. Not an option: a test creates the command line
     * with a factory ({@link BloomKvCli#newCommandLine(picocli.CommandLine.IFactory)}) that sets them, to watch what a
     * command does to the database it opens (flushes, compactions).
     */
    List<EventListener> listeners = List.of();

    /** {@code options} with the merge operator and the TTL given (unchanged without them). */
    Options apply(Options options) {
        Options o = ttl.apply(mergeOperator.apply(options));
        return listeners.isEmpty() ? o : o.listeners(listeners.toArray(EventListener[]::new));
    }
}

package io.bloomkv.tools;

import io.bloomkv.engine.MergeOperator;
import io.bloomkv.engine.MergeOperators;
import io.bloomkv.engine.Options;
import io.bloomkv.tools.stress.StressValue;
import picocli.CommandLine.Option;

/**
 * {@code --merge-operator}: the merge operator a command opens the database with. A database holding merge operands
 * opens only with one (the engine refuses otherwise), and reads merge with it, so it must be the operator the
 * database was written with.
 */
final class MergeOperatorOption {
    @Option(
            names = "--merge-operator",
            paramLabel = "NAME",
            description = "Merge operator to open the database with: uint64add (8-byte little-endian counters), "
                    + "stringappend[:C] (delimiter C, default ','), or stress (what 'bloomkv stress' writes with). "
                    + "Needed for a database that holds merge operands.")
    String name;

    /** {@code options} with the operator set (unchanged without the option). */
    Options apply(Options options) {
        return name == null ? options : options.mergeOperator(parse(name));
    }

    static MergeOperator parse(String name) {
        if (name.equals("uint64add")) {
            return MergeOperators.uint64Add();
        }
        if (name.equals("stress")) {
            return StressValue.MERGE_OPERATOR;
        }
        if (name.equals("stringappend")) {
            return MergeOperators.stringAppend(',');
        }
        if (name.startsWith("stringappend:") && name.length() == "stringappend:".length() + 1) {
            return MergeOperators.stringAppend(name.charAt(name.length() - 1));
        }
        throw new CliException(
                ExitCodes.USAGE,
                "unknown merge operator '" + name + "': expected uint64add, stringappend[:C] or stress");
    }
}

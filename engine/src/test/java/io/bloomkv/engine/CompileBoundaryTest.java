package io.bloomkv.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The read and the write path each start at a method too large for C2 to inline into a hot caller (more than
 * {@code FreqInlineSize}, 325 bytes of bytecode): {@code Db.getStored} and {@code CommitPipeline.leadWrite}. The
 * application's code around {@code get} and {@code put} then calls them, and each path is compiled once, on its own,
 * instead of into every compile of a caller (bench/RESULTS.md, "thirteenth session", for what the inlined write path
 * cost). A change that splits one of them must move the boundary, not lose it. Bytecode sizes are read with the JDK's
 * javap.
 */
class CompileBoundaryTest {
    /** HotSpot's default {@code -XX:FreqInlineSize} on x86-64 and AArch64. */
    private static final int FREQ_INLINE_SIZE = 325;

    @Test
    void theReadAndWritePathsAreTooLargeToInlineIntoACaller() {
        assertThat(bytecodeSize(Db.class, "getStored")).isGreaterThan(FREQ_INLINE_SIZE);
        assertThat(bytecodeSize(CommitPipeline.class, "leadWrite")).isGreaterThan(FREQ_INLINE_SIZE);
    }

    /** The bytecode length of the (only) method {@code name} of {@code c}, from javap's listing. */
    private static int bytecodeSize(Class<?> c, String name) {
        ToolProvider javap = ToolProvider.findFirst("javap").orElse(null);
        Assumptions.assumeTrue(javap != null, "javap is not in this runtime");
        Path classes;
        try {
            classes = Path.of(
                    c.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        StringWriter out = new StringWriter();
        int rc = javap.run(
                new PrintWriter(out),
                new PrintWriter(new StringWriter()),
                "-c",
                "-p",
                "-cp",
                classes.toString(),
                c.getName());
        assertThat(rc).as("javap exit code").isZero();
        String listing = out.toString();
        Matcher header = Pattern.compile("(?m)^  [^\\n]*\\b" + Pattern.quote(name) + "\\([^\\n]*\\);$")
                .matcher(listing);
        assertThat(header.find())
                .as(c.getSimpleName() + "." + name + " in javap's listing")
                .isTrue();
        int from = header.end();
        int end = listing.indexOf("\n\n", from);
        String body = listing.substring(from, end < 0 ? listing.length() : end);
        Matcher insn = Pattern.compile("(?m)^\\s+(\\d+): \\w+").matcher(body);
        int lastOffset = -1;
        while (insn.find()) {
            lastOffset = Integer.parseInt(insn.group(1));
        }
        assertThat(lastOffset).as("instructions of " + name).isPositive();
        return lastOffset + 1; // the last instruction (a return or athrow) is one byte
    }
}

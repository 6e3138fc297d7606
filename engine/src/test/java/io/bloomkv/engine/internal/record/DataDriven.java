package io.bloomkv.engine.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small runner for Pebble-style data-driven test files (src/test/resources/testdata). A file is a
 * sequence of cases:
 *
 * <pre>
 * # comment
 * command arg key=value ...
 * input line
 * ...
 * ----
 * expected output line
 * ...
 * (blank line)
 * </pre>
 *
 * Run with {@code -Ddatadriven.rewrite=true} to write the actual outputs into the file instead of
 * comparing (then review the diff).
 */
public final class DataDriven {
    /** One case of a data-driven file. */
    public static final class Case {
        public final String command;
        public final List<String> args = new ArrayList<>();
        public final Map<String, String> kv = new LinkedHashMap<>();
        public final List<String> input = new ArrayList<>();
        public final int line;
        String expected;

        Case(String header, int line) {
            String[] parts = header.trim().split("\\s+");
            this.command = parts[0];
            this.line = line;
            for (int i = 1; i < parts.length; i++) {
                int eq = parts[i].indexOf('=');
                if (eq > 0) {
                    kv.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
                } else {
                    args.add(parts[i]);
                }
            }
        }

        public String arg(int i) {
            return args.get(i);
        }

        public String get(String key, String dflt) {
            return kv.getOrDefault(key, dflt);
        }

        public long getLong(String key, long dflt) {
            String v = kv.get(key);
            return v == null ? dflt : Long.parseLong(v);
        }
    }

    /** Handles one case; returns its output (lines joined with '\n', no trailing newline). */
    @FunctionalInterface
    public interface Handler {
        String run(Case c) throws Exception;
    }

    private DataDriven() {}

    /** The source path of a testdata file, relative to the module directory (surefire's working directory). */
    public static Path testdata(String relative) {
        return Path.of("src/test/resources/testdata").resolve(relative);
    }

    public static void run(Path file, Handler handler) throws Exception {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        boolean rewrite = Boolean.getBoolean("datadriven.rewrite");
        StringBuilder rewritten = new StringBuilder();
        int i = 0;
        int cases = 0;
        while (i < lines.size()) {
            String l = lines.get(i);
            if (l.isBlank() || l.startsWith("#")) {
                rewritten.append(l).append('\n');
                i++;
                continue;
            }
            Case c = new Case(l, i + 1);
            rewritten.append(l).append('\n');
            i++;
            while (i < lines.size() && !lines.get(i).equals("----")) {
                c.input.add(lines.get(i));
                rewritten.append(lines.get(i)).append('\n');
                i++;
            }
            if (i >= lines.size()) {
                throw new IllegalStateException(file + ":" + c.line + ": case without ----");
            }
            i++; // ----
            StringBuilder exp = new StringBuilder();
            while (i < lines.size() && !lines.get(i).isEmpty()) {
                if (exp.length() > 0) {
                    exp.append('\n');
                }
                exp.append(lines.get(i));
                i++;
            }
            c.expected = exp.toString();
            String actual = handler.run(c).strip();
            rewritten.append("----\n");
            if (!actual.isEmpty()) {
                rewritten.append(actual).append('\n');
            }
            cases++;
            if (!rewrite) {
                assertThat(actual).as("%s:%d: %s", file, c.line, l).isEqualTo(c.expected);
            }
        }
        assertThat(cases).as("cases in %s", file).isPositive();
        if (rewrite) {
            Files.writeString(file, rewritten.toString(), StandardCharsets.UTF_8);
        }
    }
}

package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The command line uses the engine's public API (Db, the inspection API, fs) only, never its internals. */
class PublicApiOnlyTest {
    @Test
    void noSourceFileOfTheCliImportsEngineInternals() throws Exception {
        List<String> offenders = new ArrayList<>();
        try (Stream<Path> s = Files.walk(Path.of("src/main/java"))) {
            for (Path p : s.filter(f -> f.toString().endsWith(".java")).toList()) {
                for (String line : Files.readAllLines(p)) {
                    if (line.contains("io.bloomkv.engine.internal")) {
                        offenders.add(p.getFileName() + ": " + line.strip());
                    }
                }
            }
        }
        assertThat(offenders).isEmpty();
    }
}

package io.bloomkv.bench.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The repository's markdown files that the docs tests read, found from the module directory. */
final class DocsFiles {
    private DocsFiles() {}

    /** The repository root: the first directory, from the working directory (the module's) upward, holding docs/. */
    static Path repoRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            if (Files.isDirectory(d.resolve("docs")) && Files.isRegularFile(d.resolve("README.md"))) {
                return d;
            }
        }
        throw new IllegalStateException("no directory holding docs/ and README.md above " + dir);
    }

    /** README.md and docs/*.md: the pages whose Java snippets must compile and run. */
    static List<Path> pagesWithSnippets(Path root) {
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        files.addAll(markdownIn(root.resolve("docs")));
        return files;
    }

    /** Every page whose relative links must resolve. */
    static List<Path> pagesWithLinks(Path root) {
        List<Path> files = pagesWithSnippets(root);
        for (String p : List.of("engine/FORMAT.md", "bloom/FORMAT.md", "bloom/README.md", "bench/RESULTS.md")) {
            files.add(root.resolve(p));
        }
        return files;
    }

    private static List<Path> markdownIn(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".md"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The file's path relative to the repository root, with forward slashes, for messages. */
    static String name(Path root, Path file) {
        return root.relativize(file).toString().replace('\\', '/');
    }
}

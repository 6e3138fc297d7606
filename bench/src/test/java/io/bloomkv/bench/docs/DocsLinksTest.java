package io.bloomkv.bench.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link {@code [text](path)} and {@code [text](path#anchor)} of the README, the docs, the FORMAT files,
 * bloom/README.md and bench/RESULTS.md names an existing file, and an anchor names a heading of that file by its
 * GitHub slug. Links inside code (fenced blocks, inline code spans) are not links and are skipped.
 */
class DocsLinksTest {
    /** An inline link or image: [text](target) or [text](target "title"); the text may hold one level of brackets. */
    private static final Pattern LINK =
            Pattern.compile("\\[(?:[^\\[\\]]|\\[[^\\]]*])*]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern INLINE_LINK_TEXT = Pattern.compile("!?\\[([^\\]]*)]\\([^)]*\\)");

    @Test
    void everyRelativeLinkResolves() {
        Path root = DocsFiles.repoRoot();
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : DocsFiles.pagesWithLinks(root)) {
            assertThat(page).as("a page the links test reads").isRegularFile();
            List<Link> links = links(DocsFiles.read(page));
            checked += links.size();
            broken.addAll(brokenLinks(root, page, links));
        }
        assertThat(checked).as("links checked").isGreaterThan(20);
        assertThat(broken).as("broken relative links").isEmpty();
    }

    /** The checker reports a missing file and a missing anchor, and accepts a good link of each kind. */
    @Test
    void aBrokenLinkIsReported(@TempDir Path dir) throws IOException {
        Files.writeString(
                dir.resolve("other.md"),
                "# Other page\n\n## Scale: 1M, 10M and 50M keys\n\n```\n# not a heading\n```\n");
        Path page = dir.resolve("page.md");
        String text = "# Page\n\n## The `get` path (fast)\n\n[ok](other.md) [ok](other.md#scale-1m-10m-and-50m-keys) "
                + "[ok](#the-get-path-fast) [ok](https://example.org/x) ![img](other.md)\n"
                + "[missing](nowhere.md) [bad anchor](other.md#not-a-heading)\n`[code](not-a-link.md)`\n"
                + "```\n[fenced](also-not-a-link.md)\n```\n";
        Files.writeString(page, text);
        List<String> broken = brokenLinks(dir, page, links(text));
        assertThat(broken).hasSize(2);
        assertThat(broken.get(0)).startsWith("page.md:6: nowhere.md");
        assertThat(broken.get(1)).startsWith("page.md:6: other.md#not-a-heading");
    }

    @Test
    void slugsFollowGitHub() {
        assertThat(slugs("## Per-level filter policy, prefix seeks, multiGet\n"))
                .contains("per-level-filter-policy-prefix-seeks-multiget");
        assertThat(slugs("### Inspecting files (`io.bloomkv.engine.inspect`)\n"))
                .contains("inspecting-files-iobloomkvengineinspect");
        assertThat(slugs("## Runs on host B (day 3, 20:09-21:35)\n")).contains("runs-on-host-b-day-3-2009-2135");
        assertThat(slugs("## A\n## A\n")).containsExactly("a", "a-1");
    }

    record Link(int line, String target) {}

    /** The links of a markdown text outside code, with their 1-based lines. */
    static List<Link> links(String markdown) {
        List<Link> out = new ArrayList<>();
        String[] lines = markdown.split("\n", -1);
        boolean fenced = false;
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].strip().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher m = LINK.matcher(withoutInlineCode(lines[i]));
            while (m.find()) {
                out.add(new Link(i + 1, m.group(1)));
            }
        }
        return out;
    }

    /** The relative links among {@code links} of {@code page} that do not resolve, as "file:line: target: why". */
    static List<String> brokenLinks(Path root, Path page, List<Link> links) {
        List<String> broken = new ArrayList<>();
        Map<Path, Set<String>> slugCache = new HashMap<>();
        for (Link link : links) {
            String t = link.target();
            if (t.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                continue; // https:, mailto:, ...: not a relative link
            }
            int hash = t.indexOf('#');
            String path = hash < 0 ? t : t.substring(0, hash);
            String anchor = hash < 0 ? null : t.substring(hash + 1);
            Path target = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
            String where = DocsFiles.name(root, page) + ":" + link.line() + ": " + t;
            if (!Files.exists(target)) {
                broken.add(where + ": no such file " + DocsFiles.name(root, target));
                continue;
            }
            if (anchor != null && !anchor.isEmpty()) {
                if (!target.getFileName().toString().endsWith(".md")) {
                    broken.add(where + ": an anchor into a file that is not markdown");
                    continue;
                }
                Set<String> slugs = slugCache.computeIfAbsent(target, p -> slugs(DocsFiles.read(p)));
                if (!slugs.contains(anchor)) {
                    broken.add(where + ": no heading with that anchor in " + DocsFiles.name(root, target));
                }
            }
        }
        return broken;
    }

    /** The GitHub anchors of a markdown text's headings (outside code), in order, duplicates numbered -1, -2, ... */
    static Set<String> slugs(String markdown) {
        Set<String> out = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            Matcher m = HEADING.matcher(line);
            if (fenced || !m.matches()) {
                continue;
            }
            String base = slug(m.group(2));
            int n = seen.merge(base, 1, Integer::sum) - 1;
            out.add(n == 0 ? base : base + "-" + n);
        }
        return out;
    }

    /** GitHub's slug: link text kept, lower case, punctuation dropped (letters, digits, '-', '_' kept), ' ' -> '-'. */
    static String slug(String heading) {
        String text = INLINE_LINK_TEXT.matcher(heading).replaceAll("$1").toLowerCase(Locale.ROOT);
        StringBuilder sb = new StringBuilder();
        text.codePoints().forEach(c -> {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                sb.appendCodePoint(c);
            } else if (c == ' ') {
                sb.append('-');
            }
        });
        return sb.toString();
    }

    private static String withoutInlineCode(String line) {
        return line.replaceAll("(`+)(?:(?!\\1).)+?\\1", "");
    }
}

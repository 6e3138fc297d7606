package io.bloomkv.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * tools/bom has no parent (so importing it hands users bloomkv's versions only); this keeps its version equal to the
 * parent's and its list equal to the library artifacts, so a release never ships a BOM that lags the build.
 */
class BomTest {
    private static final Path ROOT = Path.of("..", "..");

    @Test
    void bomVersionIsTheParentVersion() throws Exception {
        assertThat(childText(pom(ROOT.resolve("tools/bom/pom.xml")), "version"))
                .isEqualTo(childText(pom(ROOT.resolve("pom.xml")), "version"));
    }

    @Test
    void bomListsEveryLibraryArtifactAtTheProjectVersion() throws Exception {
        Element bom = pom(ROOT.resolve("tools/bom/pom.xml"));
        List<String> listed = new ArrayList<>();
        for (Node n = first(first(bom, "dependencyManagement"), "dependencies").getFirstChild();
                n != null;
                n = n.getNextSibling()) {
            if (n instanceof Element d) {
                assertThat(childText(d, "groupId")).isEqualTo("io.bloomkv");
                assertThat(childText(d, "version")).isEqualTo("${project.version}");
                listed.add(childText(d, "artifactId"));
            }
        }
        List<String> libraries = new ArrayList<>();
        for (String module : List.of("bloom", "engine", "tools/kafka-streams", "tools/testing")) {
            Path p = ROOT.resolve(module).resolve("pom.xml");
            if (p.toFile().exists()) {
                libraries.add(childText(pom(p), "artifactId"));
            }
        }
        assertThat(listed).containsExactlyInAnyOrderElementsOf(libraries);
    }

    private static Element pom(Path p) throws Exception {
        Document d = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(p.toFile());
        return d.getDocumentElement();
    }

    private static Element first(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e;
            }
        }
        throw new AssertionError("no <" + name + "> in <" + parent.getTagName() + ">");
    }

    private static String childText(Element parent, String name) {
        return first(parent, name).getTextContent().trim();
    }
}

package io.bloomkv.engine.internal.version;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.util.ByteReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class VersionEditTest {
    private static byte[] ik(String k, long seq) {
        return InternalKey.encode(k.getBytes(StandardCharsets.UTF_8), seq, ValueType.PUT);
    }

    @Test
    void roundTripsEveryField() {
        VersionEdit e = new VersionEdit()
                .numLevels(7)
                .logNumber(12)
                .nextFileNumber(40)
                .lastSequence(1L << 50)
                .compactPointer(2, ik("m", 9))
                .deleteFile(0, 5)
                .deleteFile(3, 1L << 40)
                .addFile(1, new FileMetaData(33, 123456, ik("a", 1), ik("z", 2), 1000, 1, 2000));
        VersionEdit d = VersionEdit.decode(e.encode());
        assertThat(d.numLevels()).isEqualTo(7);
        assertThat(d.logNumber()).isEqualTo(12);
        assertThat(d.nextFileNumber()).isEqualTo(40);
        assertThat(d.lastSequence()).isEqualTo(1L << 50);
        assertThat(d.compactPointers()).singleElement().satisfies(p -> {
            assertThat(p.level()).isEqualTo(2);
            assertThat(p.key()).isEqualTo(ik("m", 9));
        });
        assertThat(d.deletedFiles())
                .containsExactly(new VersionEdit.DeletedFile(0, 5), new VersionEdit.DeletedFile(3, 1L << 40));
        assertThat(d.newFiles()).singleElement().satisfies(lf -> {
            assertThat(lf.level()).isEqualTo(1);
            FileMetaData f = lf.file();
            assertThat(f.number()).isEqualTo(33);
            assertThat(f.fileSize()).isEqualTo(123456);
            assertThat(f.smallest()).isEqualTo(ik("a", 1));
            assertThat(f.largest()).isEqualTo(ik("z", 2));
            assertThat(f.entries()).isEqualTo(1000);
            assertThat(f.smallestSequence()).isEqualTo(1);
            assertThat(f.largestSequence()).isEqualTo(2000);
        });
        assertThat(VersionEdit.decode(new byte[0]).newFiles()).isEmpty();
    }

    @Test
    void theTtlFlagRoundTripsAndOnlyItsOneValueIsAccepted() {
        assertThat(VersionEdit.decode(new VersionEdit().numLevels(7).ttl(true).encode())
                        .ttl())
                .isTrue();
        assertThat(VersionEdit.decode(new VersionEdit().numLevels(7).encode()).ttl())
                .isFalse();
        assertThat(new VersionEdit().numLevels(7).encode())
                .doesNotContain((byte) VersionEdit.TAG_TTL); // plain: unchanged bytes
        assertThat(VersionEdit.decode(new byte[] {8, 1}).ttl()).isTrue();
        assertThatThrownBy(() -> VersionEdit.decode(new byte[] {8, 0}))
                .isInstanceOf(ByteReader.MalformedInputException.class);
        assertThatThrownBy(() -> VersionEdit.decode(new byte[] {8, 2}))
                .isInstanceOf(ByteReader.MalformedInputException.class);
    }

    /**
     * Every field of an edit, values and key bytes spelled out, in encoding order: two edits describe alike exactly
     * when they hold the same fields with the same values.
     */
    private static String describe(VersionEdit e) {
        StringBuilder b = new StringBuilder();
        b.append("numLevels=").append(e.numLevels());
        b.append(" ttl=").append(e.ttl());
        b.append(" log=").append(e.logNumber());
        b.append(" next=").append(e.nextFileNumber());
        b.append(" lastSeq=").append(e.lastSequence());
        for (VersionEdit.CompactPointer p : e.compactPointers()) {
            b.append(" pointer(")
                    .append(p.level())
                    .append(", ")
                    .append(Arrays.toString(p.key()))
                    .append(')');
        }
        for (VersionEdit.DeletedFile d : e.deletedFiles()) {
            b.append(" deleted(")
                    .append(d.level())
                    .append(", ")
                    .append(d.number())
                    .append(')');
        }
        for (VersionEdit.LevelFile lf : e.newFiles()) {
            FileMetaData f = lf.file();
            b.append(" added(").append(lf.level());
            b.append(", #").append(f.number()).append(", size ").append(f.fileSize());
            b.append(", ").append(Arrays.toString(f.smallest())).append(" .. ").append(Arrays.toString(f.largest()));
            b.append(", entries ").append(f.entries());
            b.append(", seq ").append(f.smallestSequence()).append(" .. ").append(f.largestSequence());
            b.append(')');
        }
        return b.toString();
    }

    @Test
    void malformedEditsAreRejectedNeverMisread() {
        assertThatThrownBy(() -> VersionEdit.decode(new byte[] {99, 1}))
                .isInstanceOf(ByteReader.MalformedInputException.class);
        assertThatThrownBy(() -> VersionEdit.decode(new byte[] {6, (byte) 200, 1}))
                .isInstanceOf(ByteReader.MalformedInputException.class);

        // One edit with every field, multi-byte varints and keys of several lengths, built one field at a time in
        // encoding order: the encoding of each partial edit is a prefix of the full one, and the lengths of those
        // prefixes are the field boundaries.
        List<Consumer<VersionEdit>> fields = List.of(
                e -> e.numLevels(7),
                e -> e.ttl(true),
                e -> e.logNumber(300),
                e -> e.nextFileNumber(1L << 35),
                e -> e.lastSequence((1L << 56) + 5),
                e -> e.compactPointer(2, ik("pointer", 1L << 40)),
                e -> e.deleteFile(0, 5),
                e -> e.deleteFile(3, 1L << 40),
                e -> e.addFile(0, new FileMetaData(9, 10, ik("a", 1), ik("b", 2), 2, 1, 2)),
                e -> e.addFile(
                        6, new FileMetaData(1L << 33, 1L << 30, ik("cc", 300), ik("dddd", 70000), 1 << 20, 3, 70000)));
        TreeMap<Integer, VersionEdit> atBoundary = new TreeMap<>();
        VersionEdit whole = null;
        for (int n = 0; n <= fields.size(); n++) {
            VersionEdit partial = new VersionEdit();
            fields.subList(0, n).forEach(f -> f.accept(partial));
            atBoundary.put(partial.encode().length, partial);
            whole = partial;
        }
        byte[] full = whole.encode();
        assertThat(atBoundary).as("every field adds bytes").hasSize(fields.size() + 1);
        assertThat(atBoundary.lastKey()).isEqualTo(full.length);
        for (var b : atBoundary.entrySet()) {
            assertThat(Arrays.copyOf(full, b.getKey()))
                    .as("the encoding of the first fields is a prefix of the whole")
                    .isEqualTo(b.getValue().encode());
        }
        assertThat(describe(VersionEdit.decode(full))).isEqualTo(describe(whole));

        // A cut at a field boundary parses as exactly the fields before it; a cut inside a field (a varint missing
        // its last byte, a key missing bytes) is rejected: never a different value, never a field silently dropped.
        int rejected = 0;
        for (int cut = 0; cut < full.length; cut++) {
            byte[] truncated = Arrays.copyOf(full, cut);
            VersionEdit expected = atBoundary.get(cut);
            if (expected != null) {
                assertThat(describe(VersionEdit.decode(truncated)))
                        .as("cut at %d, a field boundary", cut)
                        .isEqualTo(describe(expected));
            } else {
                Throwable thrown = catchThrowable(() -> VersionEdit.decode(truncated));
                assertThat(thrown)
                        .as(
                                "cut at %d, inside the field after %s: decoded as %s",
                                cut,
                                describe(atBoundary.floorEntry(cut).getValue()),
                                thrown == null ? describe(VersionEdit.decode(truncated)) : "-")
                        .isInstanceOf(ByteReader.MalformedInputException.class);
                rejected++;
            }
        }
        assertThat(rejected).isEqualTo(full.length - fields.size());
    }

    @Test
    void fileNamesParse() {
        assertThat(FileNames.parse("000012.log")).isEqualTo(new FileNames.Parsed(FileNames.Kind.LOG, 12));
        assertThat(FileNames.parse("1234567.sst")).isEqualTo(new FileNames.Parsed(FileNames.Kind.TABLE, 1234567));
        assertThat(FileNames.parse("MANIFEST-000003")).isEqualTo(new FileNames.Parsed(FileNames.Kind.MANIFEST, 3));
        assertThat(FileNames.parse("CURRENT").kind()).isEqualTo(FileNames.Kind.CURRENT);
        assertThat(FileNames.parse("000004.dbtmp").kind()).isEqualTo(FileNames.Kind.TEMP);
        assertThat(FileNames.parse("notes.txt")).isNull();
        assertThat(FileNames.parse("12a.log")).isNull();
        assertThat(FileNames.parse("MANIFEST-")).isNull();
        assertThat(FileNames.tableFile(java.nio.file.Path.of("/d"), 7).toString())
                .isEqualTo("/d/000007.sst");
    }
}

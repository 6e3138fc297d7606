package io.bloomkv.engine.internal.version;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.util.ByteReader;
import java.nio.charset.StandardCharsets;
import java.util.Random;
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

    @Test
    void malformedEditsAreRejectedNeverMisread() {
        byte[] good = new VersionEdit()
                .logNumber(3)
                .addFile(0, new FileMetaData(9, 10, ik("a", 1), ik("b", 2), 2, 1, 2))
                .encode();
        assertThatThrownBy(() -> VersionEdit.decode(new byte[] {99, 1}))
                .isInstanceOf(ByteReader.MalformedInputException.class);
        assertThatThrownBy(() -> VersionEdit.decode(new byte[] {6, (byte) 200, 1}))
                .isInstanceOf(ByteReader.MalformedInputException.class);
        Random rnd = new Random(42);
        for (int cut = 0; cut < good.length; cut++) {
            byte[] truncated = java.util.Arrays.copyOf(good, cut);
            try {
                VersionEdit d = VersionEdit.decode(truncated);
                // A cut at a field boundary parses as fewer fields, never as different values.
                if (!d.newFiles().isEmpty()) {
                    assertThat(d.newFiles().get(0).file().number()).isEqualTo(9);
                }
            } catch (ByteReader.MalformedInputException expected) {
                // fine
            }
        }
        assertThat(rnd).isNotNull();
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

package io.bloomkv.engine;

import static io.bloomkv.engine.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.engine.internal.util.ByteReader;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class WriteBatchTest {
    private static List<String> decode(byte[] record) {
        List<String> ops = new ArrayList<>();
        WriteBatch.decode(record, new WriteBatch.Handler() {
            @Override
            public void put(long sequence, byte[] key, byte[] value) {
                ops.add(sequence + ":put:" + TestKeys.str(key) + "=" + TestKeys.str(value));
            }

            @Override
            public void delete(long sequence, byte[] key) {
                ops.add(sequence + ":del:" + TestKeys.str(key));
            }

            @Override
            public void merge(long sequence, byte[] key, byte[] operand) {
                ops.add(sequence + ":merge:" + TestKeys.str(key) + "=" + TestKeys.str(operand));
            }

            @Override
            public void deleteRange(long sequence, byte[] begin, byte[] end) {
                ops.add(sequence + ":deleteRange:" + TestKeys.str(begin) + ".." + TestKeys.str(end));
            }
        });
        return ops;
    }

    @Test
    void serializedFormIsTheDocumentedLayout() {
        WriteBatch b = new WriteBatch().put(bytes("ab"), bytes("xyz")).delete(bytes("c"));
        byte[] rec = b.serialize(0x0102030405L);
        // FORMAT.md "WriteBatch": u64le sequence | u32le count | 01 len key len value | 00 len key
        assertThat(HexFormat.of().formatHex(rec))
                .isEqualTo(
                        "0504030201000000" + "02000000" + "01" + "02" + "6162" + "03" + "78797a" + "00" + "01" + "63");
        assertThat(decode(rec)).containsExactly("4328719365:put:ab=xyz", "4328719366:del:c");
        assertThat(WriteBatch.countOf(rec)).isEqualTo(2);
    }

    @Test
    void mergeIsTypeTwoWithItsOperand() {
        WriteBatch b = new WriteBatch().merge(bytes("ab"), bytes("xyz"));
        byte[] rec = b.serialize(7);
        // FORMAT.md "WriteBatch": MERGE = 02 len key len operand
        assertThat(HexFormat.of().formatHex(rec))
                .isEqualTo("0700000000000000" + "01000000" + "02" + "02" + "6162" + "03" + "78797a");
        assertThat(decode(rec)).containsExactly("7:merge:ab=xyz");
        assertThat(b.mergeCount()).isEqualTo(1);
    }

    @Test
    void deleteRangeIsTypeFifteenWithBothBounds() {
        WriteBatch b = new WriteBatch().deleteRange(bytes("a"), bytes("c")).deleteRange(bytes("x"), bytes("x"));
        byte[] rec = b.serialize(9);
        // FORMAT.md "WriteBatch": RANGE_DELETE = 0f len begin len end; an empty range adds nothing
        assertThat(HexFormat.of().formatHex(rec))
                .isEqualTo("0900000000000000" + "01000000" + "0f" + "01" + "61" + "01" + "63");
        assertThat(decode(rec)).containsExactly("9:deleteRange:a..c");
        assertThatThrownBy(() -> new WriteBatch().deleteRange(bytes("b"), bytes("a")))
                .isInstanceOf(InvalidArgumentException.class);
    }

    @Test
    void appendKeepsOrderAndCounts() {
        WriteBatch a = new WriteBatch().put(bytes("k1"), bytes("v1"));
        WriteBatch b = new WriteBatch().delete(bytes("k2")).put(bytes("k3"), new byte[0]);
        a.append(b);
        assertThat(a.count()).isEqualTo(3);
        assertThat(a.putCount()).isEqualTo(2);
        assertThat(a.userBytes()).isEqualTo(4 + 2 + 2);
        assertThat(decode(a.serialize(10))).containsExactly("10:put:k1=v1", "11:del:k2", "12:put:k3=");
        a.clear();
        assertThat(a.isEmpty()).isTrue();
        assertThat(a.approximateSize()).isEqualTo(WriteBatch.HEADER_SIZE);
    }

    @Test
    void malformedRecordsAreRejected() {
        byte[] rec = new WriteBatch().put(bytes("key"), bytes("value")).serialize(1);
        byte[] wrongCount = rec.clone();
        wrongCount[8] = 5;
        assertThatThrownBy(() -> decode(wrongCount)).isInstanceOf(ByteReader.MalformedInputException.class);
        byte[] badType = rec.clone();
        badType[12] = 7;
        assertThatThrownBy(() -> decode(badType)).isInstanceOf(ByteReader.MalformedInputException.class);
        byte[] truncated = java.util.Arrays.copyOf(rec, rec.length - 2);
        assertThatThrownBy(() -> decode(truncated)).isInstanceOf(ByteReader.MalformedInputException.class);
        assertThatThrownBy(() -> decode(new byte[5])).isInstanceOf(ByteReader.MalformedInputException.class);
    }

    @Test
    void inputIsCheckedWhenAdded() {
        WriteBatch b = new WriteBatch();
        assertThatThrownBy(() -> b.put(null, bytes("v"))).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> b.delete(new byte[Db.MAX_KEY_SIZE + 1])).isInstanceOf(InvalidArgumentException.class);
        assertThat(b.isEmpty()).isTrue();
    }

    @Test
    void keyInTwoPartsSerializesAsTheWholeKey() {
        byte[] prefix = bytes("seg1");
        WriteBatch parts = new WriteBatch(0)
                .put(prefix, bytes("key"), bytes("v1"))
                .delete(prefix, bytes("gone"))
                .put(bytes("whole"), new byte[0], bytes("v2"))
                .put(new byte[0], bytes("rest"), new byte[0]);
        WriteBatch whole = new WriteBatch()
                .put(bytes("seg1key"), bytes("v1"))
                .delete(bytes("seg1gone"))
                .put(bytes("whole"), bytes("v2"))
                .put(bytes("rest"), new byte[0]);
        assertThat(parts.serialize(9)).isEqualTo(whole.serialize(9));
        assertThat(parts.count()).isEqualTo(4);
        assertThat(parts.putCount()).isEqualTo(3);
        assertThat(parts.userBytes()).isEqualTo(whole.userBytes());
        assertThat(decode(parts.serialize(9)))
                .containsExactly("9:put:seg1key=v1", "10:del:seg1gone", "11:put:whole=v2", "12:put:rest=");
        // Presized exactly: nothing added beyond the estimate the constructor was given.
        WriteBatch sized = new WriteBatch(WriteBatch.putSizeOf(7, 2) + 12).put(prefix, bytes("key"), bytes("v1"));
        assertThat(sized.serialize(9))
                .isEqualTo(new WriteBatch().put(bytes("seg1key"), bytes("v1")).serialize(9));
    }

    @Test
    void keyPartsAreCheckedAsAWholeKey() {
        WriteBatch b = new WriteBatch();
        byte[] half = new byte[Db.MAX_KEY_SIZE / 2];
        assertThatThrownBy(() -> b.put(new byte[0], new byte[0], bytes("v")))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> b.delete(new byte[0], new byte[0])).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> b.put(null, bytes("k"), bytes("v"))).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> b.put(bytes("k"), null, bytes("v"))).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> b.put(bytes("k"), bytes("k"), null)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> b.put(half, new byte[half.length + 1], bytes("v")))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> b.delete(half, new byte[half.length + 1]))
                .isInstanceOf(InvalidArgumentException.class);
        assertThat(b.isEmpty()).isTrue();
        b.put(half, half, bytes("v")).delete(half, half);
        assertThat(b.count()).isEqualTo(2);
    }
}

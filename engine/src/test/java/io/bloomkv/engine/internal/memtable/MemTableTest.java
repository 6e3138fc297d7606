package io.bloomkv.engine.internal.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import io.bloomkv.engine.internal.table.InternalIterator;
import io.bloomkv.engine.internal.table.TableReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemTableTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void getSeesTheNewestEntryAtOrBelowTheSnapshot() {
        MemTable m = new MemTable(1);
        m.add(1, ValueType.PUT, b("k"), b("v1"));
        m.add(2, ValueType.PUT, b("k"), b("v2"));
        m.add(3, ValueType.DELETE, b("k"), null);
        m.add(4, ValueType.PUT, b("k2"), b("x"));
        assertThat(m.get(b("k"), 0)).isNull();
        assertThat(m.get(b("k"), 1).value()).isEqualTo(b("v1"));
        assertThat(m.get(b("k"), 2).value()).isEqualTo(b("v2"));
        TableReader.Entry tomb = m.get(b("k"), 3);
        assertThat(tomb.type()).isEqualTo(ValueType.DELETE);
        assertThat(tomb.sequence()).isEqualTo(3);
        assertThat(m.get(b("j"), 10)).isNull();
        assertThat(m.get(b("k1"), 10)).isNull();
        assertThat(m.entryCount()).isEqualTo(4);
        assertThat(m.approximateMemoryUsage()).isGreaterThan(4 * MemTable.ENTRY_OVERHEAD);
        // Returned values are copies.
        m.get(b("k"), 2).value()[0] = 'X';
        assertThat(m.get(b("k"), 2).value()).isEqualTo(b("v2"));
    }

    @Test
    void iteratorIsInInternalKeyOrder() {
        MemTable m = new MemTable(1);
        m.add(5, ValueType.PUT, b("b"), b("b5"));
        m.add(6, ValueType.PUT, b("a"), b("a6"));
        m.add(7, ValueType.PUT, b("b"), b("b7"));
        List<String> seen = new ArrayList<>();
        try (InternalIterator it = m.iterator()) {
            for (it.seekToFirst(); it.valid(); it.next()) {
                seen.add(new String(InternalKey.userKey(it.key()), StandardCharsets.UTF_8) + "@"
                        + InternalKey.sequence(it.key()));
            }
            it.seek(InternalKey.forSeek(b("b"), 6));
            assertThat(InternalKey.sequence(it.key())).isEqualTo(5);
        }
        assertThat(seen).containsExactly("a@6", "b@7", "b@5");
    }
}

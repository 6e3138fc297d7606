package io.bloomkv.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The seekprefix layout: present prefixes hold their keys, absent prefixes hold none and lie between present ones. */
class PrefixLayoutTest {
    private static final int P = PrefixLayout.PREFIX_LENGTH;

    private static ByteBuffer prefixOf(byte[] key) {
        return ByteBuffer.wrap(Arrays.copyOf(key, P));
    }

    @Test
    void presentPrefixesHoldTheirKeysAndAbsentOnesNone() {
        for (long num : new long[] {32, 1000, 4099}) {
            PrefixLayout layout = new PrefixLayout(num);
            KeySpace ks = new KeySpace(num, 16);
            Map<ByteBuffer, Integer> perPrefix = new HashMap<>();
            Set<ByteBuffer> keys = new HashSet<>();
            for (long j = 0; j < num; j++) {
                byte[] k = ks.key(layout.loadedId(j));
                assertThat(keys.add(ByteBuffer.wrap(k)))
                        .as("key of load index %d is new", j)
                        .isTrue();
                perPrefix.merge(prefixOf(k), 1, Integer::sum);
            }
            assertThat(perPrefix).hasSize((int) layout.presentPrefixes());
            for (long p = 0; p < layout.presentPrefixes(); p++) {
                byte[] target = ks.key(layout.presentSeekId(p));
                assertThat(keys).as("a hit seek's target is a loaded key").contains(ByteBuffer.wrap(target));
                assertThat(perPrefix.get(prefixOf(target)))
                        .as("keys under prefix %d", p)
                        .isEqualTo(layout.keysUnder(p));
            }
            byte[] first = ks.key(layout.loadedId(0));
            byte[] last = ks.key(layout.loadedId(num - 1));
            for (long p = 0; p < layout.absentPrefixes(); p++) {
                byte[] target = ks.key(layout.absentSeekId(p));
                assertThat(perPrefix).as("absent prefix %d", p).doesNotContainKey(prefixOf(target));
                assertThat(Arrays.compareUnsigned(target, first))
                        .as("inside the key range")
                        .isPositive();
                assertThat(Arrays.compareUnsigned(target, last))
                        .as("inside the key range")
                        .isNegative();
            }
        }
    }

    @Test
    void tooFewKeysAreRefused() {
        assertThatThrownBy(() -> new PrefixLayout(PrefixLayout.KEYS_PER_PREFIX))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("seekprefix needs --num");
        assertThatThrownBy(() -> new PrefixLayout(100).loadedId(100)).isInstanceOf(IndexOutOfBoundsException.class);
    }
}

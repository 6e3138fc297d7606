package io.bloomkv.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomkv.bloom.FilterKind;
import org.junit.jupiter.api.Test;

class FilterPolicySpecTest {
    @Test
    void parsesKindsRibbonLevelsAndTheMonkeySuffix() {
        assertThat(FilterPolicySpec.parse("blocked")).isEqualTo(new FilterPolicySpec(FilterKind.BLOCKED, -1, false));
        assertThat(FilterPolicySpec.parse("RIBBON@1")).isEqualTo(new FilterPolicySpec(FilterKind.BLOCKED, 1, false));
        assertThat(FilterPolicySpec.parse("BLOCKED+MONKEY"))
                .isEqualTo(new FilterPolicySpec(FilterKind.BLOCKED, -1, true));
        assertThat(FilterPolicySpec.parse("ribbon@2+monkey"))
                .isEqualTo(new FilterPolicySpec(FilterKind.BLOCKED, 2, true));
        assertThat(FilterPolicySpec.parse("RIBBON+MEMORY+ROCKSDB-RIBBON"))
                .isEqualTo(new FilterPolicySpec(FilterKind.RIBBON, -1, false, true, true));
        assertThat(FilterPolicySpec.parse("ribbon@3+rocksdb-ribbon+monkey"))
                .isEqualTo(new FilterPolicySpec(FilterKind.BLOCKED, 3, true, false, true));
    }

    @Test
    void ribbonSettingsForRocksDb() {
        FilterPolicySpec all = FilterPolicySpec.parse("RIBBON+MEMORY+ROCKSDB-RIBBON");
        assertThat(all.rocksdbBloomBeforeLevel()).isEqualTo(-1);
        // RIBBON spending 10 bits reaches the rate of a BLOCKED filter at ~15 bits
        assertThat(all.ribbonBloomEquivalentBits(10)).isBetween(14.0, 16.0);
        assertThat(all.ribbonBloomEquivalentBits(0)).isZero();
        FilterPolicySpec rate = FilterPolicySpec.parse("RIBBON@2+ROCKSDB-RIBBON");
        assertThat(rate.rocksdbBloomBeforeLevel()).isEqualTo(2);
        assertThat(rate.ribbonBloomEquivalentBits(10)).isEqualTo(10);
        assertThat(FilterPolicySpec.parse("BLOCKED").usesRibbon()).isFalse();
    }

    @Test
    void rejectsUnknownNames() {
        assertThatThrownBy(() -> FilterPolicySpec.parse("BLOCKED+FOO"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("+MONKEY");
        assertThatThrownBy(() -> FilterPolicySpec.parse("+MONKEY")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterPolicySpec.parse("RIBBON@-1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterPolicySpec.parse("BLOCKED+MEMORY"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("RIBBON");
        assertThatThrownBy(() -> FilterPolicySpec.parse("RIBBON@2+MEMORY+ROCKSDB-RIBBON"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("every level");
        assertThatThrownBy(() -> FilterPolicySpec.parse("RIBBON+")).isInstanceOf(IllegalArgumentException.class);
    }
}

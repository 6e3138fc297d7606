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
        assertThat(FilterPolicySpec.parse("BLOCKED+MONKEY")).isEqualTo(new FilterPolicySpec(FilterKind.BLOCKED, -1, true));
        assertThat(FilterPolicySpec.parse("ribbon@2+monkey")).isEqualTo(new FilterPolicySpec(FilterKind.BLOCKED, 2, true));
    }

    @Test
    void rejectsUnknownNames() {
        assertThatThrownBy(() -> FilterPolicySpec.parse("BLOCKED+FOO")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("+MONKEY");
        assertThatThrownBy(() -> FilterPolicySpec.parse("+MONKEY")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FilterPolicySpec.parse("RIBBON@-1")).isInstanceOf(IllegalArgumentException.class);
    }
}

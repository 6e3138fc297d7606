package io.bloomkv.bench;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.junit.LocationProvider;
import com.tngtech.archunit.lang.ArchRule;
import java.nio.file.Path;
import java.util.Set;

/**
 * The API boundary, held by the build (docs/architecture.md, "The API boundary"): the bench, main and test classes
 * alike, use the engine's public packages ({@code io.bloomkv.engine}, {@code .fs}, {@code .inspect}) and the bloom
 * library, never {@code io.bloomkv.engine.internal..}. ArchUnit reads the compiled classes, so a fully qualified
 * name in the code is caught as surely as an import. Only this module's class directories are read (not the jars on
 * the class path), which keeps the test to a second or two.
 */
@AnalyzeClasses(locations = ApiBoundaryTest.ModuleClasses.class)
class ApiBoundaryTest {
    @ArchTest
    static final ArchRule USES_NO_ENGINE_INTERNALS = noClasses()
            .that()
            .resideOutsideOfPackage("io.bloomkv.engine..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("io.bloomkv.engine.internal..")
            .because("only the engine itself may use its internals; tools and the bench use the public API");

    /** target/classes and target/test-classes of this module (surefire runs in the module's directory). */
    static final class ModuleClasses implements LocationProvider {
        @Override
        public Set<Location> get(Class<?> testClass) {
            return Set.of(Location.of(Path.of("target", "classes")), Location.of(Path.of("target", "test-classes")));
        }
    }
}

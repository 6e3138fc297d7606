package io.bloomkv.engine.fs;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import net.openhft.posix.PosixAPI;

/**
 * Opens a {@link MappedWritableFile} whose posix binding is a forwarding proxy that can fail, delay or answer single
 * calls; everything else is the real Chronicle binding on the real file (tests of the file's failure paths).
 */
final class PosixFaults {
    /** The name of the thread that prepares regions ahead. */
    static final String PREPARER = "bloomkv-log-prepare";

    private PosixFaults() {}

    /** Called before each real call; a non-null result is the call's answer (the real one is skipped). */
    interface Hook {
        Object before(String method, Object[] args, PosixAPI real) throws Throwable;
    }

    static MappedWritableFile openWith(Path p, Hook hook) throws Exception {
        MappedWritableFile f = MappedWritableFile.open(p);
        Field field = MappedWritableFile.class.getDeclaredField("posix");
        field.setAccessible(true);
        PosixAPI real = (PosixAPI) field.get(f);
        PosixAPI proxy = (PosixAPI) Proxy.newProxyInstance(
                PosixAPI.class.getClassLoader(), new Class<?>[] {PosixAPI.class}, (self, m, args) -> {
                    Object r = hook.before(m.getName(), args, real);
                    if (r != null) {
                        return r;
                    }
                    try {
                        return m.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        field.set(f, proxy);
        return f;
    }

    /** True on the preparing thread. */
    static boolean onPreparer() {
        return Thread.currentThread().getName().equals(PREPARER);
    }

    /** A hook that holds the preparer in its madvise: counts {@code entered} down, then waits for {@code release}. */
    static Hook holdPreparerInMadvise(CountDownLatch entered, CountDownLatch release) {
        return (method, args, real) -> {
            if (method.equals("madvise") && onPreparer()) {
                entered.countDown();
                release.await();
            }
            return null;
        };
    }
}

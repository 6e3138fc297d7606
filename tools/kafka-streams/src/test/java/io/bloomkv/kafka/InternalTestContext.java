package io.bloomkv.kafka;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;

/**
 * A {@link TestStoreContext} seen as Kafka's {@link InternalProcessorContext}, which Kafka's own stores (the
 * oracles of the differential tests) require at init: every method the TestStoreContext has is delegated to it,
 * {@code currentSystemTimeMs} reads the clock; any other internal call fails the test loudly.
 */
final class InternalTestContext {
    private InternalTestContext() {}

    static StateStoreContext of(TestStoreContext ctx) {
        return (StateStoreContext) Proxy.newProxyInstance(
                InternalTestContext.class.getClassLoader(),
                new Class<?>[] {InternalProcessorContext.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("currentSystemTimeMs")) {
                        return System.currentTimeMillis();
                    }
                    if (method.getName().equals("toString") && method.getParameterCount() == 0) {
                        return "InternalTestContext[" + ctx.stateDir + "]";
                    }
                    if (method.getName().equals("hashCode") && method.getParameterCount() == 0) {
                        return System.identityHashCode(proxy);
                    }
                    if (method.getName().equals("equals") && method.getParameterCount() == 1) {
                        return proxy == args[0];
                    }
                    Method target;
                    try {
                        target = StateStoreContext.class.getMethod(method.getName(), method.getParameterTypes());
                    } catch (NoSuchMethodException e) {
                        throw new AssertionError(
                                "the oracle store called InternalProcessorContext." + method.getName());
                    }
                    try {
                        return target.invoke(ctx, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}

package io.bloomkv.bench.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** A progress bar for tests: counts the steps, and keeps each task's name with the steps counted when it began. */
final class CountingProgress implements ProgressSink {
    private final AtomicLong steps = new AtomicLong();
    private final List<String> tasks = new ArrayList<>();
    private final StringBuilder log = new StringBuilder();

    @Override
    public synchronized void task(String name) {
        tasks.add(name);
        log.append(name).append(" from ").append(steps.get()).append("; ");
    }

    @Override
    public void step(long ops) {
        steps.addAndGet(ops);
    }

    @Override
    public void close() {}

    long steps() {
        return steps.get();
    }

    synchronized List<String> tasks() {
        return List.copyOf(tasks);
    }

    /** Every task with the step count it began at, for an assertion's description. */
    synchronized String log() {
        return log.toString();
    }
}

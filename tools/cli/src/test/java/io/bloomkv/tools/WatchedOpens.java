package io.bloomkv.tools;

import io.bloomkv.engine.EventListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import picocli.CommandLine;

/**
 * A picocli factory that installs a recording {@link EventListener} in every {@link OpenOptions} it creates, so a test
 * sees what a command did to the database it opened: the compactions begun.
 */
final class WatchedOpens implements CommandLine.IFactory, EventListener {
    final List<CompactionInfo> compactions = new CopyOnWriteArrayList<>();
    /** How many OpenOptions got the listener: a test checks it is not 0, so that an empty record means something. */
    final AtomicInteger installed = new AtomicInteger();

    @Override
    public <K> K create(Class<K> type) throws Exception {
        K created = CommandLine.defaultFactory().create(type);
        if (created instanceof OpenOptions open) {
            open.listeners = List.of(this);
            installed.incrementAndGet();
        }
        return created;
    }

    @Override
    public void onCompactionBegin(CompactionInfo info) {
        compactions.add(info);
    }
}

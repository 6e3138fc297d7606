package io.bloomkv.bench.workload;

import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/** A me.tongfei progress bar on stderr, counting operations of the whole run. */
public final class ConsoleProgress implements ProgressSink {
    private final ProgressBar bar;

    public ConsoleProgress(long totalOps) {
        this.bar = new ProgressBarBuilder()
                .setTaskName("bench")
                .setInitialMax(totalOps)
                .setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(500)
                .setMaxRenderedLength(120)
                .setUnit(" kops", 1000)
                .showSpeed()
                .build();
    }

    @Override
    public void task(String name) {
        bar.setExtraMessage(name);
    }

    @Override
    public void step(long ops) {
        bar.stepBy(ops);
    }

    @Override
    public void close() {
        bar.close();
    }
}

package io.bloomkv.bench.report;

/**
 * One point of the false-positive-rate sweep: a filter of {@code kind} at {@code bitsPerKey} with
 * {@code k} probes, holding {@code keys} keys, asked about {@code probes} absent keys.
 */
public record FprPoint(
        String kind, double bitsPerKey, int k, long keys, long probes, double measuredFpr, double theoreticalFpr) {}

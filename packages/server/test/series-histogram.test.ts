import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { SeriesHistogram } from "../src/observability/series-histogram.ts";

/**
 * SeriesHistogram against prom-client's own Histogram, fed the same observations in registries
 * with the same default labels: the text exposition must be identical, line for line.
 */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const LABELS = ["route", "endpoint", "status"] as const;

function pair() {
  const ours = new Registry();
  const theirs = new Registry();
  for (const r of [ours, theirs]) r.setDefaultLabels({ service: "qes" });
  const config = { name: "t_seconds", help: "latency", labelNames: LABELS, buckets: BUCKETS };
  return {
    ours,
    theirs,
    series: new SeriesHistogram({ ...config, registers: [ours] }),
    prom: new Histogram({ ...config, labelNames: [...LABELS], registers: [theirs] }),
  };
}

describe("SeriesHistogram", () => {
  it("exposes what prom-client's Histogram exposes for the same observations", async () => {
    const { ours, theirs, series, prom } = pair();
    // deterministic values spread over every bucket, bounds themselves, 0 and beyond the last
    let x = 7;
    const values: number[] = [0, ...BUCKETS, 31, 1e6];
    for (let i = 0; i < 2000; i++) {
      x = (x * 48271) % 2147483647;
      values.push((x / 2147483647) ** 4 * 40);
    }
    const labelSets = [
      { route: "query", endpoint: "logs.all", status: "200" },
      { route: "query", endpoint: "usage.api-counts", status: "200" },
      { route: "/health", endpoint: "", status: "503" },
    ];
    const handles = labelSets.map((l) => series.series(l));
    for (const [i, v] of values.entries()) {
      const which = i % labelSets.length;
      const labels = labelSets[which]!;
      prom.observe(labels, v);
      // handles and the labelled call must land in the same series
      if (i % 2 === 0) handles[which]!.observe(v);
      else series.observe(labels, v);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    // the JSON form (labels together) too
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it("shows nothing before the first observation and after reset", async () => {
    const { ours, theirs, series, prom } = pair();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    series.observe({ route: "a", endpoint: "b", status: "200" }, 0.2);
    prom.observe({ route: "a", endpoint: "b", status: "200" }, 0.2);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("refuses a value that is not finite, as prom-client does", () => {
    const { series } = pair();
    const handle = series.series({ route: "a", endpoint: "b", status: "200" });
    expect(() => handle.observe(Number.NaN)).toThrow(/t_seconds: not a finite value/);
    expect(() => handle.observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
  });
});

import type { EndpointStats, EndpointStatsSnapshot } from "../routing/endpoint-stats";
import type { CatalogEndpoint } from "../providers/catalog";

/**
 * Live figures for a group of endpoints (a model's providers, or a provider's models)
 * from the per-process endpoint telemetry (services.endpointStats: rolling window,
 * attempts of every outcome). Each instance reports what it routed itself. A group's
 * figures have the shape of one endpoint's snapshot: they are its figures combined.
 */
export function groupMetrics(stats: EndpointStats, endpoints: readonly CatalogEndpoint[]): EndpointStatsSnapshot {
  return combineSnapshots(endpoints.map((endpoint) => stats.snapshot(endpoint.key)));
}

/**
 * Counts add up exactly. A median cannot be combined exactly from medians, so the
 * group's value is the median of the endpoints' medians weighted by their successful
 * attempts (the samples behind them) — exact for a single endpoint.
 */
export function combineSnapshots(snapshots: readonly EndpointStatsSnapshot[]): EndpointStatsSnapshot {
  let requestCount = 0;
  let successCount = 0;
  for (const snapshot of snapshots) {
    requestCount += snapshot.requestCount;
    successCount += snapshot.successCount;
  }
  return {
    requestCount,
    successCount,
    successRate: requestCount === 0 ? 0 : successCount / requestCount,
    p50LatencyMs: weightedMedian(snapshots, (s) => s.p50LatencyMs),
    p50TtftMs: weightedMedian(snapshots, (s) => s.p50TtftMs),
    outputTokensPerSecond: weightedMedian(snapshots, (s) => s.outputTokensPerSecond),
  };
}

function weightedMedian(snapshots: readonly EndpointStatsSnapshot[], pick: (s: EndpointStatsSnapshot) => number | undefined): number | undefined {
  const points: Array<{ value: number; weight: number }> = [];
  let total = 0;
  for (const snapshot of snapshots) {
    const value = pick(snapshot);
    if (value === undefined || snapshot.successCount <= 0) continue;
    points.push({ value, weight: snapshot.successCount });
    total += snapshot.successCount;
  }
  if (points.length === 0) return undefined;
  points.sort((a, b) => a.value - b.value);
  let cumulative = 0;
  for (const point of points) {
    cumulative += point.weight;
    if (cumulative * 2 >= total) return point.value;
  }
  return points[points.length - 1]!.value;
}

/** Milliseconds as whole numbers; undefined stays undefined. */
export function roundMs(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value);
}

/** A ratio or rate to 4 decimal places (enough for a dashboard, stable in JSON). */
export function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

import type { CatalogEndpoint } from "../providers/catalog";
import { pricingForPromptTokens } from "../providers/pricing";
import type { EndpointStats, EndpointStatsSnapshot } from "./endpoint-stats";
import type { RoutingProfile } from "./parse-model-ref";

/**
 * Orders a model's eligible endpoints for one request. Eligibility
 * (funding, policies, capabilities) is decided before; this only ranks. The order is a
 * pure function of its inputs: equal inputs give the same order whatever order the
 * endpoints came in, with provider id, then upstream model id, as the last tie-breakers.
 */

/** What ranking reads of an endpoint; a CatalogEndpoint has it all. */
export type RankableEndpoint = Pick<CatalogEndpoint, "key" | "provider" | "providerModelId" | "pricing">;

export interface RankingContext {
  stats: Pick<EndpointStats, "snapshot">;
  estimatedPromptTokens: number;
  estimatedOutputTokens: number;
  /** Providers the caller has a BYOK key for. */
  byokProviders?: ReadonlySet<string>;
}

export interface RankedEndpoint<E extends RankableEndpoint = CatalogEndpoint> {
  endpoint: E;
  byok: boolean;
  /** Estimated charge of this request at list price, context tier applied; not rounded. */
  estimatedCostMicroUsd: number;
  stats: EndpointStatsSnapshot;
  /** The balanced profile's score in [0, 1], higher is better; undefined for other profiles. */
  score?: number;
}

/**
 * Balanced profile weights (a weighted mix of cost, latency, throughput and uptime;
 * the weights are Switchyard's own). Cost leads because it is the one signal known
 * for every endpoint before any traffic.
 */
export const BALANCED_WEIGHTS = { cost: 0.35, latency: 0.25, throughput: 0.15, success: 0.25 } as const;

/** Balanced profile: an endpoint below this success rate over at least this many attempts goes last (low uptime is filtered). */
export const LOW_SUCCESS_RATE = 0.5;
export const LOW_SUCCESS_MIN_SAMPLES = 10;

export function rankEndpoints<E extends RankableEndpoint>(
  endpoints: readonly E[],
  profile: RoutingProfile | undefined,
  context: RankingContext,
): RankedEndpoint<E>[] {
  const ranked: RankedEndpoint<E>[] = endpoints.map((endpoint) => {
    const rates = pricingForPromptTokens(endpoint.pricing, context.estimatedPromptTokens);
    return {
      endpoint,
      byok: context.byokProviders?.has(endpoint.provider) ?? false,
      estimatedCostMicroUsd: rates.input * context.estimatedPromptTokens + rates.output * context.estimatedOutputTokens,
      stats: context.stats.snapshot(endpoint.key),
    };
  });
  const byProfile = compareFor(profile ?? "balanced", ranked);
  // BYOK providers rank ahead of all platform providers; the profile orders within each tier.
  return ranked.sort((a, b) => Number(b.byok) - Number(a.byok) || byProfile(a, b) || compareIds(a, b));
}

type Compare = (a: RankedEndpoint<RankableEndpoint>, b: RankedEndpoint<RankableEndpoint>) => number;

function compareFor(profile: RoutingProfile, ranked: RankedEndpoint<RankableEndpoint>[]): Compare {
  switch (profile) {
    // Cost: cheapest for this prompt at the current price; tie → uptime → error
    // rate → provider id. Uptime and error rate are both the success rate here.
    case "cost":
      return (a, b) => costKey(a) - costKey(b) || smoothedSuccessRate(b) - smoothedSuccessRate(a);
    // Latency: lowest p50 TTFT over the rolling hour; tie → throughput → uptime → id.
    // Unmeasured endpoints come after measured ones: a known fast endpoint beats an unknown, and
    // the balanced default gives new endpoints their traffic.
    case "latency":
      return (a, b) =>
        ascendingMeasured(a.stats.p50TtftMs, b.stats.p50TtftMs) ||
        descendingMeasured(a.stats.outputTokensPerSecond, b.stats.outputTokensPerSecond) ||
        smoothedSuccessRate(b) - smoothedSuccessRate(a);
    // Throughput: highest output tokens per second; tie → TTFT → uptime → id; unmeasured last as above.
    case "throughput":
      return (a, b) =>
        descendingMeasured(a.stats.outputTokensPerSecond, b.stats.outputTokensPerSecond) ||
        ascendingMeasured(a.stats.p50TtftMs, b.stats.p50TtftMs) ||
        smoothedSuccessRate(b) - smoothedSuccessRate(a);
    // Balanced (the default): weighted normalised cost, latency, throughput and
    // uptime; endpoints with a low success rate go last.
    case "balanced": {
      scoreBalanced(ranked);
      return (a, b) => Number(isLowSuccess(a.stats)) - Number(isLowSuccess(b.stats)) || (b.score ?? 0) - (a.score ?? 0);
    }
  }
}

/**
 * Each component is normalised against the best candidate to [0, 1] (1 = best), so the
 * weights mean the same whatever the absolute prices and speeds are. Low-success endpoints
 * go last anyway, so they do not set the best (unless every candidate is one). A latency or
 * throughput nobody has measured yet scores as the average of the measured candidates: an
 * unknown endpoint is assumed ordinary, neither punished nor favoured.
 */
function scoreBalanced(ranked: RankedEndpoint<RankableEndpoint>[]): void {
  const healthy = ranked.filter((r) => !isLowSuccess(r.stats));
  const reference = healthy.length > 0 ? healthy : ranked;
  const minCost = Math.min(...reference.map((r) => r.estimatedCostMicroUsd));
  const ttfts = measured(reference.map((r) => r.stats.p50TtftMs));
  const speeds = measured(reference.map((r) => r.stats.outputTokensPerSecond));
  const minTtft = Math.max(1, Math.min(...ttfts));
  const maxSpeed = Math.max(...speeds);
  const latencyScore = (ttft: number) => Math.min(1, minTtft / Math.max(1, ttft));
  const throughputScore = (speed: number) => (maxSpeed <= 0 ? 1 : Math.min(1, speed / maxSpeed));
  const unmeasuredLatency = average(ttfts.map(latencyScore));
  const unmeasuredThroughput = average(speeds.map(throughputScore));
  for (const r of ranked) {
    const cost = r.estimatedCostMicroUsd <= minCost ? 1 : minCost / r.estimatedCostMicroUsd;
    const ttft = r.stats.p50TtftMs;
    const speed = r.stats.outputTokensPerSecond;
    r.score =
      BALANCED_WEIGHTS.cost * cost +
      BALANCED_WEIGHTS.latency * (ttft === undefined ? unmeasuredLatency : latencyScore(ttft)) +
      BALANCED_WEIGHTS.throughput * (speed === undefined ? unmeasuredThroughput : throughputScore(speed)) +
      BALANCED_WEIGHTS.success * smoothedSuccessRate(r);
  }
}

function measured(values: Array<number | undefined>): number[] {
  return values.filter((v): v is number => v !== undefined);
}

/** The mean, or 1 when nothing is measured: then every candidate scores the same and the component does not matter. */
function average(values: number[]): number {
  return values.length === 0 ? 1 : values.reduce((sum, v) => sum + v, 0) / values.length;
}

export function isLowSuccess(stats: EndpointStatsSnapshot): boolean {
  return stats.requestCount >= LOW_SUCCESS_MIN_SAMPLES && stats.successRate < LOW_SUCCESS_RATE;
}

/**
 * The success rate with one success and one failure assumed up front, so an endpoint with no
 * or few attempts ranks as uncertain (0.5 when unmeasured) instead of perfect or broken.
 */
function smoothedSuccessRate(r: RankedEndpoint<RankableEndpoint>): number {
  return (r.stats.successCount + 1) / (r.stats.requestCount + 2);
}

/** Cost compared at pico-USD precision, so prices that multiply out equal tie exactly. */
function costKey(r: RankedEndpoint<RankableEndpoint>): number {
  return Math.round(r.estimatedCostMicroUsd * 1e6);
}

function ascendingMeasured(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined) return Number(a === undefined) - Number(b === undefined);
  return a - b;
}

function descendingMeasured(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined) return Number(a === undefined) - Number(b === undefined);
  return b - a;
}

function compareIds(a: RankedEndpoint<RankableEndpoint>, b: RankedEndpoint<RankableEndpoint>): number {
  return compareStrings(a.endpoint.provider, b.endpoint.provider) || compareStrings(a.endpoint.providerModelId, b.endpoint.providerModelId);
}

/** Code-unit order, not locale order: the same on every machine. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

import { describe, expect, test } from "bun:test";
import type { CatalogPricing } from "../../src/providers/pricing";
import { EndpointStats, type AttemptSample } from "../../src/routing/endpoint-stats";
import { rankEndpoints, type RankableEndpoint, type RankingContext } from "../../src/routing/select-endpoints";

function endpoint(provider: string, input: number, output: number, extra: Partial<CatalogPricing> = {}): RankableEndpoint {
  return { key: `${provider}/m`, provider, providerModelId: "m", pricing: { input, output, contextTiers: [], ...extra } };
}

function record(stats: EndpointStats, key: string, count: number, sample: AttemptSample): void {
  for (let i = 0; i < count; i += 1) stats.record(key, sample);
}

function context(stats: EndpointStats, extra: Partial<RankingContext> = {}): RankingContext {
  return { stats, estimatedPromptTokens: 1000, estimatedOutputTokens: 500, ...extra };
}

function order(ranked: ReadonlyArray<{ endpoint: RankableEndpoint }>): string[] {
  return ranked.map((r) => r.endpoint.provider);
}

describe("rankEndpoints: cost", () => {
  test("orders by the estimated cost of this prompt, cheapest first", () => {
    const ranked = rankEndpoints([endpoint("a", 3, 15), endpoint("b", 1, 5), endpoint("c", 2, 2)], "cost", context(new EndpointStats()));
    expect(order(ranked)).toEqual(["c", "b", "a"]); // 3000, 3500, 10500 micro-USD
    expect(ranked.map((r) => r.estimatedCostMicroUsd)).toEqual([3000, 3500, 10500]);
  });

  test("applies the context tier of the estimated prompt before comparing", () => {
    const tiered = endpoint("tiered", 1, 1, { contextTiers: [{ aboveInputTokens: 100_000, input: 10 }] });
    const flat = endpoint("flat", 2, 1);
    const stats = new EndpointStats();
    expect(order(rankEndpoints([flat, tiered], "cost", context(stats, { estimatedPromptTokens: 100_000 })))).toEqual(["tiered", "flat"]);
    expect(order(rankEndpoints([flat, tiered], "cost", context(stats, { estimatedPromptTokens: 100_001 })))).toEqual(["flat", "tiered"]);
  });

  test("breaks a price tie by success rate, then by provider id", () => {
    const stats = new EndpointStats();
    record(stats, "b/m", 9, { outcome: "success" });
    record(stats, "b/m", 1, { outcome: "timeout" });
    record(stats, "c/m", 10, { outcome: "success" });
    const ranked = rankEndpoints([endpoint("b", 1, 1), endpoint("a", 1, 1), endpoint("c", 1, 1), endpoint("d", 1, 1)], "cost", context(stats));
    expect(order(ranked)).toEqual(["c", "b", "a", "d"]); // a and d unmeasured: equal, so by id
  });

  test("treats prices that multiply out to the same cost as a tie", () => {
    const ranked = rankEndpoints([endpoint("z", 0.1 * 3, 0), endpoint("y", 0.3, 0)], "cost", context(new EndpointStats()));
    expect(order(ranked)).toEqual(["y", "z"]);
  });
});

describe("rankEndpoints: BYOK first", () => {
  test("puts BYOK providers ahead of all platform providers, ordering each tier by the profile", () => {
    const endpoints = [endpoint("cheap", 0.1, 0.1), endpoint("mid", 1, 1), endpoint("dear", 10, 10), endpoint("dearer", 20, 20)];
    const ranked = rankEndpoints(endpoints, "cost", context(new EndpointStats(), { byokProviders: new Set(["dearer", "dear"]) }));
    expect(order(ranked)).toEqual(["dear", "dearer", "cheap", "mid"]);
    expect(ranked.map((r) => r.byok)).toEqual([true, true, false, false]);
  });

  test("keeps BYOK first under the balanced profile even when the BYOK endpoint is failing", () => {
    const stats = new EndpointStats();
    record(stats, "mine/m", 10, { outcome: "provider_error" });
    const ranked = rankEndpoints([endpoint("platform", 1, 1), endpoint("mine", 1, 1)], "balanced", context(stats, { byokProviders: new Set(["mine"]) }));
    expect(order(ranked)).toEqual(["mine", "platform"]);
  });
});

describe("rankEndpoints: latency", () => {
  test("orders by p50 time to first token, with unmeasured endpoints after measured ones", () => {
    const stats = new EndpointStats();
    record(stats, "slow/m", 3, { outcome: "success", ttftMs: 900 });
    record(stats, "fast/m", 3, { outcome: "success", ttftMs: 150 });
    const ranked = rankEndpoints([endpoint("new", 0.01, 0.01), endpoint("slow", 1, 1), endpoint("fast", 9, 9)], "latency", context(stats));
    expect(order(ranked)).toEqual(["fast", "slow", "new"]);
  });

  test("breaks a TTFT tie by throughput, then success rate, then provider id", () => {
    const stats = new EndpointStats();
    record(stats, "a/m", 2, { outcome: "success", ttftMs: 200, outputTokensPerSecond: 50 });
    record(stats, "b/m", 2, { outcome: "success", ttftMs: 200, outputTokensPerSecond: 80 });
    record(stats, "c/m", 2, { outcome: "success", ttftMs: 200, outputTokensPerSecond: 50 });
    record(stats, "c/m", 1, { outcome: "timeout" });
    record(stats, "d/m", 2, { outcome: "success", ttftMs: 200, outputTokensPerSecond: 50 });
    const ranked = rankEndpoints(["d", "c", "b", "a"].map((p) => endpoint(p, 1, 1)), "latency", context(stats));
    expect(order(ranked)).toEqual(["b", "a", "d", "c"]);
  });
});

describe("rankEndpoints: throughput", () => {
  test("orders by output tokens per second, highest first, unmeasured last", () => {
    const stats = new EndpointStats();
    record(stats, "a/m", 2, { outcome: "success", ttftMs: 100, outputTokensPerSecond: 40 });
    record(stats, "b/m", 2, { outcome: "success", ttftMs: 900, outputTokensPerSecond: 300 });
    const ranked = rankEndpoints([endpoint("new", 1, 1), endpoint("a", 1, 1), endpoint("b", 1, 1)], "throughput", context(stats));
    expect(order(ranked)).toEqual(["b", "a", "new"]);
  });

  test("breaks a throughput tie by TTFT", () => {
    const stats = new EndpointStats();
    record(stats, "a/m", 2, { outcome: "success", ttftMs: 400, outputTokensPerSecond: 100 });
    record(stats, "b/m", 2, { outcome: "success", ttftMs: 300, outputTokensPerSecond: 100 });
    expect(order(rankEndpoints([endpoint("a", 1, 1), endpoint("b", 1, 1)], "throughput", context(stats)))).toEqual(["b", "a"]);
  });
});

describe("rankEndpoints: balanced", () => {
  test("is the profile used when none is given", () => {
    const stats = new EndpointStats();
    const endpoints = [endpoint("a", 5, 5), endpoint("b", 1, 1)];
    const ranked = rankEndpoints(endpoints, undefined, context(stats));
    expect(ranked.map((r) => r.score)).toEqual(rankEndpoints(endpoints, "balanced", context(stats)).map((r) => r.score));
    expect(ranked[0]?.score).toBeDefined();
  });

  test("prefers the cheaper endpoint when nothing has been measured", () => {
    expect(order(rankEndpoints([endpoint("dear", 5, 5), endpoint("cheap", 1, 1)], "balanced", context(new EndpointStats())))).toEqual(["cheap", "dear"]);
  });

  test("lets a much faster endpoint outrank a slightly cheaper one", () => {
    const stats = new EndpointStats();
    record(stats, "quick/m", 20, { outcome: "success", ttftMs: 100, outputTokensPerSecond: 200 });
    record(stats, "sluggish/m", 20, { outcome: "success", ttftMs: 2000, outputTokensPerSecond: 20 });
    const ranked = rankEndpoints([endpoint("sluggish", 1, 1), endpoint("quick", 1.1, 1.1)], "balanced", context(stats));
    expect(order(ranked)).toEqual(["quick", "sluggish"]);
  });

  test("pushes an endpoint below 50% success over at least 10 attempts to the end, however cheap", () => {
    const stats = new EndpointStats();
    record(stats, "flaky/m", 4, { outcome: "success", ttftMs: 50, outputTokensPerSecond: 500 });
    record(stats, "flaky/m", 6, { outcome: "provider_error" });
    record(stats, "steady/m", 10, { outcome: "success", ttftMs: 800, outputTokensPerSecond: 30 });
    const ranked = rankEndpoints([endpoint("flaky", 0.01, 0.01), endpoint("steady", 10, 10), endpoint("new", 20, 20)], "balanced", context(stats));
    expect(order(ranked)).toEqual(["steady", "new", "flaky"]);
  });

  test("does not push an endpoint last on fewer than 10 attempts", () => {
    const stats = new EndpointStats();
    record(stats, "flaky/m", 9, { outcome: "provider_error" });
    const ranked = rankEndpoints([endpoint("flaky", 0.01, 0.01), endpoint("steady", 10, 10)], "balanced", context(stats));
    expect(order(ranked)).toEqual(["flaky", "steady"]);
  });
});

describe("rankEndpoints: determinism", () => {
  test("gives the same order for equal inputs whatever order they arrive in", () => {
    const stats = new EndpointStats();
    record(stats, "b/m", 3, { outcome: "success", ttftMs: 100, outputTokensPerSecond: 80 });
    const endpoints = [endpoint("c", 1, 1), endpoint("a", 1, 1), endpoint("b", 1, 1), endpoint("d", 1, 1)];
    for (const profile of ["cost", "latency", "throughput", "balanced"] as const) {
      const forward = order(rankEndpoints(endpoints, profile, context(stats)));
      const backward = order(rankEndpoints([...endpoints].reverse(), profile, context(stats)));
      expect(backward).toEqual(forward);
    }
  });

  test("breaks a full tie on the same provider by the upstream model id", () => {
    const one: RankableEndpoint = { key: "p/m-2", provider: "p", providerModelId: "m-2", pricing: { input: 1, output: 1, contextTiers: [] } };
    const two: RankableEndpoint = { key: "p/m-1", provider: "p", providerModelId: "m-1", pricing: { input: 1, output: 1, contextTiers: [] } };
    expect(rankEndpoints([one, two], "cost", context(new EndpointStats())).map((r) => r.endpoint.providerModelId)).toEqual(["m-1", "m-2"]);
  });

  test("ranks nothing when given nothing", () => {
    expect(rankEndpoints([], "balanced", context(new EndpointStats()))).toEqual([]);
  });
});

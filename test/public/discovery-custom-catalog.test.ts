import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startTestServer, type TestServer } from "../support/test-server";
import { combineSnapshots } from "../../src/public/endpoint-metrics";
import { TtlCache } from "../../src/public/ttl-cache";
import { parseUsageStatsQuery } from "../../src/public/usage-stats";
import type { ModelBody, ProviderBody } from "../../src/public/discovery-routes";
import type { EndpointStatsSnapshot } from "../../src/routing/endpoint-stats";

/**
 * A hand-made catalog: "acme/duo" is served by an expensive provider listed first and a
 * cheap one with a long-context tier; "acme/solo" only by the community provider.
 */
const CATALOG = {
  providers: [
    { id: "pricey", name: "Pricey Cloud", protocol: "openai-chat", base_url: "http://127.0.0.1:9/v1", api_key_env: "PRICEY_KEY", community: true },
    { id: "cheapco", name: "CheapCo", protocol: "openai-chat", base_url: "http://127.0.0.1:9/v1", api_key_env: "CHEAPCO_KEY", byok: false },
  ],
  models: [
    {
      id: "acme/duo",
      name: "Acme: Duo",
      description: "two providers",
      open_weights: true,
      input_modalities: ["text", "audio"],
      endpoints: [
        { provider: "pricey", provider_model_id: "duo-secret-upstream-id", pricing: { input: 3, output: 9, cache_read: 0.3 } },
        {
          provider: "cheapco",
          provider_model_id: "duo-v1",
          pricing: { input: 1, output: 4, cache_write: 1.25, context_tiers: [{ above_input_tokens: 200000, input: 2 }] },
        },
      ],
    },
    { id: "acme/solo", endpoints: [{ provider: "pricey", provider_model_id: "solo", pricing: { input: 0.5, output: 1 } }] },
  ],
};

let server: TestServer;
beforeAll(async () => {
  const directory = mkdtempSync(join(tmpdir(), "switchyard-discovery-"));
  const providersFile = join(directory, "providers.json");
  writeFileSync(providersFile, JSON.stringify(CATALOG));
  server = await startTestServer({ providersFile });
  // Telemetry recorded before the first request (snapshots are reused for a second).
  const stats = server.server.services.endpointStats;
  for (let i = 0; i < 3; i += 1) stats.record("cheapco/duo-v1", { outcome: "success", latencyMs: 100, ttftMs: 10, outputTokensPerSecond: 50 });
  stats.record("pricey/duo-secret-upstream-id", { outcome: "success", latencyMs: 900, ttftMs: 90, outputTokensPerSecond: 5 });
  stats.record("pricey/duo-secret-upstream-id", { outcome: "timeout" });
  stats.record("pricey/solo", { outcome: "provider_error" });
});
afterAll(() => server.close());

describe("discovery over a custom catalog", () => {
  test("a model served by several providers lists the cheapest endpoint's prices together, including its context tiers", async () => {
    const data = (await server.api<{ data: ModelBody[] }>("GET", "/v1/models")).body.data;
    const { metrics, ...duo } = data.find((m) => m.id === "acme/duo")!;
    expect(metrics).toBeDefined(); // checked in the next test
    expect(duo).toEqual({
      id: "acme/duo",
      name: "Acme: Duo",
      description: "two providers",
      input_modalities: ["text", "audio"],
      output_modalities: ["text"],
      capabilities: [],
      pricing: {
        input_tokens: { no_cache: 1, cache_write: 1.25 },
        output_tokens: { text: 4, reasoning: 4 },
        context_tiers: [{ above_input_tokens: 200000, input_tokens: { no_cache: 2 } }],
      },
      providers: { total_online: 2 },
      open_weights: true,
    });
    const solo = data.find((m) => m.id === "acme/solo")!;
    expect(solo.name).toBe("acme/solo");
    expect("description" in solo).toBe(false);
    expect("max_input_tokens" in solo).toBe(false);
    expect((await server.api("GET", "/v1/models?input_modality=audio")).body.data.map((m: ModelBody) => m.id)).toEqual(["acme/duo"]);
    expect((await server.api("GET", "/v1/models?provider=cheapco")).body.data.map((m: ModelBody) => m.id)).toEqual(["acme/duo"]);
  });

  test("metrics combine the model's endpoints: counts add up and medians are weighted by successful attempts", async () => {
    const response = await server.api<{ data: ModelBody[] }>("GET", "/v1/models");
    expect(response.text).not.toContain("duo-secret-upstream-id");
    const duo = response.body.data.find((m) => m.id === "acme/duo")!;
    expect(duo.metrics).toEqual({
      window_seconds: 3600,
      request_count: 5,
      success_rate: 0.8,
      p50_latency_ms: 100,
      p50_ttft_ms: 10,
      output_tokens_per_second: 50,
    });

    const providers = await server.api<{ data: ProviderBody[] }>("GET", "/v1/providers");
    expect(providers.text).not.toContain("duo-secret-upstream-id");
    const pricey = providers.body.data.find((p) => p.id === "pricey")!;
    expect(pricey).toMatchObject({ community: true, byok: true });
    expect(pricey.aggregate).toEqual({ request_count: 3, success_rate: 0.3333, p50_latency_ms: 900, cache_hit_rate: 0 });
    expect(pricey.models.map((m) => [m.id, m.metrics])).toEqual([
      ["acme/duo", { request_count: 2, success_rate: 0.5, p50_latency_ms: 900 }],
      ["acme/solo", { request_count: 1, success_rate: 0, p50_latency_ms: 0 }],
    ]);
    // A provider lists its own endpoint's prices, not the model's cheapest.
    expect(pricey.models[0]!.pricing).toEqual({ input_tokens: { no_cache: 3, cache_read: 0.3 }, output_tokens: { text: 9, reasoning: 9 } });
    const cheapco = providers.body.data.find((p) => p.id === "cheapco")!;
    expect(cheapco).toMatchObject({ community: false, byok: false, aggregate: { request_count: 3, success_rate: 1, p50_latency_ms: 100 } });
  });
});

describe("helpers", () => {
  const snapshot = (over: Partial<EndpointStatsSnapshot>): EndpointStatsSnapshot => ({
    requestCount: 0,
    successCount: 0,
    successRate: 0,
    p50LatencyMs: undefined,
    p50TtftMs: undefined,
    outputTokensPerSecond: undefined,
    ...over,
  });

  test("combining no telemetry gives zero counts, a 0 success rate and unknown medians", () => {
    expect(combineSnapshots([snapshot({}), snapshot({})])).toEqual({
      requestCount: 0,
      successCount: 0,
      successRate: 0,
      p50LatencyMs: undefined,
      p50TtftMs: undefined,
      outputTokensPerSecond: undefined,
    });
  });

  test("the combined median follows the endpoint with more successful attempts", () => {
    const combined = combineSnapshots([
      snapshot({ requestCount: 10, successCount: 1, p50LatencyMs: 50 }),
      snapshot({ requestCount: 5, successCount: 5, p50LatencyMs: 400 }),
    ]);
    expect(combined.p50LatencyMs).toBe(400);
    expect(combined.successRate).toBe(6 / 15);
  });

  test("the cache shares one computation between concurrent misses and does not keep a failure", async () => {
    const cache = new TtlCache<number>(1000, () => 0);
    let calls = 0;
    const slow = () => new Promise<number>((resolve) => setTimeout(() => resolve(++calls), 5));
    const [a, b] = await Promise.all([cache.get("k", slow), cache.get("k", slow)]);
    expect([a.value, b.value, calls]).toEqual([1, 1, 1]);
    expect(a.expiresAt).toBe(1000);
    await expect(cache.get("bad", () => Promise.reject(new Error("db down")))).rejects.toThrow("db down");
    expect((await cache.get("bad", async () => 7)).value).toBe(7);
  });

  test("query parsing clamps integers and rejects everything else", () => {
    expect(parseUsageStatsQuery(new URLSearchParams(""))).toEqual({ days: 14, top: 8 });
    expect(parseUsageStatsQuery(new URLSearchParams("days=91&top=26"))).toEqual({ days: 90, top: 25 });
    expect(parseUsageStatsQuery(new URLSearchParams("days=007&top=1"))).toEqual({ days: 7, top: 1 });
    expect(() => parseUsageStatsQuery(new URLSearchParams("days=+3"))).toThrow("days must be an integer");
    expect(() => parseUsageStatsQuery(new URLSearchParams("top= 3"))).toThrow("top must be an integer");
  });
});

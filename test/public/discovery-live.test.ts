import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { MULTI_MODEL_ID, MULTI_MODEL_PRICING } from "../support/mock-upstreams";
import { usageStatsCache } from "../../src/public/stats-routes";
import { providersCache, PROVIDERS_TTL_MS, type ModelBody, type ProviderBody } from "../../src/public/discovery-routes";
import { countNamedQuery } from "../support/named-query-counter";
import type { UsageStats } from "../../src/public/usage-stats";

/** Real requests through the mock upstreams, then the public figures they produce. */
let harness: InferenceHarness;
const OK_MODEL = "mock-openai/gpt-4o-mini";
const FAILING_MODEL = "mock-openai/gpt-4o-mini@error500";
const OK_REQUESTS = 3;

function chat(model: string) {
  return harness.server.api("POST", "/v1/chat/completions", {
    token: harness.account.apiKey,
    body: { model, messages: [{ role: "user", content: "Hi" }] },
  });
}

beforeAll(async () => {
  harness = await startInferenceHarness();
  for (let i = 0; i < OK_REQUESTS; i += 1) expect((await chat(OK_MODEL)).status).toBe(200);
  expect((await chat(FAILING_MODEL)).status).toBeGreaterThanOrEqual(500);
  await harness.server.server.services.writeBuffer.flush();
});
afterAll(() => harness.close());

async function listModels(query = ""): Promise<ModelBody[]> {
  return (await harness.server.api<{ data: ModelBody[] }>("GET", `/v1/models${query}`)).body.data;
}

async function listProviders(): Promise<ProviderBody[]> {
  const response = await harness.server.api<{ data: ProviderBody[] }>("GET", "/v1/providers");
  expect(response.status).toBe(200);
  return response.body.data;
}

describe("live metrics after real requests", () => {
  test("GET /v1/models reports metrics measured from the model's recent requests, and none for a model without traffic", async () => {
    const data = await listModels("?provider=mock-openai");
    const ok = data.find((m) => m.id === OK_MODEL)!;
    expect(ok.metrics).toBeDefined();
    expect(ok.metrics!.window_seconds).toBe(3600);
    expect(ok.metrics!.request_count).toBe(OK_REQUESTS);
    expect(ok.metrics!.success_rate).toBe(1);
    expect(typeof ok.metrics!.p50_latency_ms).toBe("number");
    expect(ok.metrics!.p50_latency_ms!).toBeGreaterThanOrEqual(0);
    const failing = data.find((m) => m.id === FAILING_MODEL)!;
    expect(failing.metrics!.request_count).toBeGreaterThanOrEqual(1);
    expect(failing.metrics!.success_rate).toBe(0);
    expect(failing.metrics!.p50_latency_ms).toBeNull(); // failures carry no latency sample
    expect(data.find((m) => m.id === "mock-openai/gpt-4.1")!.metrics).toBeUndefined();
  });

  test("a model served by several providers lists the cheapest input price and counts its providers", async () => {
    const [multi] = await listModels(`?id=${MULTI_MODEL_ID}`);
    const cheap = MULTI_MODEL_PRICING["mock-openai"];
    expect(multi!.providers.total_online).toBe(2);
    expect(multi!.pricing).toEqual({
      input_tokens: { no_cache: cheap.input, cache_read: cheap.cache_read, cache_write: cheap.cache_write },
      output_tokens: { text: cheap.output, reasoning: cheap.output },
    });
  });

  test("GET /v1/providers counts a provider error against the success rate of the provider and of the failing model", async () => {
    const openai = (await listProviders()).find((p) => p.id === "mock-openai")!;
    const ok = openai.models.find((m) => m.id === OK_MODEL)!;
    const failing = openai.models.find((m) => m.id === FAILING_MODEL)!;
    expect(ok.metrics.request_count).toBe(OK_REQUESTS);
    expect(ok.metrics.success_rate).toBe(1);
    expect(ok.metrics.p50_latency_ms).toBeGreaterThanOrEqual(0);
    expect(failing.metrics.request_count).toBeGreaterThanOrEqual(1);
    expect(failing.metrics.success_rate).toBe(0);
    const attempts = OK_REQUESTS + failing.metrics.request_count;
    expect(openai.aggregate.request_count).toBe(attempts);
    expect(openai.aggregate.success_rate).toBeCloseTo(OK_REQUESTS / attempts, 4);
    expect(openai.aggregate.success_rate).toBeLessThan(1);
    expect(openai.rate_limit.current_rpm).toBeGreaterThanOrEqual(OK_REQUESTS);
    expect(openai.metrics_window_seconds).toBe(3600);
    const google = (await listProviders()).find((p) => p.id === "mock-google")!;
    expect(google.aggregate).toEqual({ request_count: 0, success_rate: 0, p50_latency_ms: 0, cache_hit_rate: 0 });
    expect(google.rate_limit.current_rpm).toBe(0);
  });

  test("cache_hit_rate is cache-read tokens over prompt tokens of the provider's succeeded requests in the window", async () => {
    const sql = harness.server.server.services.db.sql;
    const at = new Date(Date.now() - 5 * 60 * 1000); // in the hour, outside the last minute
    const insert = (id: string, status: string, prompt: number, cacheRead: number) => sql`
      insert into requests (id, request_id, account_id, status, status_code, billing_status, model_id, provider_id, streamed,
                            prompt_tokens, completion_tokens, cache_read_tokens, usage_evidence, created_at, completed_at)
      values (${id}, ${id}, ${harness.account.accountId}, ${status}, 200, 'computed', 'mock-anthropic/claude-sonnet-4-5', 'mock-anthropic', false,
              ${prompt}, 10, ${cacheRead}, '{}'::jsonb, ${at}, ${at})`;
    await insert("req_cache_1", "succeeded", 300, 100);
    await insert("req_cache_2", "succeeded", 100, 0);
    await insert("req_cache_3", "failed", 1000, 1000); // failed requests do not count
    await sql`select usage_rollups_rebuild(${harness.account.accountId})`; // written around the metering writer (migration 0034)
    providersCache(harness.server.server.services).clear(); // the figures are cached: see the rows at once
    const anthropic = (await listProviders()).find((p) => p.id === "mock-anthropic")!;
    expect(anthropic.aggregate.cache_hit_rate).toBe(0.25);
    expect(anthropic.rate_limit.current_rpm).toBe(0); // five minutes old: not in the last minute
  });

  test("20 concurrent GET /v1/providers share one computation: the last hour is read once, and again only when the figures expire", async () => {
    const services = harness.server.server.services;
    const cache = providersCache(services);
    cache.clear();
    const reads = countNamedQuery(services.db.read, "providerRequestWindow");
    try {
      const responses = await Promise.all(Array.from({ length: 20 }, () => harness.server.api<{ data: ProviderBody[] }>("GET", "/v1/providers")));
      expect(responses.map((response) => response.status)).toEqual(Array.from({ length: 20 }, () => 200));
      for (const response of responses) expect(response.body).toEqual(responses[0]!.body);
      expect(reads.count).toBe(1);
      const later = await harness.server.api("GET", "/v1/providers");
      expect(reads.count).toBe(1);
      const maxAge = Number(/^public, max-age=(\d+)$/.exec(later.headers.get("cache-control") ?? "")?.[1]);
      expect(maxAge).toBeGreaterThan(0);
      expect(maxAge).toBeLessThanOrEqual(PROVIDERS_TTL_MS / 1000);
      const start = Date.now();
      cache.setClock(() => start + PROVIDERS_TTL_MS + 1);
      await Promise.all(Array.from({ length: 5 }, () => harness.server.api("GET", "/v1/providers")));
      expect(reads.count).toBe(2);
    } finally {
      reads.stop();
      cache.setClock(Date.now);
      cache.clear();
    }
  });

  test("GET /v1/stats/usage counts the real succeeded requests and not the failed one", async () => {
    usageStatsCache(harness.server.server.services).clear();
    const stats = (await harness.server.api<UsageStats>("GET", "/v1/stats/usage?days=1")).body;
    const ok = stats.models.find((m) => m.id === OK_MODEL)!;
    expect(ok.request_count).toBe(OK_REQUESTS);
    expect(ok.total_tokens).toBe(ok.prompt_tokens + ok.completion_tokens);
    expect(ok.total_tokens).toBeGreaterThan(0);
    expect(stats.models.find((m) => m.id === FAILING_MODEL)).toBeUndefined();
  });
});

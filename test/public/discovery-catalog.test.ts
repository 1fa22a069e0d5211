import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../support/test-server";
import type { Catalog } from "../../src/providers/catalog";
import type { ModelBody, ProviderBody } from "../../src/public/discovery-routes";

/** The built-in catalog, no traffic: shapes and filters. */
let server: TestServer;
let catalog: Catalog;

beforeAll(async () => {
  server = await startTestServer();
  catalog = server.server.services.catalog;
});
afterAll(() => server.close());

async function models(query = ""): Promise<ModelBody[]> {
  const response = await server.api<{ object: string; data: ModelBody[] }>("GET", `/v1/models${query}`);
  expect(response.status).toBe(200);
  expect(response.body.object).toBe("list");
  return response.body.data;
}

describe("GET /v1/models", () => {
  test("lists the whole built-in catalog in the public discovery shape without a credential, never exposing upstream model ids", async () => {
    const response = await server.api("GET", "/v1/models");
    expect(response.status).toBe(200);
    const data = response.body.data as ModelBody[];
    expect(data.map((m) => m.id)).toEqual(catalog.listModels().map((m) => m.id));
    for (const model of data) {
      expect(typeof model.name).toBe("string");
      expect(model.input_modalities.length).toBeGreaterThan(0);
      expect(model.output_modalities.length).toBeGreaterThan(0);
      expect(Array.isArray(model.capabilities)).toBe(true);
      expect(typeof model.pricing.input_tokens.no_cache).toBe("number");
      expect(model.pricing.output_tokens.reasoning).toBe(model.pricing.output_tokens.text);
      expect(model.providers.total_online).toBeGreaterThanOrEqual(1);
      expect(typeof model.open_weights).toBe("boolean");
      expect(model.metrics).toBeUndefined(); // no traffic yet
    }
    expect(response.text).not.toContain("provider_model_id");
    expect(response.text).not.toContain("providerModelId");
  });

  test("a model carries its catalog prices in USD per 1M tokens, limits and open-weights flag", async () => {
    const [gpt5] = await models("?id=openai/gpt-5-codex");
    expect(gpt5).toMatchObject({
      id: "openai/gpt-5-codex",
      max_input_tokens: 272000,
      max_output_tokens: 128000,
      providers: { total_online: 1 },
      open_weights: false,
    });
    const full = (await models()).find((m) => m.id === "openai/gpt-5")!;
    expect(full.pricing).toEqual({ input_tokens: { no_cache: 1.25, cache_read: 0.125 }, output_tokens: { text: 10, reasoning: 10 } });
    expect((await models()).find((m) => m.id === "openai/gpt-oss-120b")!.open_weights).toBe(true);
  });

  test("provider filters by exact provider id", async () => {
    const deepseek = await models("?provider=deepseek");
    const expected = catalog.listModels().filter((m) => m.endpoints.some((e) => e.provider === "deepseek")).map((m) => m.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(deepseek.map((m) => m.id)).toEqual(expected);
    expect(await models("?provider=deep")).toEqual([]);
    expect(await models("?provider=nope")).toEqual([]);
  });

  test("id filters by case-insensitive substring", async () => {
    const ids = (await models("?id=GPT-5")).map((m) => m.id);
    expect(ids).toContain("openai/gpt-5");
    expect(ids).toContain("openai/gpt-5-mini");
    for (const id of ids) expect(id.toLowerCase()).toContain("gpt-5");
    expect(ids.length).toBeLessThan(catalog.listModels().length);
  });

  test("input_modality and output_modality filter by modality, and filters combine", async () => {
    const all = await models();
    const image = await models("?input_modality=image");
    expect(image.length).toBeGreaterThan(0);
    expect(image.length).toBeLessThan(all.length);
    for (const model of image) expect(model.input_modalities).toContain("image");
    const text = await models("?output_modality=text");
    for (const model of text) expect(model.output_modalities).toContain("text");
    expect(await models("?output_modality=video")).toEqual([]);
    const both = await models("?provider=openai&input_modality=image&id=mini");
    expect(both.length).toBeGreaterThan(0);
    for (const model of both) {
      expect(model.id).toContain("mini");
      expect(model.id.startsWith("openai/")).toBe(true);
      expect(model.input_modalities).toContain("image");
    }
  });
});

describe("GET /v1/providers", () => {
  test("lists every catalog provider in the public discovery shape with zeroed figures before any traffic", async () => {
    const response = await server.api<{ data: ProviderBody[] }>("GET", "/v1/providers");
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(data.map((p) => p.id)).toEqual(catalog.listProviders().map((p) => p.id));
    for (const provider of data) {
      const entry = catalog.getProvider(provider.id)!;
      expect(provider).toMatchObject({
        name: entry.name,
        community: entry.community,
        byok: entry.byok,
        status: "active",
        rate_limit: { current_rpm: 0, declared_rpm: null },
        metrics_window_seconds: 3600,
        aggregate: { request_count: 0, success_rate: 0, p50_latency_ms: 0, cache_hit_rate: 0 },
      });
      const served = catalog.listModels().filter((m) => m.endpoints.some((e) => e.provider === provider.id)).map((m) => m.id);
      expect(provider.models.map((m) => m.id)).toEqual(served);
      for (const model of provider.models) {
        expect(model.metrics).toEqual({ request_count: 0, success_rate: 0, p50_latency_ms: 0 });
        expect(typeof model.pricing.input_tokens.no_cache).toBe("number");
      }
    }
    const anthropic = data.find((p) => p.id === "anthropic")!;
    expect(anthropic.models.find((m) => m.id === "anthropic/claude-sonnet-4.5")!.pricing.output_tokens.text).toBe(
      catalog.getModel("anthropic/claude-sonnet-4.5")!.endpoints[0]!.pricing.output,
    );
    expect(response.text).not.toContain("provider_model_id");
  });
});

describe("OpenAPI", () => {
  test("the three public discovery and statistics routes are documented under the public tag", async () => {
    const paths = (await server.api("GET", "/openapi/json")).body.paths as Record<string, Record<string, { tags?: string[]; summary?: string }>>;
    for (const path of ["/v1/models", "/v1/providers", "/v1/stats/usage"]) {
      expect(paths[path]!.get!.tags).toEqual(["public"]);
      expect(paths[path]!.get!.summary!.length).toBeGreaterThan(0);
    }
  });
});

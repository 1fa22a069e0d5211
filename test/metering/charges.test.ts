import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type postgres from "postgres";
import type { InferenceHarness } from "../support/inference-harness";
import type { MockUsage } from "../support/mock-upstreams";
import { PROTOCOLS, UPSTREAM, catalogPricing, type Buckets, flush, handCharge, recordsFor, send, sseJson, type Protocol, startMeteringHarness, stopMeteringHarness } from "./metering-support";

let harness: InferenceHarness;
let sql: postgres.Sql;
beforeAll(async () => {
  ({ harness, sql } = await startMeteringHarness());
});
afterAll(() => stopMeteringHarness(harness));

const CACHED: MockUsage = { prompt: 1000, completion: 200, reasoning: 50, cacheRead: 600, cacheWrite: 100 };

/**
 * What each wire can say about CACHED, normalised (prompt inclusive of cache, completion
 * inclusive of reasoning), and the charge worked out by hand from the catalog prices:
 *   OpenAI chat  prompt_tokens 1000 (cached_tokens 600, no write counter), reasoning 50
 *                400 × 0.15 + 600 × 0.075 + (150 + 50) × 0.6                 =   225
 *   Responses    input_tokens 1000 (cached 600), reasoning 50
 *                400 × 0.25 + 600 × 0.025 + 200 × 2                          =   515
 *   Anthropic    input_tokens 300 EXCLUSIVE of cache_read 600 and cache_creation 100;
 *                no reasoning counter (thinking bills inside output_tokens)
 *                300 × 3 + 600 × 0.3 + 100 × 3.75 + 200 × 15                 =  4455
 *   Gemini       promptTokenCount 1000 (cachedContent 600), candidates 150 + thoughts 50
 *                400 × 0.3 + 600 × 0.03 + 200 × 2.5                          =   638
 * On the wires without a cache-write counter the 100 written tokens are inside the
 * prompt count and bill as uncached input.
 */
const EXPECTED: Record<Protocol, { tokens: Record<string, number>; charge: number; buckets: Required<Buckets> }> = {
  "openai-chat": {
    tokens: { prompt_tokens: 1000, completion_tokens: 200, reasoning_tokens: 50, cache_read_tokens: 600, cache_write_tokens: 0 },
    charge: 225,
    buckets: { uncachedInput: 400, cacheRead: 600, cacheWrite: 0, output: 150, reasoning: 50 },
  },
  "openai-responses": {
    tokens: { prompt_tokens: 1000, completion_tokens: 200, reasoning_tokens: 50, cache_read_tokens: 600, cache_write_tokens: 0 },
    charge: 515,
    buckets: { uncachedInput: 400, cacheRead: 600, cacheWrite: 0, output: 150, reasoning: 50 },
  },
  "anthropic-messages": {
    tokens: { prompt_tokens: 1000, completion_tokens: 200, reasoning_tokens: 0, cache_read_tokens: 600, cache_write_tokens: 100 },
    charge: 4455,
    buckets: { uncachedInput: 300, cacheRead: 600, cacheWrite: 100, output: 200, reasoning: 0 },
  },
  "google-generate-content": {
    tokens: { prompt_tokens: 1000, completion_tokens: 200, reasoning_tokens: 50, cache_read_tokens: 600, cache_write_tokens: 0 },
    charge: 638,
    buckets: { uncachedInput: 400, cacheRead: 600, cacheWrite: 0, output: 150, reasoning: 50 },
  },
};

describe("cache and reasoning tokens from each upstream protocol", () => {
  for (const upstream of PROTOCOLS) {
    const clients = [...new Set<Protocol>([upstream, "openai-chat"])];
    for (const client of clients) {
      for (const stream of [false, true]) {
        test(`${upstream} upstream, ${client} client, ${stream ? "stream" : "sync"}: normalised tokens and charge ${EXPECTED[upstream].charge} µUSD`, async () => {
          const target = UPSTREAM[upstream];
          harness.mocks[target.mock].queueScenarios({ kind: "reasoning", usage: CACHED });
          const sent = await send(harness.server.url, harness.account.apiKey, client, target.model, { stream });
          expect(sent.status).toBe(200);
          await flush(harness);
          const [record] = await recordsFor(sql, sent.requestId);
          const expected = EXPECTED[upstream];
          expect(record).toMatchObject({ ...expected.tokens, billing_status: "computed", final_charge_micro_usd: expected.charge });
          expect(record.usage_evidence.effective_usage).toMatchObject(expected.tokens);
          // Cross-check the literal against the catalog prices of the endpoint that served.
          expect(handCharge(catalogPricing(upstream), expected.buckets)).toBe(expected.charge);
          // The record keeps what the charge was computed from: the serving endpoint's pricing and the buckets.
          const pricing = catalogPricing(upstream);
          expect(record.charge_audit.pricing).toMatchObject({ input: pricing.input, output: pricing.output, cacheRead: pricing.cache_read, cacheWrite: pricing.cache_write });
          expect(record.charge_audit.buckets).toEqual(expected.buckets);
        });
      }
    }
  }
});

describe("rounding", () => {
  test("the exact sum is rounded once: 3 × 0.15 + 5 × 0.075 = 0.825 µUSD bills 1, not 0 + 0", async () => {
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 8, completion: 0, cacheRead: 5 } });
    const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", "mock-openai/gpt-4o-mini");
    await flush(harness);
    const [record] = await recordsFor(sql, sent.requestId);
    expect(record).toMatchObject({ billing_status: "computed", final_charge_micro_usd: 1 });
  });

  test("2 × 0.3 + 1 × 0.03 + 1 × 2.5 = 3.13 µUSD bills 3, not 1 + 0 + 3", async () => {
    harness.mocks.google.queueScenarios({ kind: "text", usage: { prompt: 3, completion: 1, cacheRead: 1 } });
    const sent = await send(harness.server.url, harness.account.apiKey, "google-generate-content", "mock-google/gemini-2.5-flash");
    await flush(harness);
    const [record] = await recordsFor(sql, sent.requestId);
    expect(record).toMatchObject({ billing_status: "computed", final_charge_micro_usd: 3 });
  });
});

describe("usage.cost visible to chat clients", () => {
  const USAGE: MockUsage = { prompt: 2345, completion: 678, cacheRead: 1000 };
  for (const upstream of ["openai-chat", "anthropic-messages"] as const) {
    const target = UPSTREAM[upstream];

    test(`sync (${upstream} upstream): usage.cost_micro_usd is the record's final charge, usage.cost the same in USD`, async () => {
      harness.mocks[target.mock].queueScenarios({ kind: "text", usage: USAGE });
      const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", target.model);
      expect(sent.status).toBe(200);
      await flush(harness);
      const [record] = await recordsFor(sql, sent.requestId);
      expect(record.final_charge_micro_usd).toBeGreaterThan(0);
      expect(sent.json.usage.cost_micro_usd).toBe(record.final_charge_micro_usd);
      expect(sent.json.usage.cost).toBe(record.final_charge_micro_usd / 1_000_000);
      expect(sent.json.usage.prompt_tokens).toBe(USAGE.prompt);
    });

    test(`stream with include_usage (${upstream} upstream): the final usage chunk carries the cost`, async () => {
      harness.mocks[target.mock].queueScenarios({ kind: "text", usage: USAGE });
      const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", target.model, { stream: true, includeUsage: true });
      expect(sent.status).toBe(200);
      expect(sent.text.endsWith("data: [DONE]\n\n")).toBe(true);
      const withUsage = sseJson(sent.text).filter((chunk) => chunk.usage);
      expect(withUsage).toHaveLength(1);
      await flush(harness);
      const [record] = await recordsFor(sql, sent.requestId);
      expect(record.final_charge_micro_usd).toBeGreaterThan(0);
      expect(withUsage[0].usage.cost_micro_usd).toBe(record.final_charge_micro_usd);
      expect(withUsage[0].usage.cost).toBe(record.final_charge_micro_usd / 1_000_000);
    });

    if (upstream === "openai-chat") {
      test("usage riding the finish chunk (non-empty choices) is billed as reported and shown with its cost", async () => {
        harness.mocks.openai.queueScenarios({ kind: "text", usage: USAGE, finalChunkHasChoicesAndUsage: true });
        const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", target.model, { stream: true, includeUsage: true });
        await flush(harness);
        const [record] = await recordsFor(sql, sent.requestId);
        expect(record).toMatchObject({ prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion, cache_read_tokens: 1000 });
        expect(record.usage_evidence.source).toBe("provider_reported");
        expect(record.final_charge_micro_usd).toBe(handCharge(catalogPricing("openai-chat"), { uncachedInput: 1345, cacheRead: 1000, output: 678 }));
        const withUsage = sseJson(sent.text).filter((chunk) => chunk.usage);
        expect(withUsage.at(-1).usage.cost_micro_usd).toBe(record.final_charge_micro_usd);
      });
    }

    test(`stream without include_usage (${upstream} upstream): no usage chunk is shown, the request is still charged`, async () => {
      harness.mocks[target.mock].queueScenarios({ kind: "text", usage: USAGE });
      const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", target.model, { stream: true });
      expect(sent.text).not.toContain('"usage":{');
      expect(sent.text).not.toContain("cost_micro_usd");
      await flush(harness);
      const [record] = await recordsFor(sql, sent.requestId);
      expect(record.final_charge_micro_usd).toBeGreaterThan(0);
    });
  }
});

describe("the charge visible to clients of other protocols: settlement receipt", () => {
  for (const client of ["openai-responses", "anthropic-messages", "google-generate-content"] as const) {
    test(`${client} client (anthropic upstream, stream): GET /v1/requests/{id}/settlement states the record's charge and buckets`, async () => {
      harness.mocks.anthropic.queueScenarios({ kind: "text", usage: CACHED });
      const sent = await send(harness.server.url, harness.account.apiKey, client, UPSTREAM["anthropic-messages"].model, { stream: true });
      expect(sent.status).toBe(200);
      await flush(harness);
      const receipt = await harness.server.api("GET", `/v1/requests/${encodeURIComponent(sent.requestId)}/settlement`, {
        headers: { "x-api-key": harness.account.apiKey },
      });
      expect(receipt.status).toBe(200);
      expect(receipt.body).toMatchObject({
        request_id: sent.requestId,
        state: "computed",
        model_id: "mock-anthropic/claude-sonnet-4-5",
        provider_id: "mock-anthropic",
        usage: { uncached_input_tokens: 300, cache_read_tokens: 600, cache_write_tokens: 100, output_tokens: 200, reasoning_tokens: 0 },
        final_charge_micro_usd: EXPECTED["anthropic-messages"].charge,
      });
    });
  }
});

import { describe, expect, test } from "bun:test";
import type { IrUsage, ProtocolId } from "../../src/ir";
import { billingBuckets, computeCharge } from "../../src/metering/compute-charge";
import { makeCountsInclusive } from "../../src/protocols/openai-shared/make-counts-inclusive";
import { loadCatalog } from "../../src/providers/catalog";
import { codecFor } from "../../src/translation/codec-registry";
import { REPLAY_SEEDS, splitAtRandom } from "../support/split-chunks";
import { decodePieces, readFixture, testContext } from "./openai-chat/replay-sse";

/**
 * The table "Vendor usage conventions" in src/protocols/README.md, one row per vendor of
 * the built-in catalog, each checked on a usage object recorded from that vendor
 * (test/fixtures/<protocol>/SOURCES.md names where each recording comes from). Every
 * decoded usage must be in the IR's convention: prompt includes cache read and write,
 * completion includes reasoning, so no billing bucket is negative.
 */
function usageOfResponse(protocol: ProtocolId, name: string): IrUsage {
  const usage = codecFor(protocol).decodeResponse(JSON.parse(readFixture(protocol, name))).usage;
  if (usage === undefined) throw new Error(`${name} decoded without usage`);
  return withoutRaw(usage);
}

/** The last usage of a recorded stream, the same at every chunking. */
function usageOfStream(protocol: ProtocolId, name: string): IrUsage {
  const text = readFixture(protocol, name);
  const lastUsage = (pieces: string[]) => {
    const parts = decodePieces(codecFor(protocol).createStreamDecoder(), pieces);
    const usages = parts.flatMap((part) => (part.type === "usage" ? [part.usage] : []));
    return usages.length === 0 ? undefined : withoutRaw(usages[usages.length - 1]!);
  };
  const whole = lastUsage([text]);
  if (whole === undefined) throw new Error(`${name} decoded without usage`);
  for (const seed of REPLAY_SEEDS) expect(lastUsage(splitAtRandom(text, seed))).toEqual(whole);
  return whole;
}

function withoutRaw(usage: IrUsage): IrUsage {
  const { raw: _raw, ...counts } = usage;
  return counts;
}

function expectBillable(usage: IrUsage): void {
  const buckets = billingBuckets(usage);
  expect(Object.values(buckets).every((tokens) => tokens >= 0)).toBe(true);
}

describe("vendor usage conventions, each on a recorded usage object", () => {
  test("openai (chat, through Azure): reasoning is inside completion_tokens", () => {
    // prompt 15 + completion 78 = total 93, reasoning 64 of the 78.
    const usage = usageOfStream("openai-chat", "stream-azure-reasoning.sse");
    expect(usage).toEqual({ promptTokens: 15, completionTokens: 78, reasoningTokens: 64, cacheReadTokens: 0 });
    expectBillable(usage);
  });

  test("openai (chat): a plain answer's counts are taken as they are", () => {
    expect(usageOfResponse("openai-chat", "response-openai-text.json")).toEqual({ promptTokens: 16, completionTokens: 363, reasoningTokens: 0, cacheReadTokens: 0 });
  });

  test("openai (Responses): cached tokens are inside input_tokens and reasoning inside output_tokens", () => {
    // 7243 + 423 = 7666 = total_tokens.
    const usage = usageOfResponse("openai-responses", "response-openai-reasoning-cache.json");
    expect(usage).toEqual({ promptTokens: 7243, completionTokens: 423, reasoningTokens: 58, cacheReadTokens: 3072 });
    expectBillable(usage);
  });

  test("anthropic: cache reads and writes are outside input_tokens, added back into the prompt", () => {
    // message_delta repeats the input side: input 6, cache write 3337, cache read 6289, output 198.
    const usage = usageOfStream("anthropic-messages", "stream-anthropic-prompt-cache.sse");
    expect(usage).toEqual({
      promptTokens: 6 + 3337 + 6289,
      completionTokens: 198,
      reasoningTokens: 0,
      cacheReadTokens: 6289,
      cacheWriteTokens: 3337,
      webSearchCount: 0,
    });
    expectBillable(usage);
  });

  test("anthropic: thinking tokens are inside output_tokens", () => {
    const usage = usageOfResponse("anthropic-messages", "response-anthropic-thinking-tokens.json");
    expect(usage).toEqual({ promptTokens: 51, completionTokens: 1699, reasoningTokens: 139, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expectBillable(usage);
  });

  test("google: thoughts are outside candidatesTokenCount, added back into the completion", () => {
    // 9 + 29 + 282 = 320 = totalTokenCount.
    const usage = usageOfResponse("google-generate-content", "response-google-thoughts.json");
    expect(usage).toEqual({ promptTokens: 9, completionTokens: 29 + 282, reasoningTokens: 282 });
    expectBillable(usage);
  });

  test("deepseek: cache hits are inside prompt_tokens and reasoning inside completion_tokens", () => {
    // prompt_cache_hit_tokens 320 + prompt_cache_miss_tokens 19 = prompt_tokens 339; 339 + 92 = total 431.
    const usage = usageOfResponse("openai-chat", "response-deepseek-reasoning-cache.json");
    expect(usage).toEqual({ promptTokens: 339, completionTokens: 92, reasoningTokens: 48, cacheReadTokens: 320 });
    expectBillable(usage);
  });

  test("groq: reasoning is inside completion_tokens", () => {
    // 17 + 649 = total 666, reasoning 570 of the 649.
    const usage = usageOfResponse("openai-chat", "response-groq-reasoning.json");
    expect(usage).toEqual({ promptTokens: 17, completionTokens: 649, reasoningTokens: 570 });
    expectBillable(usage);
  });

  test("mistral: thinking is counted inside completion_tokens, with no reasoning count of its own", () => {
    // 26 + 112 = total 138; the answer is mostly a thinking part, so the thinking is in the 112.
    const usage = usageOfResponse("openai-chat", "response-mistral-large-thinking.json");
    expect(usage).toEqual({ promptTokens: 26, completionTokens: 112, cacheReadTokens: 0 });
    expectBillable(usage);
  });

  test("xai: reasoning is outside completion_tokens, added into the completion (total_tokens says so)", () => {
    // prompt 12 + completion 1 + reasoning 228 = total 241; cached 2 of the 12.
    const usage = usageOfResponse("openai-chat", "response-xai-reasoning.json");
    expect(usage).toEqual({ promptTokens: 12, completionTokens: 1 + 228, reasoningTokens: 228, cacheReadTokens: 2 });
    expectBillable(usage);
  });

  test("xai: the same on a recorded stream, whose cached tokens are inside prompt_tokens", () => {
    // 291 + 26 + 196 = total 513; cached 290 of the 291.
    const usage = usageOfStream("openai-chat", "stream-xai-reasoning-tool-call.sse");
    expect(usage).toEqual({ promptTokens: 291, completionTokens: 26 + 196, reasoningTokens: 196, cacheReadTokens: 290 });
    expectBillable(usage);
  });
});

describe("an xAI answer is billed and reported as xAI counts it", () => {
  // The built-in catalog's x-ai/grok-3-mini prices; xAI reports its own cost in units of 1e-10 USD.
  const pricing = loadCatalog().endpointsFor("x-ai/grok-3-mini")[0]!.pricing;

  test("the charge equals the cost xAI reported with the recording", () => {
    for (const [usage, name] of [
      [usageOfResponse("openai-chat", "response-xai-reasoning.json"), "response-xai-reasoning.json"],
      [usageOfStream("openai-chat", "stream-xai-reasoning-tool-call.sse"), "stream-xai-reasoning-tool-call.sse"],
    ] as const) {
      const ticks = Number(/"cost_in_usd_ticks":\s*(\d+)/.exec(readFixture("openai-chat", name))![1]);
      const charge = computeCharge(usage, pricing);
      expect(charge.status).toBe("computed");
      // Switchyard bills whole micro-USD (one rounding of the exact sum).
      expect(charge.chargeMicroUsd).toBe(Math.round(ticks / 10_000));
    }
  });

  test("a Gemini client sees the answer's candidates and thoughts, and xAI's total", () => {
    const response = codecFor("openai-chat").decodeResponse(JSON.parse(readFixture("openai-chat", "response-xai-reasoning.json")));
    const body = codecFor("google-generate-content").encodeResponse(response, testContext()).value;
    expect(body.usageMetadata).toEqual({ promptTokenCount: 12, candidatesTokenCount: 1, thoughtsTokenCount: 228, totalTokenCount: 241, cachedContentTokenCount: 2 });
  });

  test("a chat client of another protocol's upstream gets completion_tokens inclusive of reasoning", () => {
    const response = codecFor("openai-chat").decodeResponse(JSON.parse(readFixture("openai-chat", "response-xai-reasoning.json")));
    const body = codecFor("openai-chat").encodeResponse(response, testContext()).value;
    expect(body.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 229, total_tokens: 241, completion_tokens_details: { reasoning_tokens: 228 } });
  });
});

describe("where reasoning and cached tokens sit is read from the vendor's total", () => {
  test("cached tokens outside prompt_tokens are added to the prompt (as xAI reported in vercel/ai#12485)", () => {
    const usage = makeCountsInclusive({ promptTokens: 4142, completionTokens: 254, cacheReadTokens: 4328 }, 8724);
    expect(usage).toEqual({ promptTokens: 4142 + 4328, completionTokens: 254, cacheReadTokens: 4328 });
  });

  test("both outside at once", () => {
    expect(makeCountsInclusive({ promptTokens: 10, completionTokens: 5, reasoningTokens: 7, cacheReadTokens: 4 }, 26)).toEqual({
      promptTokens: 14,
      completionTokens: 12,
      reasoningTokens: 7,
      cacheReadTokens: 4,
    });
  });

  test("without a total, a count larger than the one it would sit inside is outside; otherwise inside", () => {
    expect(makeCountsInclusive({ promptTokens: 12, completionTokens: 1, reasoningTokens: 290 }, undefined)).toEqual({ promptTokens: 12, completionTokens: 291, reasoningTokens: 290 });
    expect(makeCountsInclusive({ promptTokens: 12, completionTokens: 300, reasoningTokens: 290 }, undefined)).toEqual({ promptTokens: 12, completionTokens: 300, reasoningTokens: 290 });
  });

  test("a total that fits no placement changes nothing that could be inside", () => {
    expect(makeCountsInclusive({ promptTokens: 20, completionTokens: 30, reasoningTokens: 10, cacheReadTokens: 5 }, 999)).toEqual({
      promptTokens: 20,
      completionTokens: 30,
      reasoningTokens: 10,
      cacheReadTokens: 5,
    });
  });
});

import { describe, expect, test } from "bun:test";
import type { IrContentPart, IrRequest } from "../../src/ir";
import { DEFAULT_MAX_OUTPUT_TOKENS, highestRates, outputTokenCeiling, reservationFor, upstreamMaxTokens, wholeMicroUsd } from "../../src/admission/cost-ceiling";
import { DEFAULT_CONTEXT_WINDOW_TOKENS, DEFAULT_TOKENS_PER_FILE, DEFAULT_TOKENS_PER_IMAGE, promptShape, promptTokenCeiling } from "../../src/admission/prompt-token-ceiling";
import type { ModelTokenLimits } from "../../src/providers/catalog";
import type { CatalogPricing } from "../../src/providers/pricing";
import type { AttemptCandidate } from "../../src/routing/attempt-candidate";

// Rates of 1 µUSD per token in and out make a reservation read as prompt + output tokens.
const UNIT: CatalogPricing = { input: 1, output: 1, contextTiers: [] };

function candidate(overrides: Partial<AttemptCandidate> = {}): AttemptCandidate {
  return {
    protocol: "openai-chat",
    baseUrl: "http://upstream.example/v1",
    providerModelId: "m",
    apiKey: "k",
    modelId: "acme/m",
    providerId: "acme",
    statsKey: "acme/m",
    pricing: UNIT,
    limits: {},
    funding: "cloud_credit",
    routingProfile: "balanced",
    ...overrides,
  };
}

function request(content: IrContentPart[], extra: Partial<IrRequest> = {}): IrRequest {
  return { model: "acme/m", messages: [{ role: "user", content }], params: { maxTokens: 100 }, stream: false, ...extra };
}

const text = (value: string): IrContentPart => ({ type: "text", text: value });
/** Request, message and part allowances of a one-message, one-part request: 64 + 16 + 8. */
const ONE_PART = 88;

describe("prompt token ceiling", () => {
  test("counts UTF-8 bytes, not characters: é is 2 bytes, an emoji 4", () => {
    expect(promptTokenCeiling(promptShape(request([text("hi")])), {})).toBe(ONE_PART + 2);
    expect(promptTokenCeiling(promptShape(request([text("é🙂")])), {})).toBe(ONE_PART + 6);
  });

  test("the system prompt counts", () => {
    expect(promptTokenCeiling(promptShape(request([text("hi")], { system: "x".repeat(500) })), {})).toBe(ONE_PART + 2 + 500);
  });

  test("tool definitions count: names, descriptions and schemas as JSON, plus the tool-use preamble and a per-tool allowance", () => {
    const parameters = { type: "object", properties: { id: { type: "string" } } };
    const tools = Array.from({ length: 8 }, (_, i) => ({ name: `tool_${i}`, description: "Looks a record up.", parameters }));
    const bound = promptTokenCeiling(promptShape(request([text("hi")], { tools })), {});
    const perTool = 32 + "tool_0".length + "Looks a record up.".length + JSON.stringify(parameters).length;
    expect(bound).toBe(ONE_PART + 2 + 1_024 + 8 * perTool);
  });

  test("a response schema counts like a tool", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } } };
    const bound = promptTokenCeiling(promptShape(request([text("hi")], { responseFormat: { type: "json_schema", name: "answer", schema } })), {});
    expect(bound).toBe(ONE_PART + 2 + 1_024 + "answer".length + JSON.stringify(schema).length);
  });

  test("reasoning carried back, tool calls and tool results count, signatures included", () => {
    const history: IrRequest = {
      model: "acme/m",
      params: {},
      stream: false,
      messages: [
        { role: "assistant", content: [{ type: "reasoning", text: "r".repeat(10), signature: "s".repeat(20), redactedData: "d".repeat(30) }, { type: "tool_call", id: "call_1", name: "get", arguments: '{"a":1}' }] },
        { role: "tool", content: [{ type: "tool_result", callId: "call_1", output: "o".repeat(40) }] },
      ],
    };
    // 64 + 2 messages × 16 + 3 parts × 8, then the bytes.
    expect(promptTokenCeiling(promptShape(history), {})).toBe(64 + 32 + 24 + 60 + (6 + 3 + 7) + (6 + 40));
  });

  test("an image is bounded per item, whatever its base64 size: the catalog's bound, else the default", () => {
    const image: IrContentPart = { type: "image", mediaType: "image/png", data: "A".repeat(3_000_000) };
    const shape = promptShape(request([text("hi"), image]));
    expect(promptTokenCeiling(shape, {})).toBe(ONE_PART + 2 + 8 + DEFAULT_TOKENS_PER_IMAGE);
    expect(promptTokenCeiling(shape, { maxTokensPerImage: 1_600 })).toBe(ONE_PART + 2 + 8 + 1_600);
  });

  test("images inside tool results count too", () => {
    const result: IrContentPart = { type: "tool_result", callId: "c", output: [{ type: "image", url: "https://example.test/a.png" }] };
    expect(promptShape(request([result])).images).toBe(1);
  });

  test("a document is bounded per file, and never above the model's context window", () => {
    const file: IrContentPart = { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "a.pdf" };
    const shape = promptShape(request([file]));
    expect(promptTokenCeiling(shape, { maxInputTokens: 10_000_000 })).toBe(ONE_PART + 5 + DEFAULT_TOKENS_PER_FILE);
    expect(promptTokenCeiling(shape, {})).toBe(DEFAULT_CONTEXT_WINDOW_TOKENS);
    expect(promptTokenCeiling(shape, { maxTokensPerFile: 3_000 })).toBe(ONE_PART + 5 + 3_000);
    expect(promptTokenCeiling(shape, { maxInputTokens: 200_000 })).toBe(200_000);
  });

  test("context stored upstream (previous_response_id, cachedContent, hosted tools) is bounded by the context window alone", () => {
    const limits: ModelTokenLimits = { maxInputTokens: 272_000 };
    for (const field of ["previous_response_id", "cachedContent", "tools"]) {
      const shape = promptShape(request([text("hi")], { extras: { protocol: "openai-responses", fields: { [field]: "x" } } }));
      expect(promptTokenCeiling(shape, limits)).toBe(272_000);
    }
    // Other unmapped fields count by their bytes.
    const metadata = { extras: { protocol: "openai-responses" as const, fields: { metadata: { a: "b" } } } };
    expect(promptTokenCeiling(promptShape(request([text("hi")], metadata)), limits)).toBe(ONE_PART + 2 + JSON.stringify({ metadata: { a: "b" } }).length);
  });
});

describe("output token ceiling", () => {
  const noLimit: IrRequest = { ...request([text("hi")]), params: {} };

  test("the client's max tokens, capped by the model's maximum", () => {
    expect(outputTokenCeiling(request([text("hi")]), candidate())).toBe(100);
    expect(outputTokenCeiling({ ...noLimit, params: { maxTokens: 50_000 } }, candidate({ limits: { maxOutputTokens: 16_384 } }))).toBe(16_384);
  });

  test("without one, the model's maximum from the catalog, and nothing is sent upstream", () => {
    const known = candidate({ limits: { maxOutputTokens: 16_384 } });
    expect(outputTokenCeiling(noLimit, known)).toBe(16_384);
    expect(upstreamMaxTokens(noLimit, known)).toBeUndefined();
  });

  test("without one and without a catalog maximum, the default is reserved and sent upstream", () => {
    expect(outputTokenCeiling(noLimit, candidate())).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(upstreamMaxTokens(noLimit, candidate())).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(upstreamMaxTokens(request([text("hi")]), candidate())).toBeUndefined();
  });

  test("towards Messages, which needs a limit, the default is sent: above the thinking budget, within the model's maximum", () => {
    const messages = candidate({ protocol: "anthropic-messages", limits: { maxOutputTokens: 64_000 } });
    const thinking: IrRequest = { ...noLimit, params: { thinkingBudgetTokens: 10_000 } };
    expect(upstreamMaxTokens(thinking, messages)).toBe(10_000 + DEFAULT_MAX_OUTPUT_TOKENS);
    expect(outputTokenCeiling(thinking, messages)).toBe(10_000 + DEFAULT_MAX_OUTPUT_TOKENS);
    expect(upstreamMaxTokens(thinking, candidate({ protocol: "anthropic-messages", limits: { maxOutputTokens: 8_000 } }))).toBe(8_000);
  });

  test("n completions bill n outputs", () => {
    const three: IrRequest = { ...request([text("hi")]), extras: { protocol: "openai-chat", fields: { n: 3 } } };
    expect(outputTokenCeiling(three, candidate())).toBe(300);
  });
});

describe("reservationFor", () => {
  test("prompt ceiling at the highest input-side rate plus output ceiling at the output rate", () => {
    const anthropic: CatalogPricing = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, contextTiers: [] };
    // (88 + 2) × 3.75 + 100 × 15 = 337.5 + 1500 → 1838.
    expect(reservationFor(request([text("hi")]), [candidate({ pricing: anthropic })])).toBe(1_838);
  });

  test("a context tier the prompt ceiling can reach prices the whole reservation, even when a typical prompt stays below it", () => {
    const tiered: CatalogPricing = { input: 1, output: 2, contextTiers: [{ aboveInputTokens: 100, input: 2, output: 4 }, { aboveInputTokens: 1_000_000, input: 9, output: 9 }] };
    expect(highestRates(tiered, 100)).toEqual({ input: 1, output: 2 });
    expect(highestRates(tiered, 101)).toEqual({ input: 2, output: 4 });
    // "x" × 50 → 138 tokens, above the first tier only: 138 × 2 + 100 × 4.
    expect(reservationFor(request([text("x".repeat(50))]), [candidate({ pricing: tiered })])).toBe(138 * 2 + 100 * 4);
  });

  test("the most expensive fallback candidate sets the reservation", () => {
    const cheap = candidate({ pricing: { input: 1, output: 1, contextTiers: [] } });
    const dear = candidate({ pricing: { input: 2, output: 10, contextTiers: [] } });
    expect(reservationFor(request([text("hi")]), [cheap, dear])).toBe(90 * 2 + 100 * 10);
  });

  test("the same request bound differently by each candidate's own limits", () => {
    const image: IrContentPart = { type: "image", url: "https://example.test/a.png" };
    const small = candidate({ limits: { maxTokensPerImage: 1_000 } });
    const large = candidate({ limits: { maxTokensPerImage: 5_000 } });
    expect(reservationFor(request([image]), [small, large])).toBe(ONE_PART + 5_000 + 100);
  });
});

describe("wholeMicroUsd", () => {
  const byString = (ceiling: number) => Math.max(1, Math.ceil(Number(ceiling.toPrecision(12))));

  test("float noise above an exact value is dropped before rounding up; a real fraction rounds up", () => {
    expect(wholeMicroUsd(10 * 1.1 + 100 * 4.4)).toBe(451);
    expect(wholeMicroUsd(451.0000001)).toBe(452);
    expect(wholeMicroUsd(451)).toBe(451);
    expect(wholeMicroUsd(0)).toBe(1);
    expect(wholeMicroUsd(0.3)).toBe(1);
  });

  test("the same as rounding through 12 significant digits, for products of catalog-like rates and counts, near integers included", () => {
    const rates = [0.075, 0.1, 0.15, 0.3, 0.6, 1.1, 1.25, 2.5, 3, 3.75, 4.4, 10, 15, 60, 0.0375, 1e-7];
    let checked = 0;
    for (let seed = 1; seed < 20_000; seed++) {
      const tokens = (seed * 7919) % 2_000_000;
      const output = (seed * 104_729) % 130_000;
      const input = rates[seed % rates.length]!;
      const outputRate = rates[(seed * 31) % rates.length]!;
      for (const ceiling of [tokens * input + output * outputRate, tokens * input, Math.round(tokens * input) + 1e-9 * (seed % 3), 1e12 + seed + 0.5 * (seed % 2), seed / 3]) {
        expect(wholeMicroUsd(ceiling)).toBe(byString(ceiling));
        checked++;
      }
    }
    expect(checked).toBe(99_995);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type postgres from "postgres";
import { encode as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { encode as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import type { InferenceHarness } from "../support/inference-harness";
import { codecFor } from "../../src/translation/codec-registry";
import { promptShape, promptTokenCeiling } from "../../src/admission/prompt-token-ceiling";
import { utf8Bytes } from "../../src/translation/utf8-bytes";
import { tokensFromChars } from "../../src/metering/estimate-tokens";
import { UPSTREAM, catalogPricing, flush, handCharge, recordsFor, send, sseJson, wallet, startMeteringHarness, stopMeteringHarness } from "./metering-support";

/**
 * Every upstream call the platform pays for is charged, at no less than its price
 * (src/metering/README.md, "What an upstream call is charged"): an answer a customer's own
 * response-side guardrail refuses, a stream cut by that guardrail or by the client, an
 * attempt the provider answered 200 that failed before a fallback served. Where the
 * provider's report never arrived, the estimate is an upper bound, measured here against
 * real tokenizers (gpt-tokenizer's o200k and cl100k encodings), never below them.
 */
let harness: InferenceHarness;
let sql: postgres.Sql;
beforeAll(async () => {
  ({ harness, sql } = await startMeteringHarness());
});
afterAll(() => stopMeteringHarness(harness));

/** The most tokens either real tokenizer makes of `text`. */
const realTokens = (text: string) => Math.max(o200k(text).length, cl100k(text).length);

/** Texts that characters ÷ 4 undercounts, and ordinary ones. */
const CORPUS: Record<string, string> = {
  english: "The quick brown fox jumps over the lazy dog. ".repeat(40),
  chinese: "今天天气很好，我们一起去公园散步吧。人工智能正在改变世界。".repeat(30),
  japanese: "こんにちは世界、今日はいい天気です。東京の桜はとても綺麗でした。".repeat(30),
  emoji: "😀🎉👍🏽🧑‍💻🚀🔥💯🙈".repeat(60),
  code: "function add(a: number, b: number): number {\n  return a + b; // sum\n}\n".repeat(30),
  base64: Buffer.from(Array.from({ length: 1500 }, (_, i) => (i * 7919) % 256)).toString("base64"),
};

/** A tool definition of about `bytes` bytes: a long description and a schema with many properties. */
function bigTool(index: number, bytes: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(properties).length < bytes / 2; i++) properties[`field_${i}`] = { type: "string", description: `The ${i}th field of tool ${index}, in free text.` };
  return { type: "function", function: { name: `tool_${index}`, description: "Looks things up. ".repeat(Math.ceil(bytes / 2 / 17)), parameters: { type: "object", properties } } };
}

describe("the estimate is an upper bound, measured against real tokenizers", () => {
  for (const [name, text] of Object.entries(CORPUS)) {
    test(`${name}: the prompt bound covers the whole upstream body's tokens, and the output's bytes its tokens`, () => {
      const body = { model: "gpt-4o-mini", messages: [{ role: "system", content: "Answer briefly." }, { role: "user", content: text }], tools: [bigTool(1, 4_000)] };
      const ir = codecFor("openai-chat").decodeRequest(body).value;
      const bound = promptTokenCeiling(promptShape(ir), {});
      // The whole JSON body, keys and punctuation included, tokenizes to more than what the model is shown.
      expect(bound).toBeGreaterThanOrEqual(realTokens(JSON.stringify(body)));
      expect(utf8Bytes(text)).toBeGreaterThanOrEqual(realTokens(text));
    });
  }

  test("characters ÷ 4, the estimator before, undercounts CJK and emoji (what this replaces)", () => {
    for (const name of ["chinese", "japanese", "emoji"]) expect(tokensFromChars(CORPUS[name]!.length)).toBeLessThan(realTokens(CORPUS[name]!));
  });
});

/** A guardrail whose `block` pattern the answer contains, bound to the account's namespace. */
async function blockAnswersWith(word: string): Promise<void> {
  const ns = `/v1/namespaces/${harness.account.namespaceId}`;
  const created = await harness.server.api("POST", `${ns}/policies`, {
    token: harness.account.apiKey,
    body: { name: `block ${word}`, kind: "guardrail", spec: { content_patterns: [{ name: word, pattern: word, action: "block" }] } },
  });
  expect(created.status).toBe(200);
  const bound = await harness.server.api("POST", `${ns}/policies/${created.body.id}/bind`, { token: harness.account.apiKey, body: { principal_type: "namespace", principal_id: harness.account.namespaceId } });
  expect(bound.status).toBe(200);
}

async function ledgerDebit(recordId: string): Promise<number> {
  const rows = await sql`select amount_micro_usd::int as amount from ledger_entries where request_record_id = ${recordId}`;
  return 0 - rows.reduce((sum, row) => sum + (row.amount as number), 0);
}

describe("a customer's own response-side guardrail does not make a call free", () => {
  beforeAll(() => blockAnswersWith("FORBIDDENWORD"));

  for (const client of ["openai-chat", "anthropic-messages"] as const) {
    test(`${client} → ${client}, whole answer: refused with 403, charged the reported usage, and the error says so`, async () => {
      const usage = { prompt: 30_023, completion: 30_004 };
      harness.mocks[UPSTREAM[client].mock].queueScenarios({ kind: "text", text: "Here it is: FORBIDDENWORD.", usage });
      const before = await wallet(sql, harness.account.accountId);
      const sent = await send(harness.server.url, harness.account.apiKey, client, UPSTREAM[client].model, { maxTokens: 30_004 * 2 });
      expect(sent.status).toBe(403);
      await flush(harness);
      const [record] = await recordsFor(sql, sent.requestId);
      const price = handCharge(catalogPricing(client), { uncachedInput: usage.prompt, output: usage.completion });
      expect(record).toMatchObject({ status: "failed", status_code: 403, billing_status: "computed", prompt_tokens: usage.prompt, completion_tokens: usage.completion, final_charge_micro_usd: price });
      expect(record.usage_evidence.source).toBe("provider_reported");
      expect(await ledgerDebit(record.id)).toBe(price);
      expect(sent.text).toContain(`charged ${price} micro-USD`);
      // The history shows the refusal and the charge.
      const history = await harness.server.api("GET", `/v1/requests?limit=20`, { token: harness.account.apiKey });
      const listed = history.body.data.find((entry: any) => entry.request_id === sent.requestId);
      expect(listed).toMatchObject({ status: "failed", final_charge_micro_usd: price, refused_by: expect.anything() });
      const after = await wallet(sql, harness.account.accountId);
      expect(before.balance - after.balance).toBe(price);
    });
  }

  test("openai-chat stream cut by the guardrail near its end: charged at least the real prompt, tools included", async () => {
    // The answer ends with the blocked word; the usage chunk would come after it, never read.
    const text = `${"All fine so far. ".repeat(100)}FORBIDDENWORD`;
    harness.mocks.openai.queueScenarios({ kind: "text", text, chunkDelayMs: 5, usage: { prompt: 1, completion: 1 } });
    const tools = Array.from({ length: 20 }, (_, i) => bigTool(i, 12_000));
    const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", UPSTREAM["openai-chat"].model, { stream: true, maxTokens: 2_000, extra: { tools } });
    expect(sent.status).toBe(200);
    await flush(harness);
    const [record] = await recordsFor(sql, sent.requestId);
    // What the upstream really tokenized: the body it was sent, measured.
    const upstreamBody = JSON.stringify(harness.mocks.openai.requests.at(-1)!.body);
    expect(record).toMatchObject({ status: "failed", billing_status: "computed" });
    expect(record.usage_evidence.source).toBe("estimated");
    expect(record.prompt_tokens).toBeGreaterThanOrEqual(realTokens(upstreamBody));
    expect(record.completion_tokens).toBeGreaterThanOrEqual(realTokens("All fine so far. ".repeat(100)));
    expect(record.final_charge_micro_usd).toBe(handCharge(catalogPricing("openai-chat"), { uncachedInput: record.prompt_tokens, output: record.completion_tokens }));
    expect(await ledgerDebit(record.id)).toBe(record.final_charge_micro_usd);
    // The error frame tells the client the request is charged.
    expect(sseJson(sent.text).some((frame) => /charged/.test(frame.error?.message ?? ""))).toBe(true);
  });
});

test("a client that leaves a Chinese tool-heavy stream midway is charged at least the real prompt and what it was sent", async () => {
  const prompt = CORPUS.chinese!;
  harness.mocks.openai.queueScenarios({ kind: "slow", delayMs: 10, chunkDelayMs: 60, text: "这是一个很长的回答。".repeat(40), usage: { prompt: 1, completion: 1 } });
  const controller = new AbortController();
  const requestId = `zh-${crypto.randomUUID()}`;
  const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${harness.account.apiKey}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: UPSTREAM["openai-chat"].model, stream: true, max_tokens: 4_000, tools: [bigTool(1, 12_000), bigTool(2, 12_000)], messages: [{ role: "user", content: prompt }] }),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  let seen = "";
  while ((seen.match(/"content":"/g) ?? []).length < 4) seen += new TextDecoder().decode((await reader.read()).value);
  controller.abort();
  await reader.cancel().catch(() => {});
  const received = sseJson(seen).reduce((all, chunk) => all + (chunk.choices?.[0]?.delta?.content ?? ""), "");
  let record: any;
  for (let i = 0; !record && i < 300; i++) {
    await flush(harness);
    [record] = await recordsFor(sql, requestId);
    if (!record) await Bun.sleep(50);
  }
  expect(record).toMatchObject({ status: "cancelled", billing_status: "computed" });
  expect(record.usage_evidence.source).toBe("estimated");
  expect(record.prompt_tokens).toBeGreaterThanOrEqual(realTokens(JSON.stringify(harness.mocks.openai.requests.at(-1)!.body)));
  expect(record.completion_tokens).toBeGreaterThanOrEqual(realTokens(received));
  expect(await ledgerDebit(record.id)).toBe(record.final_charge_micro_usd);
});

test("an attempt answered 200 whose body was cut before a fallback served is charged too, on an upper bound", async () => {
  harness.mocks.anthropic.queueScenarios({ kind: "stream_cut", usage: { prompt: 50, completion: 20 } });
  harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 30, completion: 7 } });
  const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", "ignored", { maxTokens: 100, extra: { models: [UPSTREAM["anthropic-messages"].model, UPSTREAM["openai-chat"].model] } });
  expect(sent.status).toBe(200);
  expect(sent.headers.get("x-switchyard-provider")).toBe("mock-openai");
  await flush(harness);
  const [record] = await recordsFor(sql, sent.requestId);
  const served = handCharge(catalogPricing("openai-chat"), { uncachedInput: 30, output: 7 });
  const cut = record.charge_audit.unserved_attempts[0];
  expect(cut.attempt_ordinal).toBe(1);
  // A whole body is generated before it is sent: the cut attempt's output is bounded by the
  // request's max tokens (100), its prompt by admission's ceiling, at Anthropic's rates.
  expect(cut.charge_micro_usd).toBeGreaterThanOrEqual(handCharge(catalogPricing("anthropic-messages"), { uncachedInput: 50, output: 100 }));
  expect(record.final_charge_micro_usd).toBe(served + cut.charge_micro_usd);
  expect(sent.json.usage.cost_micro_usd).toBe(record.final_charge_micro_usd);
  expect(await ledgerDebit(record.id)).toBe(record.final_charge_micro_usd);
});

test("a stream whose first event is the provider's error produced nothing and is not charged", async () => {
  harness.mocks.openai.queueScenarios({ kind: "stream_error", errorAfterChunks: 0 });
  const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", UPSTREAM["openai-chat"].model, { stream: true });
  expect(sent.status).toBeGreaterThanOrEqual(400);
  await flush(harness);
  const [record] = await recordsFor(sql, sent.requestId);
  expect(record).toMatchObject({ status: "failed", final_charge_micro_usd: 0 });
  expect(await ledgerDebit(record.id)).toBe(0);
});

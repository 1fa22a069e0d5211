import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type postgres from "postgres";
import { ESTIMATOR } from "../../src/metering/estimate-tokens";
import { PROMPT_OVERHEAD_TOKENS } from "../../src/admission/prompt-token-ceiling";
import type { InferenceHarness } from "../support/inference-harness";
import type { MockScenario } from "../support/mock-upstreams";
import {
  PROTOCOLS,
  UPSTREAM,
  catalogPricing,
  closeClients,
  database,
  flush,
  handCharge,
  normaliseRow,
  recordsFor,
  send,
  sseJson,
  usageReports,
  startMeteringHarness,
  stopMeteringHarness,
} from "./metering-support";

let harness: InferenceHarness;
let sql: postgres.Sql;
beforeAll(async () => {
  ({ harness, sql } = await startMeteringHarness());
});
afterAll(() => stopMeteringHarness(harness));

const USAGE = { prompt: 1234, completion: 567 };

describe("request records, every client × upstream pair", () => {
  for (const client of PROTOCOLS) {
    for (const upstream of PROTOCOLS) {
      for (const stream of [false, true]) {
        test(`${client} → ${upstream} ${stream ? "stream" : "sync"}: one record priced by the catalog endpoint, with one frame per usage report`, async () => {
          const target = UPSTREAM[upstream];
          const scenario: MockScenario = { kind: "text", usage: USAGE };
          harness.mocks[target.mock].queueScenarios(scenario);
          const requestId = `rec-${client}-${upstream}-${stream}-${crypto.randomUUID()}`;
          const sent = await send(harness.server.url, harness.account.apiKey, client, target.model, { stream, requestId });
          expect(sent.status).toBe(200);
          expect(sent.headers.get("x-request-id")).toBe(requestId);
          await flush(harness);

          const records = await recordsFor(sql, requestId);
          expect(records).toHaveLength(1);
          const record = records[0];
          expect(record).toMatchObject({
            request_id: requestId,
            account_id: harness.account.accountId,
            status: "succeeded",
            status_code: 200,
            billing_status: "computed",
            model_id: target.model,
            provider_id: target.providerId,
            // The catalog endpoint's id, not the dated slug the mock echoed.
            provider_model_id: target.upstreamId,
            streamed: stream,
            first_token_kind: "text",
            finish_reason: "stop",
            funding_source: "cloud_credit",
            prompt_tokens: USAGE.prompt,
            completion_tokens: USAGE.completion,
            reasoning_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
          });
          for (const field of ["ttft_ms", "request_duration_ms", "upstream_duration_ms", "generation_duration_ms"]) {
            expect(typeof record[field]).toBe("number");
            expect(record[field]).toBeGreaterThanOrEqual(0);
          }
          expect(record.request_duration_ms).toBeGreaterThanOrEqual(record.upstream_duration_ms);
          expect(record.upstream_duration_ms).toBeGreaterThanOrEqual(record.ttft_ms);
          expect(new Date(record.completed_at).getTime()).toBeGreaterThanOrEqual(new Date(record.created_at).getTime());

          const expected = handCharge(catalogPricing(upstream), { uncachedInput: USAGE.prompt, output: USAGE.completion });
          expect(expected).toBeGreaterThan(0);
          expect(record.final_charge_micro_usd).toBe(expected);

          const evidence = record.usage_evidence;
          expect(evidence.source).toBe("provider_reported");
          expect(evidence.raw_usage).toMatchObject({ prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion });
          expect(evidence.effective_usage).toMatchObject({ prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion });
          expect(evidence.estimator).toEqual({ chars_per_token: ESTIMATOR.chars_per_token, version: ESTIMATOR.version });
          const reports = usageReports(upstream, scenario, stream, client === "anthropic-messages" ? 1024 : undefined);
          expect(evidence.raw_usage_frames).toHaveLength(reports);
          evidence.raw_usage_frames.forEach((frame: any, index: number) => {
            expect(frame).toMatchObject({
              attempt_ordinal: 1,
              frame_ordinal: index + 1,
              frame_kind: "usage",
              provider_id: target.providerId,
              provider_model_id: target.upstreamId,
              account_label: "platform",
            });
          });
          // The last report is the whole usage on every wire.
          expect(evidence.raw_usage_frames.at(-1).usage.completion_tokens).toBe(USAGE.completion);
        });
      }
    }
  }
});

describe("failed attempts", () => {
  test("a 429 fallback: the record names the serving provider, only attempts that reported usage have frames", async () => {
    const requestId = `fallback-${crypto.randomUUID()}`;
    const openaiBefore = harness.mocks.openai.requests.length;
    const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", "ignored/by-models", {
      requestId,
      extra: { models: ["mock-openai/gpt-4o-mini@error429", "mock-anthropic/claude-sonnet-4-5"] },
    });
    expect(sent.status).toBe(200);
    expect(harness.mocks.openai.requests.length - openaiBefore).toBe(1);
    await flush(harness);
    const [record] = await recordsFor(sql, requestId);
    expect(record).toMatchObject({ status: "succeeded", provider_id: "mock-anthropic", model_id: "mock-anthropic/claude-sonnet-4-5", provider_model_id: "claude-sonnet-4-5" });
    // Priced by the serving endpoint (Sonnet), default mock usage 12 + 5.
    expect(record.final_charge_micro_usd).toBe(handCharge(catalogPricing("anthropic-messages"), { uncachedInput: 12, output: 5 }));
    const frames = record.usage_evidence.raw_usage_frames;
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.map((f: any) => [f.attempt_ordinal, f.frame_ordinal, f.provider_id, f.provider_model_id])).toEqual(
      frames.map((_: unknown, index: number) => [2, index + 1, "mock-anthropic", "claude-sonnet-4-5"]),
    );
    // The frames are the record's alone (migration 0030): the legacy table gets none.
    expect((await sql`select count(*)::int as count from usage_frames where request_record_id = ${record.id}`)[0]!.count).toBe(0);
  });

  test("a stream that reported usage and then broke before its first token keeps that frame as attempt 1", async () => {
    const requestId = `cut-${crypto.randomUUID()}`;
    // message_start (which carries usage) arrives, then the connection resets.
    harness.mocks.anthropic.queueScenarios({ kind: "stream_cut", cutAfterChunks: 1, usage: { prompt: 40, completion: 9 } });
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 30, completion: 7 } });
    const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", "ignored", {
      requestId,
      stream: true,
      extra: { models: ["mock-anthropic/claude-sonnet-4-5", "mock-openai/gpt-4o-mini"] },
    });
    expect(sent.status).toBe(200);
    expect(sent.headers.get("x-switchyard-provider")).toBe("mock-openai");
    await flush(harness);
    const [record] = await recordsFor(sql, requestId);
    expect(record).toMatchObject({ status: "succeeded", provider_id: "mock-openai", prompt_tokens: 30, completion_tokens: 7 });
    // The provider answered attempt 1 with 200 and had billed its prompt (message_start's 40
    // tokens) before the cut: it is charged too, its output from what it relayed (nothing).
    const served = handCharge(catalogPricing("openai-chat"), { uncachedInput: 30, output: 7 });
    const cutOff = handCharge(catalogPricing("anthropic-messages"), { uncachedInput: 40, output: 0 });
    expect(record.final_charge_micro_usd).toBe(served + cutOff);
    expect(record.warnings.map((w: any) => w.code)).toContain("attempt_charged");
    expect(record.charge_audit.unserved_attempts).toMatchObject([{ attempt_ordinal: 1, charge_micro_usd: cutOff }]);
    const frames = record.usage_evidence.raw_usage_frames;
    expect(frames.map((f: any) => [f.attempt_ordinal, f.frame_ordinal, f.provider_id])).toEqual([
      [1, 1, "mock-anthropic"],
      [2, 1, "mock-openai"],
    ]);
    expect(frames[0].usage.prompt_tokens).toBe(40);
    expect(frames[1].usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 7 });
  });
});

/** Reads a stream until `enough(text so far)` holds, then aborts the request. Returns what was read. */
async function readThenAbort(client: "openai-chat" | "anthropic-messages", model: string, requestId: string, enough: (text: string) => boolean) {
  const controller = new AbortController();
  const body =
    client === "openai-chat"
      ? { model, messages: [{ role: "user", content: "Tell me a long story" }], stream: true }
      : { model, max_tokens: 4096, messages: [{ role: "user", content: "Tell me a long story" }], stream: true };
  const response = await fetch(harness.server.url + (client === "openai-chat" ? "/v1/chat/completions" : "/v1/messages"), {
    method: "POST",
    headers: { authorization: `Bearer ${harness.account.apiKey}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!enough(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  await reader.cancel().catch(() => {});
  return text;
}

/** Polls (flushing) until the record exists: the stream settles once the server notices the disconnect. */
async function settledRecord(requestId: string): Promise<any> {
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    await flush(harness);
    const [record] = await recordsFor(sql, requestId);
    if (record) return record;
    await Bun.sleep(50);
  }
  throw new Error(`no record for ${requestId}`);
}

const LONG_TEXT = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

describe("upstream failure mid-stream, after the first token", () => {
  // The cut comes before any final usage report: what was produced is billed as an estimate.
  for (const upstream of ["openai-chat", "anthropic-messages"] as const) {
    test(`${upstream}: failed, and the output already produced is billed (an upper bound: a token per UTF-8 byte, never less)`, async () => {
      const target = UPSTREAM[upstream];
      // OpenAI: role + 8 pieces. Anthropic: message_start, block start, ping + 7 pieces.
      // Either way several pieces reach the client, and no final usage report does.
      harness.mocks[target.mock].queueScenarios({ kind: "stream_cut", cutAfterChunks: 10, text: LONG_TEXT, usage: { prompt: 700, completion: 300 } });
      const sent = await send(harness.server.url, harness.account.apiKey, "openai-chat", target.model, { stream: true });
      expect(sent.status).toBe(200);
      const chars = sseJson(sent.text).reduce((sum, c) => sum + (c.choices?.[0]?.delta?.content?.length ?? 0), 0);
      expect(chars).toBeGreaterThanOrEqual(24);
      await flush(harness);
      const [record] = await recordsFor(sql, sent.requestId);
      expect(record.status).toBe("failed");
      expect(record.usage_evidence.source).toBe("estimated");
      // The mock's text is ASCII: its bytes are its characters. What the server relayed is at least what the client read.
      expect(record.completion_tokens).toBeGreaterThanOrEqual(chars);
      expect(record.completion_tokens).toBeLessThanOrEqual(Buffer.byteLength(LONG_TEXT));
      expect(record.final_charge_micro_usd).toBeGreaterThan(0);
      // A prompt the upstream reported (Anthropic's message_start) is kept, otherwise bounded:
      // the prompt's bytes ("Hi") plus admission's template allowances (request, message, part).
      if (upstream === "anthropic-messages") expect(record.prompt_tokens).toBe(700);
      else expect(record.prompt_tokens).toBeGreaterThanOrEqual(2 + PROMPT_OVERHEAD_TOKENS.request + PROMPT_OVERHEAD_TOKENS.message + PROMPT_OVERHEAD_TOKENS.part);
    });
  }
});

describe("client disconnect before the answer", () => {
  /**
   * Sends the request and aborts it once the upstream holds it (its answer is delayed): the
   * client leaves after the server took the request and before any answer, however slow
   * the machine is.
   */
  async function abortOnceUpstream(client: "sync" | "stream", requestId: string) {
    const upstreamBefore = harness.mocks.openai.requests.length;
    const controller = new AbortController();
    const done = fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${harness.account.apiKey}`, "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Tell me a long story" }], stream: client === "stream" }),
      signal: controller.signal,
    }).then(
      (response) => response.text(),
      () => "aborted",
    );
    for (let polls = 0; harness.mocks.openai.requests.length === upstreamBefore; polls++) {
      if (polls > 2_000) throw new Error("the request never reached the upstream");
      await Bun.sleep(5);
    }
    controller.abort();
    return done;
  }

  test("a non-streaming request runs to completion and settles even though its client left", async () => {
    const requestId = `sync-gone-${crypto.randomUUID()}`;
    harness.mocks.openai.queueScenarios({ kind: "text", delayMs: 300, usage: { prompt: 900, completion: 50 } });
    expect(await abortOnceUpstream("sync", requestId)).toBe("aborted");
    const record = await settledRecord(requestId);
    expect(record).toMatchObject({ status: "succeeded", prompt_tokens: 900, completion_tokens: 50 });
    expect(record.final_charge_micro_usd).toBe(handCharge(catalogPricing("openai-chat"), { uncachedInput: 900, output: 50 }));
  });

  test("a stream whose client leaves before the first token is recorded as cancelled, not as a provider failure", async () => {
    const attempts = async (outcome: string) => {
      const text = await fetch(`${harness.server.url}/metrics`).then((r) => r.text());
      const line = text.split("\n").find((l) => l.startsWith(`switchyard_upstream_attempts_total{provider="mock-openai",outcome="${outcome}"}`));
      return Number(line?.split(" ").at(-1) ?? 0);
    };
    const [errorsBefore, abortedBefore] = [await attempts("provider_error"), await attempts("aborted")];
    const requestId = `early-gone-${crypto.randomUUID()}`;
    harness.mocks.openai.queueScenarios({ kind: "text", delayMs: 300 });
    expect(await abortOnceUpstream("stream", requestId)).toBe("aborted");
    const record = await settledRecord(requestId);
    expect(record).toMatchObject({ status: "cancelled", status_code: 499, provider_id: null, final_charge_micro_usd: 0 });
    expect(await attempts("provider_error")).toBe(errorsBefore);
    expect(await attempts("aborted")).toBe(abortedBefore + 1);
  });
});

describe("client disconnect mid-stream", () => {
  test("chat → openai: cancelled, completion bounded by the bytes relayed, prompt by admission's ceiling, charged, marked estimated", async () => {
    const requestId = `gone-${crypto.randomUUID()}`;
    harness.mocks.openai.queueScenarios({ kind: "slow", delayMs: 20, chunkDelayMs: 100, text: LONG_TEXT, usage: { prompt: 500, completion: 400 } });
    const chatChars = (text: string) => sseJson(text).reduce((sum, c) => sum + (c.choices?.[0]?.delta?.content?.length ?? 0), 0);
    // Several pieces, so that any other chars-per-token ratio would give another count.
    const seen = await readThenAbort("openai-chat", "mock-openai/gpt-4o-mini", requestId, (text) => chatChars(text) >= 24);
    const seenChars = chatChars(seen);
    expect(seenChars).toBeGreaterThanOrEqual(24);
    const record = await settledRecord(requestId);
    expect(record.status).toBe("cancelled");
    expect(record.usage_evidence.source).toBe("estimated");
    // The upstream never reached its usage chunk: no frame, prompt bounded by its 20 bytes plus the template allowances.
    expect(record.usage_evidence.raw_usage_frames).toEqual([]);
    expect(record.prompt_tokens).toBeGreaterThanOrEqual(20 + PROMPT_OVERHEAD_TOKENS.request + PROMPT_OVERHEAD_TOKENS.message + PROMPT_OVERHEAD_TOKENS.part);
    expect(record.completion_tokens).toBeGreaterThanOrEqual(seenChars);
    expect(record.completion_tokens).toBeLessThan(400);
    expect(record.billing_status).toBe("computed");
    expect(record.final_charge_micro_usd).toBe(
      handCharge(catalogPricing("openai-chat"), { uncachedInput: record.prompt_tokens, output: record.completion_tokens }),
    );
    expect(record.final_charge_micro_usd).toBeGreaterThan(0);
    const [ledger] = await sql`select kind, amount_micro_usd::int as amount from ledger_entries where request_record_id = ${record.id}`;
    expect(ledger).toEqual({ kind: "usage", amount: -record.final_charge_micro_usd });
  });

  test("messages → anthropic: the reported prompt (and its cache split) is kept, only the completion is estimated", async () => {
    const requestId = `gone-${crypto.randomUUID()}`;
    harness.mocks.anthropic.queueScenarios({
      kind: "slow",
      delayMs: 20,
      chunkDelayMs: 100,
      text: LONG_TEXT,
      usage: { prompt: 800, completion: 400, cacheRead: 300, cacheWrite: 100 },
    });
    const messageChars = (text: string) => sseJson(text).reduce((sum, e) => sum + (e.type === "content_block_delta" ? (e.delta?.text?.length ?? 0) : 0), 0);
    const seen = await readThenAbort("anthropic-messages", "mock-anthropic/claude-sonnet-4-5", requestId, (text) => messageChars(text) >= 24);
    const seenChars = messageChars(seen);
    expect(seenChars).toBeGreaterThanOrEqual(24);
    const record = await settledRecord(requestId);
    expect(record).toMatchObject({ status: "cancelled", prompt_tokens: 800, cache_read_tokens: 300, cache_write_tokens: 100 });
    expect(record.usage_evidence.source).toBe("estimated");
    expect(record.completion_tokens).toBeGreaterThanOrEqual(seenChars);
    expect(record.completion_tokens).toBeLessThan(400 * 4);
    // message_start's report is kept as evidence.
    expect(record.usage_evidence.raw_usage_frames).toHaveLength(1);
    expect(record.final_charge_micro_usd).toBe(
      handCharge(catalogPricing("anthropic-messages"), { uncachedInput: 400, cacheRead: 300, cacheWrite: 100, output: record.completion_tokens }),
    );
  });
});

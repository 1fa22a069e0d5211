import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import type { TestAccount } from "../support/test-server";

/**
 * Server-Timing on every inference response (docs/operations.md "The overhead, live (Server-Timing)"): `gateway;dur=` always,
 * `upstream;dur=` exactly when an upstream was called, and each response observed in
 * `switchyard_gateway_overhead_seconds` by client and upstream protocol.
 */
let harness: InferenceHarness;
let broke: TestAccount;
beforeAll(async () => {
  // Small enough that a refused body is cheap to send, large enough for every request here.
  harness = await startInferenceHarness({ maxInferenceBodyBytes: 4096 });
  broke = await harness.server.createAccount(undefined, 0);
});
afterAll(() => harness.close());

type Protocol = "openai-chat" | "openai-responses" | "anthropic-messages" | "google-generate-content";
const PROTOCOLS: Protocol[] = ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"];

/** Each client protocol is served by the next protocol's mock, so the two labels differ. */
const UPSTREAM: Record<Protocol, { protocol: Protocol; model: string }> = {
  "openai-chat": { protocol: "openai-responses", model: "mock-responses/gpt-5-mini" },
  "openai-responses": { protocol: "anthropic-messages", model: "mock-anthropic/claude-sonnet-4-5" },
  "anthropic-messages": { protocol: "google-generate-content", model: "mock-google/gemini-2.5-flash" },
  "google-generate-content": { protocol: "openai-chat", model: "mock-openai/gpt-4o-mini" },
};

async function send(protocol: Protocol, options: { model: string; stream?: boolean; token?: string }): Promise<Response> {
  const { model, stream = false } = options;
  const bodies: Record<Protocol, unknown> = {
    "openai-chat": { model, stream, messages: [{ role: "user", content: "Hi" }] },
    "openai-responses": { model, stream, input: "Hi" },
    "anthropic-messages": { model, stream, max_tokens: 16, messages: [{ role: "user", content: "Hi" }] },
    "google-generate-content": { contents: [{ role: "user", parts: [{ text: "Hi" }] }] },
  };
  const path = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic-messages": "/v1/messages",
    "google-generate-content": `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
  }[protocol];
  const token = options.token ?? harness.account.apiKey;
  const response = await fetch(harness.server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === "" ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(bodies[protocol]),
  });
  await response.text();
  return response;
}

/** The header's parts in milliseconds; fails unless it is exactly `gateway;dur=…[, upstream;dur=…]`. */
function timing(response: Response): { gateway: number; upstream?: number } {
  const value = response.headers.get("server-timing");
  const match = /^gateway;dur=(\d+(?:\.\d+)?)(?:, upstream;dur=(\d+(?:\.\d+)?))?$/.exec(value ?? "");
  if (!match) throw new Error(`unexpected Server-Timing: ${value}`);
  return { gateway: Number(match[1]), ...(match[2] === undefined ? {} : { upstream: Number(match[2]) }) };
}

async function overheadCount(client: Protocol, upstream: Protocol | "none"): Promise<number> {
  const text = await fetch(`${harness.server.url}/metrics`).then((r) => r.text());
  const line = text.split("\n").find((l) => l.startsWith(`switchyard_gateway_overhead_seconds_count{client_protocol="${client}",upstream_protocol="${upstream}"} `));
  return line === undefined ? 0 : Number(line.split(" ")[1]);
}

describe("Server-Timing on inference responses", () => {
  for (const protocol of PROTOCOLS) {
    const upstream = UPSTREAM[protocol];
    test(`${protocol}: a whole answer and a stream carry gateway and upstream, and are observed`, async () => {
      const before = await overheadCount(protocol, upstream.protocol);
      for (const stream of [false, true]) {
        const response = await send(protocol, { model: upstream.model, stream });
        expect(response.status).toBe(200);
        const parts = timing(response);
        expect(parts.upstream).toBeGreaterThanOrEqual(0);
        expect(parts.gateway).toBeGreaterThanOrEqual(0);
      }
      expect(await overheadCount(protocol, upstream.protocol)).toBe(before + 2);
    });

    test(`${protocol}: an upstream error carries both parts, sync and stream`, async () => {
      const before = await overheadCount(protocol, upstream.protocol);
      for (const stream of [false, true]) {
        const response = await send(protocol, { model: `${upstream.model}@error500`, stream });
        expect(response.status).toBe(502);
        expect(timing(response).upstream).toBeGreaterThanOrEqual(0);
      }
      expect(await overheadCount(protocol, upstream.protocol)).toBe(before + 2);
    });

    test(`${protocol}: refusals before any upstream (401, 402) carry gateway only`, async () => {
      const before = await overheadCount(protocol, "none");
      for (const stream of [false, true]) {
        const unauthenticated = await send(protocol, { model: upstream.model, stream, token: "" });
        expect(unauthenticated.status).toBe(401);
        expect(timing(unauthenticated).upstream).toBeUndefined();
        const unfunded = await send(protocol, { model: upstream.model, stream, token: broke.apiKey });
        expect(unfunded.status).toBe(402);
        expect(timing(unfunded).upstream).toBeUndefined();
      }
      expect(await overheadCount(protocol, "none")).toBe(before + 4);
    });
  }

  test("a body refused by its Content-Length before the pipeline runs carries gateway only", async () => {
    const before = await overheadCount("anthropic-messages", "none");
    const response = await fetch(`${harness.server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${harness.account.apiKey}` },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "x".repeat(8192) }] }),
    });
    await response.text();
    expect(response.status).toBe(413);
    expect(timing(response).upstream).toBeUndefined();
    expect(await overheadCount("anthropic-messages", "none")).toBe(before + 1);
  });

  test("the wait for the upstream is counted as upstream, not gateway: before its head, for its body, for a stream's first token", async () => {
    for (const [stream, scenario] of [
      [false, { kind: "slow", delayMs: 300 }],
      [true, { kind: "slow", delayMs: 300 }],
      [true, { kind: "slow", delayMs: 0, chunkDelayMs: 300 }],
    ] as const) {
      harness.mocks.anthropic.queueScenarios(scenario);
      const response = await send("openai-chat", { model: "mock-anthropic/claude-sonnet-4-5", stream });
      expect(response.status).toBe(200);
      const parts = timing(response);
      expect(parts.upstream).toBeGreaterThanOrEqual(300);
      expect(parts.gateway).toBeLessThan(300);
    }
  });

  test("a fallback's failed attempt counts as upstream time too, labelled by the upstream that served", async () => {
    const before = await overheadCount("openai-chat", "openai-chat");
    harness.mocks.anthropic.queueScenarios({ kind: "error", status: 500, delayMs: 300 });
    const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${harness.account.apiKey}` },
      body: JSON.stringify({ model: "ignored/by-models", models: ["mock-anthropic/claude-sonnet-4-5", "mock-openai/gpt-4o-mini"], messages: [{ role: "user", content: "hi" }] }),
    });
    await response.text();
    expect(response.status).toBe(200);
    const parts = timing(response);
    expect(parts.upstream).toBeGreaterThanOrEqual(300);
    expect(parts.gateway).toBeLessThan(300);
    expect(await overheadCount("openai-chat", "openai-chat")).toBe(before + 1);
  });
});

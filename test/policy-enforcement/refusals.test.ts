import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { api, callThroughSdk, CLIENTS, keyWithPolicy, type ClientName, type Seen } from "./enforcement-support";

/**
 * Every policy refusal, through each official SDK, sync and stream: the SDK's error
 * carries the status and, where the protocol has room, the code (docs/api/policies.md "Policies").
 * Refused requests never reach an upstream and write a record that costs nothing and
 * names the refusing policy.
 */
const MODEL = "mock-openai/gpt-4o-mini";

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness({ meteringFlushIntervalMs: 20 });
});
afterAll(() => harness.close());

interface Case {
  name: string;
  kind: string;
  spec: unknown;
  status: number;
  code: string;
  prompt?: string;
  maxTokens?: number;
  streamOnly?: boolean;
  /** Requests to make first, which are admitted (the rate limit's window fills). */
  admittedFirst?: number;
}

const CASES: Case[] = [
  { name: "a budget with no room", kind: "budget", spec: { window: "day", limit_micro_usd: 1 }, status: 402, code: "budget_exceeded" },
  { name: "a full rate limit", kind: "rate_limit", spec: { window_secs: 3600, max_requests: 1 }, status: 429, code: "rate_limit_exceeded", admittedFirst: 1 },
  { name: "a denied model", kind: "guardrail", spec: { model_deny: [MODEL] }, status: 403, code: "permission_denied" },
  { name: "a model outside the allow list", kind: "guardrail", spec: { model_allow: ["mock-anthropic/claude-sonnet-4-5"] }, status: 403, code: "permission_denied" },
  { name: "streaming forbidden", kind: "guardrail", spec: { allow_streaming: false }, status: 403, code: "permission_denied", streamOnly: true },
  { name: "max tokens above max_request_tokens", kind: "guardrail", spec: { max_request_tokens: 50 }, status: 403, code: "permission_denied", maxTokens: 100 },
  {
    name: "a request-side block pattern",
    kind: "guardrail",
    spec: { content_patterns: [{ name: "ticket", pattern: "TICKET-\\d{4}", action: "block" }] },
    status: 403,
    code: "permission_denied",
    prompt: "Please look at TICKET-1234 for me.",
  },
];

function expectRefused(seen: Seen, expected: Case): void {
  expect(seen.ok).toBe(false);
  if (seen.ok) return;
  expect(seen.status).toBe(expected.status);
  expect(seen.code).toBe(expected.code);
  if (expected.status === 429) {
    // Google's SDK does not expose headers; every other one does.
    if (seen.retryAfter !== undefined) expect(Number(seen.retryAfter)).toBeGreaterThanOrEqual(1);
  }
}

describe("each refusal through each SDK, sync and stream", () => {
  for (const refusal of CASES) {
    test(refusal.name, async () => {
      const { token } = await keyWithPolicy(harness, refusal.kind, refusal.spec);
      const upstreamCalls = harness.mocks.openai.requests.length;
      for (let i = 0; i < (refusal.admittedFirst ?? 0); i++) expect((await callThroughSdk(harness, "openai-chat", token, MODEL, { stream: false })).ok).toBe(true);
      const called = harness.mocks.openai.requests.length;
      for (const client of CLIENTS) {
        for (const stream of refusal.streamOnly ? [true] : [false, true]) {
          const seen = await callThroughSdk(harness, client, token, MODEL, { stream, prompt: refusal.prompt, maxTokens: refusal.maxTokens });
          try {
            expectRefused(seen, refusal);
          } catch (error) {
            throw new Error(`${client} ${stream ? "stream" : "sync"}: ${JSON.stringify(seen)}`, { cause: error });
          }
        }
      }
      // A refused request never reaches an upstream.
      expect(harness.mocks.openai.requests.length).toBe(called);
      expect(called - upstreamCalls).toBe(refusal.admittedFirst ?? 0);
    });
  }

  test("a 429 says when to come back in each protocol's Retry-After header", async () => {
    const { token } = await keyWithPolicy(harness, "rate_limit", { window_secs: 120, max_requests: 1 });
    expect((await callThroughSdk(harness, "openai-chat", token, MODEL, { stream: false })).ok).toBe(true);
    const paths: Record<ClientName, { path: string; body: unknown; headers: Record<string, string> }> = {
      "openai-chat": { path: "/v1/chat/completions", body: { model: MODEL, messages: [{ role: "user", content: "hi" }] }, headers: { authorization: `Bearer ${token}` } },
      "openai-responses": { path: "/v1/responses", body: { model: MODEL, input: "hi" }, headers: { authorization: `Bearer ${token}` } },
      "anthropic-messages": { path: "/v1/messages", body: { model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, headers: { "x-api-key": token } },
      "google-generate-content": { path: `/v1beta/models/${MODEL}:generateContent`, body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, headers: { "x-goog-api-key": token } },
    };
    for (const client of CLIENTS) {
      const { path, body, headers } = paths[client];
      const response = await fetch(`${harness.server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
      expect(response.status).toBe(429);
      const retryAfter = Number(response.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(120);
      const json = (await response.json()) as any;
      if (client === "anthropic-messages") expect(json.error).toMatchObject({ type: "rate_limit_error", message: expect.stringMatching(/^rate_limit_exceeded: /) });
      else if (client === "google-generate-content") expect(json.error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED", details: [expect.objectContaining({ reason: "rate_limit_exceeded" })] });
      else expect(json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
    }
  });

  test("Anthropic clients get billing_error and permission_error with the code at the start of the message", async () => {
    const budget = await keyWithPolicy(harness, "budget", { window: "total", limit_micro_usd: 1 });
    const seenBudget = await callThroughSdk(harness, "anthropic-messages", budget.token, MODEL, { stream: false });
    expect(seenBudget).toMatchObject({ ok: false, status: 402, code: "budget_exceeded" });
    const response = await fetch(`${harness.server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": budget.token },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(((await response.json()) as any).error.type).toBe("billing_error");
    const deny = await keyWithPolicy(harness, "guardrail", { model_deny: [MODEL] });
    const denied = await fetch(`${harness.server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": deny.token },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as any).error).toMatchObject({ type: "permission_error", message: expect.stringMatching(/^permission_denied: /) });
  });
});

describe("the record of a refused request", () => {
  test("costs nothing and names the refusing policy in GET /v1/requests", async () => {
    const { token, policyId } = await keyWithPolicy(harness, "budget", { window: "month", limit_micro_usd: 1 });
    const requestId = `refused-${Date.now()}`;
    const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "x-request-id": requestId },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(402);
    let record: any;
    for (let i = 0; i < 500 && record === undefined; i++) {
      const listed = await api(harness, "GET", "/v1/requests?limit=100");
      record = listed.data.find((row: any) => row.request_id === requestId);
      if (record === undefined) await Bun.sleep(20);
    }
    expect(record).toMatchObject({ status: "failed", status_code: 402, final_charge_micro_usd: 0, refused_by: { policy_id: policyId, reason: expect.stringContaining("budget_exceeded") } });
    // A request that was served names no policy (its record has exactly the spec's fields).
    const served = (await api(harness, "GET", "/v1/requests?limit=100")).data.filter((row: any) => row.status === "succeeded");
    expect(served.length).toBeGreaterThan(0);
    for (const row of served) expect("refused_by" in row).toBe(false);
  });
});

describe("disabling and enabling a policy", () => {
  test("a disabled policy is skipped; enabled again, it applies at once", async () => {
    const { token, policyId } = await keyWithPolicy(harness, "guardrail", { model_deny: [MODEL] });
    const ns = `/v1/namespaces/${harness.account.namespaceId}`;
    expect(await callThroughSdk(harness, "openai-chat", token, MODEL, { stream: false })).toMatchObject({ ok: false, status: 403, code: "permission_denied" });
    await api(harness, "POST", `${ns}/policies/${policyId}/disable`);
    expect(await callThroughSdk(harness, "openai-chat", token, MODEL, { stream: false })).toMatchObject({ ok: true });
    await api(harness, "POST", `${ns}/policies/${policyId}/enable`);
    expect(await callThroughSdk(harness, "openai-chat", token, MODEL, { stream: false })).toMatchObject({ ok: false, status: 403, code: "permission_denied" });
  });
});

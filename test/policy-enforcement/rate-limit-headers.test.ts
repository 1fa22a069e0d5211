import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { openAiDuration } from "../../src/pipeline/rate-limit-headers";
import { keyWithPolicy } from "./enforcement-support";

/**
 * README "Rate-limit headers": an inference response on a credential a rate limit binds
 * carries OpenAI's x-ratelimit-* (and, on Messages, Anthropic's anthropic-ratelimit-*),
 * from what admission read; a 429 carries them and Retry-After; an unlimited key, none.
 */
const MODEL = "mock-openai/gpt-4o-mini";

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness({ meteringFlushIntervalMs: 20 });
});
afterAll(() => harness.close());

function chat(token: string, body: Record<string, unknown> = {}) {
  return fetch(`${harness.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Say hello." }], ...body }),
  });
}

function messages(token: string) {
  return fetch(`${harness.server.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": token, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "Say hello." }] }),
  });
}

const ratelimitHeaders = (response: Response) => [...response.headers.keys()].filter((name) => name.includes("ratelimit")).sort();

describe("rate-limit headers", () => {
  test("a limited key sees remaining requests and tokens go down; the 429 carries them at 0 with Retry-After", async () => {
    const { token } = await keyWithPolicy(harness, "rate_limit", { window_secs: 3600, max_requests: 3, max_tokens: 1000 });
    const seen: Array<{ remaining: string | null; tokens: string | null }> = [];
    for (let i = 0; i < 3; i++) {
      const response = await chat(token, { max_tokens: 100 });
      expect(response.status).toBe(200);
      await response.text();
      expect(response.headers.get("x-ratelimit-limit-requests")).toBe("3");
      expect(response.headers.get("x-ratelimit-limit-tokens")).toBe("1000");
      expect(response.headers.get("x-ratelimit-reset-requests")).toMatch(/^(\d+h)?(\d+m)?\d+s$/);
      seen.push({ remaining: response.headers.get("x-ratelimit-remaining-requests"), tokens: response.headers.get("x-ratelimit-remaining-tokens") });
    }
    expect(seen).toEqual([
      { remaining: "2", tokens: "900" },
      { remaining: "1", tokens: "800" },
      { remaining: "0", tokens: "700" },
    ]);
    const refused = await chat(token, { max_tokens: 100 });
    expect(refused.status).toBe(429);
    await refused.text();
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(refused.headers.get("x-ratelimit-limit-requests")).toBe("3");
    // The window is an hour and the first admission is seconds old: room comes back in about an hour.
    const reset = refused.headers.get("x-ratelimit-reset-requests")!;
    expect(reset).toMatch(/^(59m\d+s|1h0m0s)$/);
  });

  test("a streamed answer carries them too, and Messages answers carry Anthropic's names with an RFC 3339 reset", async () => {
    const { token } = await keyWithPolicy(harness, "rate_limit", { window_secs: 60, max_requests: 10 });
    const streamed = await chat(token, { stream: true });
    expect(streamed.status).toBe(200);
    await streamed.text();
    expect(streamed.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    // No token clause: no token headers.
    expect(streamed.headers.get("x-ratelimit-limit-tokens")).toBeNull();
    const answer = await messages(token);
    expect(answer.status).toBe(200);
    await answer.text();
    expect(answer.headers.get("anthropic-ratelimit-requests-limit")).toBe("10");
    expect(answer.headers.get("anthropic-ratelimit-requests-remaining")).toBe("8");
    const resetAt = answer.headers.get("anthropic-ratelimit-requests-reset")!;
    expect(resetAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const inSecs = (Date.parse(resetAt) - Date.now()) / 1000;
    expect(inSecs).toBeGreaterThan(50);
    expect(inSecs).toBeLessThanOrEqual(61);
    expect(answer.headers.get("x-ratelimit-remaining-requests")).toBe("8");
    // Not on other protocols.
    expect(streamed.headers.get("anthropic-ratelimit-requests-limit")).toBeNull();
  });

  test("the tightest clause is the one shown when several rate limits bind the key", async () => {
    const { token, keyId } = await keyWithPolicy(harness, "rate_limit", { window_secs: 3600, max_requests: 100 });
    const ns = `/v1/namespaces/${harness.account.namespaceId}`;
    const tight = await harness.server.api("POST", `${ns}/policies`, { token: harness.account.apiKey, body: { name: "tight", kind: "rate_limit", spec: { window_secs: 60, max_requests: 5 } } });
    await harness.server.api("POST", `${ns}/policies/${tight.body.id}/bind`, { token: harness.account.apiKey, body: { principal_type: "api_key", principal_id: keyId } });
    const response = await chat(token);
    await response.text();
    expect(response.headers.get("x-ratelimit-limit-requests")).toBe("5");
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("4");
  });

  test("a key no rate limit binds has none, nor does a budget-only key", async () => {
    const plain = await harness.server.mintKey(harness.account.apiKey, ["inference:invoke"]);
    const { token: budgeted } = await keyWithPolicy(harness, "budget", { window: "day", limit_micro_usd: 10_000_000 });
    for (const token of [plain, budgeted]) {
      for (const response of [await chat(token), await chat(token, { stream: true }), await messages(token)]) {
        expect(response.status).toBe(200);
        await response.text();
        expect(ratelimitHeaders(response)).toEqual([]);
      }
    }
  });
});

describe("the reset duration", () => {
  test("is written as OpenAI writes it", () => {
    expect([0, 1, 45, 60, 360, 3599, 3600, 3725, 0.2].map(openAiDuration)).toEqual(["0s", "1s", "45s", "1m0s", "6m0s", "59m59s", "1h0m0s", "1h2m5s", "1s"]);
  });
});

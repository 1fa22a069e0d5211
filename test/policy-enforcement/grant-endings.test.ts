import { afterAll, beforeAll, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { keyWithPolicy } from "./enforcement-support";

/**
 * How a request ends decides what its rate-limit admission becomes: a request that
 * reached an upstream was made (settled: its admission stays, even when the answer was
 * refused by a response-side check); one that never did is withdrawn (released).
 */
let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(() => harness.close());

async function post(token: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${harness.server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

const chat = (token: string) => post(token, "/v1/chat/completions", { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });

test("an answer refused by a response-side check was still made: it counts toward the rate limit", async () => {
  const { token, keyId } = await keyWithPolicy(harness, "rate_limit", { window_secs: 3600, max_requests: 1 });
  const ns = `/v1/namespaces/${harness.account.namespaceId}`;
  const guardrail = await harness.server.api("POST", `${ns}/policies`, {
    token: harness.account.apiKey,
    body: { name: "no code words", kind: "guardrail", spec: { content_patterns: [{ name: "code", pattern: "TOPSECRET", action: "block" }] } },
  });
  await harness.server.api("POST", `${ns}/policies/${guardrail.body.id}/bind`, { token: harness.account.apiKey, body: { principal_type: "api_key", principal_id: keyId } });
  harness.mocks.openai.queueScenarios({ kind: "text", text: "The word is TOPSECRET." });
  expect(await chat(token)).toBe(403);
  expect(await chat(token)).toBe(429);
});

test("a request no upstream was called for is withdrawn from the rate limit", async () => {
  const { token } = await keyWithPolicy(harness, "rate_limit", { window_secs: 3600, max_requests: 1 });
  const calls = harness.mocks.anthropic.requests.length;
  // Anthropic cannot store a response: no candidate can encode it, so nothing is called.
  expect(await post(token, "/v1/responses", { model: "mock-anthropic/claude-sonnet-4-5", input: "hi", store: true })).toBe(400);
  expect(harness.mocks.anthropic.requests.length).toBe(calls);
  // The withdrawal is written before the 400 is sent: a chat sent at once finds the slot free.
  expect(await chat(token)).toBe(200);
  expect(await chat(token)).toBe(429);
});

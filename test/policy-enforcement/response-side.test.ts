import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import type { MockUpstream } from "../support/mock-upstreams";
import { callThroughSdk, CLIENTS, keyWithPolicy } from "./enforcement-support";

/**
 * Response-side content patterns through each SDK, sync and stream, over an upstream of
 * another protocol and of the same one (whose stream is then translated, not passed
 * through). The mocks stream text word by word, so `sk-…` arrives as "sk", "-" and the
 * rest: every match here is split across upstream chunks.
 */
const SECRET = "sk-abcdefghij0123456789XYZ";
const ANSWER = `Your key is ${SECRET}, keep it safe. Another: ${SECRET}!`;
const REDACTED = "Your key is [REDACTED], keep it safe. Another: [REDACTED]!";

const UPSTREAMS: { model: string; mock: (harness: InferenceHarness) => MockUpstream }[] = [
  { model: "mock-openai/gpt-4o-mini", mock: (harness) => harness.mocks.openai },
  { model: "mock-anthropic/claude-sonnet-4-5", mock: (harness) => harness.mocks.anthropic },
  { model: "mock-google/gemini-2.5-flash", mock: (harness) => harness.mocks.google },
  { model: "mock-responses/gpt-5-mini", mock: (harness) => harness.mocks.responses },
];

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(() => harness.close());

describe("redact", () => {
  test("every match, split across chunks or not, becomes [REDACTED] in sync and streamed answers of every SDK", async () => {
    const { token } = await keyWithPolicy(harness, "guardrail", { content_patterns: [{ name: "api key", pattern: "sk-[A-Za-z0-9]{20,}", action: "redact" }] });
    for (const upstream of UPSTREAMS) {
      for (const client of CLIENTS) {
        for (const stream of [false, true]) {
          upstream.mock(harness).queueScenarios({ kind: "text", text: ANSWER });
          const seen = await callThroughSdk(harness, client, token, upstream.model, { stream });
          expect({ upstream: upstream.model, client, stream, seen }).toEqual({ upstream: upstream.model, client, stream, seen: { ok: true, text: REDACTED } });
        }
      }
    }
  });

  test("a key with no pattern bound gets the answer as the upstream sent it", async () => {
    const { token } = await keyWithPolicy(harness, "guardrail", { model_deny: ["mock-openai/other"] });
    harness.mocks.openai.queueScenarios({ kind: "text", text: ANSWER });
    expect(await callThroughSdk(harness, "openai-chat", token, "mock-openai/gpt-4o-mini", { stream: true })).toEqual({ ok: true, text: ANSWER });
  });
});

describe("block", () => {
  const TEXT = "Hello there. The code word is TOPSECRET and more text follows.";

  test("a whole answer is replaced by the protocol's 403 permission_denied", async () => {
    const { token } = await keyWithPolicy(harness, "guardrail", { content_patterns: [{ name: "code word", pattern: "TOPSECRET", action: "block" }] });
    for (const upstream of UPSTREAMS) {
      for (const client of CLIENTS) {
        upstream.mock(harness).queueScenarios({ kind: "text", text: TEXT });
        // The prompt does not match: the answer does.
        const seen = await callThroughSdk(harness, client, token, upstream.model, { stream: false });
        expect({ client, upstream: upstream.model, seen }).toMatchObject({ client, upstream: upstream.model, seen: { ok: false, status: 403, code: "permission_denied" } });
      }
    }
  });

  test("a stream ends with the protocol's error frame; nothing from the match on reaches the client", async () => {
    const { token } = await keyWithPolicy(harness, "guardrail", { content_patterns: [{ name: "code word", pattern: "TOPSECRET", action: "block" }] });
    for (const upstream of UPSTREAMS) {
      for (const client of CLIENTS) {
        upstream.mock(harness).queueScenarios({ kind: "text", text: TEXT });
        const seen = await callThroughSdk(harness, client, token, upstream.model, { stream: true });
        expect({ client, upstream: upstream.model, ok: seen.ok }).toEqual({ client, upstream: upstream.model, ok: false });
        if (!seen.ok) {
          expect(seen.message).toContain("permission_denied");
          expect(seen.message).not.toContain("TOPSECRET");
        }
      }
    }
  });
});

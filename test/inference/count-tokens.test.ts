import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(() => harness.close());

describe("POST /v1/messages/count_tokens", () => {
  test("the Anthropic SDK gets an estimate at 4 characters per token, tools included, without any upstream call", async () => {
    const client = new Anthropic({ apiKey: harness.account.apiKey, baseURL: harness.server.url, maxRetries: 0 });
    const upstreamCalls = () => harness.mocks.list.reduce((sum, mock) => sum + mock.requests.length, 0);
    const before = upstreamCalls();
    const plain = await client.messages.countTokens({ model: "mock-anthropic/claude-sonnet-4-5", system: "abcd", messages: [{ role: "user", content: "x".repeat(40) }] });
    expect(plain.input_tokens).toBe(11); // (4 + 40) / 4
    const withTools = await client.messages.countTokens({
      model: "mock-anthropic/claude-sonnet-4-5",
      messages: [{ role: "user", content: "x".repeat(40) }],
      tools: [{ name: "get_weather", description: "d", input_schema: { type: "object", properties: {} } }],
    });
    expect(withTools.input_tokens).toBeGreaterThan(10);
    expect(upstreamCalls()).toBe(before);
  });

  test("needs a credential with inference:invoke and answers errors in Anthropic's shape", async () => {
    const response = await harness.server.api("POST", "/v1/messages/count_tokens", { body: { model: "m/x", messages: [] } });
    expect(response.status).toBe(401);
    expect(response.body.type).toBe("error");
    const bad = await harness.server.api("POST", "/v1/messages/count_tokens", { token: harness.account.apiKey, rawBody: "{nope" });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe("error");
  });

  test("takes an agent-sized body under the inference limit, not the management one", async () => {
    // Claude Code counts whole conversations; 300 KB is over the 256 KiB management limit.
    const response = await harness.server.api("POST", "/v1/messages/count_tokens", {
      token: harness.account.apiKey,
      body: { model: "mock-anthropic/claude-sonnet-4-5", messages: [{ role: "user", content: "x".repeat(300_000) }] },
    });
    expect(response.status).toBe(200);
    expect(response.body.input_tokens).toBe(75_000);
  });
});

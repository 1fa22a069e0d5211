import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { DEFAULT_TEXT } from "../support/mock-upstreams";

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness({ upstreamTimeouts: { connectMs: 1000, firstByteMs: 400, idleMs: 400 } });
});
afterAll(() => harness.close());

function chat(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return harness.server.api("POST", "/v1/chat/completions", {
    token: harness.account.apiKey,
    headers,
    body: { messages: [{ role: "user", content: "Hi" }], ...body },
  });
}

function countRequests(mock: { requests: unknown[] }, action: () => Promise<unknown>) {
  const before = mock.requests.length;
  return action().then((result) => ({ result, count: mock.requests.length - before }));
}

describe("routing", () => {
  test("names the model as <provider>/<model> and answers with the requested id, whatever the upstream echoes", async () => {
    const response = await chat({ model: "mock-openai/gpt-4o-mini" });
    expect(response.status).toBe(200);
    expect(response.body.model).toBe("mock-openai/gpt-4o-mini");
    expect(response.headers.get("x-switchyard-provider")).toBe("mock-openai");
    const sent = harness.mocks.openai.requests.at(-1)!;
    expect((sent.body as { model: string }).model).toBe("gpt-4o-mini");
    expect(sent.headers.authorization).toBe("Bearer mock-platform-key");
  });

  test("an unknown model is 404 not_found in the client's protocol", async () => {
    const response = await chat({ model: "nobody/nothing" });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("not_found");
    const messages = await harness.server.api("POST", "/v1/messages", {
      token: harness.account.apiKey,
      body: { model: "nobody/nothing", max_tokens: 5, messages: [{ role: "user", content: "x" }] },
    });
    expect(messages.status).toBe(404);
    expect(messages.body).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });

  test("a routing suffix selects a profile and an unknown suffix stays part of the id (404)", async () => {
    expect((await chat({ model: "mock-openai/gpt-4o-mini:cost" })).status).toBe(200);
    expect((await chat({ model: "mock-openai/gpt-4o-mini:fastest" })).status).toBe(404);
  });

  test("the :cost profile picks the cheaper of a model's endpoints", async () => {
    const response = await chat({ model: "multi/chat-model:cost" });
    expect(response.headers.get("x-switchyard-provider")).toBe("mock-openai");
  });

  test("a request id from x-request-id is echoed, otherwise one is generated", async () => {
    const given = await chat({ model: "mock-anthropic/claude-sonnet-4-5" }, { "x-request-id": "req-abc-123" });
    expect(given.headers.get("x-request-id")).toBe("req-abc-123");
    // A translated answer carries the request id as its id (a passthrough keeps the upstream's).
    expect(given.body.id).toBe("req-abc-123");
    const generated = await chat({ model: "mock-openai/gpt-4o-mini" });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("fallbacks", () => {
  test("a 429 falls through to the next model in `models`", async () => {
    const response = await chat({ model: "ignored/by-models", models: ["mock-openai/gpt-4o-mini@error429", "mock-anthropic/claude-sonnet-4-5"] });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-provider")).toBe("mock-anthropic");
    expect(response.body.model).toBe("mock-openai/gpt-4o-mini@error429");
    expect(response.body.choices[0].message.content).toBe(DEFAULT_TEXT);
  });

  test("a 5xx falls through to the model's next endpoint", async () => {
    harness.mocks.openai.queueScenarios({ kind: "error", status: 500 });
    const response = await chat({ model: "multi/chat-model:cost" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-provider")).toBe("mock-anthropic");
  });

  test("the caller's own 400 surfaces at once, without trying other endpoints", async () => {
    harness.mocks.openai.queueScenarios({ kind: "error", status: 400 });
    const { result, count } = await countRequests(harness.mocks.anthropic, () => chat({ model: "multi/chat-model:cost" }));
    expect((result as { status: number }).status).toBe(400);
    expect(count).toBe(0);
  });

  test("when every attempt fails the last upstream error is returned: 429 with the upstream's Retry-After", async () => {
    harness.mocks.openai.queueScenarios({ kind: "error", status: 429, retryAfter: 7 });
    const response = await chat({ model: "mock-openai/gpt-4o-mini" });
    expect(response.status).toBe(429);
    expect(response.body.error.code).toBe("upstream_rate_limited");
    expect(response.headers.get("retry-after")).toBe("7");
    const unknown = await chat({ model: "mock-openai/gpt-4o-mini@error429" });
    expect(unknown.headers.get("retry-after")).toBe("1");
  });

  test("an upstream that never answers times out (504) or falls through", async () => {
    const alone = await chat({ model: "mock-openai/gpt-4o-mini@hang" });
    expect(alone.status).toBe(504);
    expect(alone.body.error.code).toBe("upstream_timeout");
    const rescued = await chat({ model: "x/y", models: ["mock-openai/gpt-4o-mini@hang", "mock-google/gemini-2.5-flash"] });
    expect(rescued.status).toBe(200);
    expect(rescued.headers.get("x-switchyard-provider")).toBe("mock-google");
  });

  test("more than 8 fallback models, or an unknown one, is 400 before any attempt", async () => {
    const nine = Array.from({ length: 9 }, () => "mock-openai/gpt-4o-mini");
    expect((await chat({ model: "a/b", models: nine })).status).toBe(400);
    const { result, count } = await countRequests(harness.mocks.openai, () => chat({ model: "a/b", models: ["mock-openai/gpt-4o-mini", "nobody/nothing"] }));
    expect((result as { status: number }).status).toBe(400);
    expect(count).toBe(0);
  });

  test("a stream that fails before its first token falls through to the next candidate", async () => {
    harness.mocks.openai.queueScenarios({ kind: "stream_cut", cutAfterChunks: 1 });
    const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${harness.account.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "multi/chat-model:cost", stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-provider")).toBe("mock-anthropic");
    const text = await response.text();
    expect(text).toContain("Hello");
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("a stream that fails after its first token ends with the protocol's error frame, never a hang", async () => {
    harness.mocks.openai.queueScenarios({ kind: "stream_cut", cutAfterChunks: 3 });
    const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${harness.account.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).toContain('data: {"error":');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("a stream that stalls before its first token times out as a 504 in the client's protocol", async () => {
    harness.mocks.anthropic.queueScenarios({ kind: "slow", delayMs: 0, chunkDelayMs: 1500 });
    const response = await fetch(`${harness.server.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": harness.account.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-anthropic/claude-sonnet-4-5", stream: true, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "timeout_error" } });
  });

  test("a stream that stalls after its first token hits the idle timeout and ends with an error frame", async () => {
    // Gemini's first frame already carries text, so the stream is committed before the stall.
    harness.mocks.google.queueScenarios({ kind: "slow", delayMs: 0, chunkDelayMs: 1500 });
    const response = await fetch(`${harness.server.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": harness.account.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-google/gemini-2.5-flash", stream: true, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain("event: content_block_delta");
    expect(text).toMatch(/event: error\ndata: \{"type":"error"/);
  });
});

describe("client disconnect", () => {
  test("aborts the upstream request", async () => {
    const before = await harness.server.api("GET", "/metrics");
    const abortedBefore = Number(/switchyard_upstream_attempts_total\{provider="mock-openai",outcome="aborted"\} (\d+)/.exec(before.text)?.[1] ?? 0);
    harness.mocks.openai.queueScenarios({ kind: "slow", delayMs: 0, chunkDelayMs: 200, text: "one two three four five six seven eight nine ten" });
    const controller = new AbortController();
    const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      signal: controller.signal,
      headers: { authorization: `Bearer ${harness.account.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    // The server notices the disconnect, then aborts the upstream: waited for (bounded),
    // since a loaded machine takes longer; then exactly one aborted attempt.
    const aborted = async () => {
      const after = await harness.server.api("GET", "/metrics");
      return Number(/switchyard_upstream_attempts_total\{provider="mock-openai",outcome="aborted"\} (\d+)/.exec(after.text)?.[1] ?? 0);
    };
    for (let polls = 0; (await aborted()) === abortedBefore && polls < 200; polls++) await Bun.sleep(50);
    expect(await aborted()).toBe(abortedBefore + 1);
  });
});

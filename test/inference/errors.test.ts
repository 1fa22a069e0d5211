import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(() => harness.close());

type Protocol = "openai-chat" | "openai-responses" | "anthropic-messages" | "google-generate-content";

const MODEL = "mock-openai/gpt-4o-mini";

function send(protocol: Protocol, options: { token?: string; body?: unknown; rawBody?: string; model?: string } = {}) {
  const model = options.model ?? MODEL;
  const bodies: Record<Protocol, unknown> = {
    "openai-chat": { model, messages: [{ role: "user", content: "Hi" }] },
    "openai-responses": { model, input: "Hi" },
    "anthropic-messages": { model, max_tokens: 16, messages: [{ role: "user", content: "Hi" }] },
    "google-generate-content": { contents: [{ role: "user", parts: [{ text: "Hi" }] }] },
  };
  const path = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic-messages": "/v1/messages",
    "google-generate-content": `/v1beta/models/${model}:generateContent`,
  }[protocol];
  return harness.server.api("POST", path, {
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.rawBody !== undefined ? { rawBody: options.rawBody } : { body: options.body ?? bodies[protocol] }),
  });
}

/** Each protocol's own error envelope, with the expected status. */
function expectProtocolError(protocol: Protocol, response: { status: number; body: any }, status: number) {
  expect(response.status).toBe(status);
  switch (protocol) {
    case "openai-chat":
    case "openai-responses":
      expect(typeof response.body.error.message).toBe("string");
      expect(typeof response.body.error.type).toBe("string");
      break;
    case "anthropic-messages":
      expect(response.body.type).toBe("error");
      expect(typeof response.body.error.type).toBe("string");
      expect(typeof response.body.error.message).toBe("string");
      break;
    case "google-generate-content":
      expect(response.body.error.code).toBe(status);
      expect(typeof response.body.error.status).toBe("string");
      expect(typeof response.body.error.message).toBe("string");
      break;
  }
}

const PROTOCOLS: Protocol[] = ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"];

describe("inference errors in each client's protocol", () => {
  for (const protocol of PROTOCOLS) {
    test(`${protocol}: no credential is 401 with WWW-Authenticate`, async () => {
      const response = await send(protocol);
      expectProtocolError(protocol, response, 401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
    });

    test(`${protocol}: a key without inference:invoke is 403`, async () => {
      const key = await harness.server.mintKey(harness.account.apiKey, ["keys:read"]);
      expectProtocolError(protocol, await send(protocol, { token: key }), 403);
    });

    test(`${protocol}: malformed JSON and wrong shapes are 400, never 500`, async () => {
      const token = harness.account.apiKey;
      expectProtocolError(protocol, await send(protocol, { token, rawBody: "{not json" }), 400);
      expectProtocolError(protocol, await send(protocol, { token, rawBody: "[1,2]" }), 400);
      const wrong = protocol === "google-generate-content" ? { contents: "nope" } : { model: MODEL, messages: "nope", input: 5 };
      expectProtocolError(protocol, await send(protocol, { token, body: wrong }), 400);
    });

    test(`${protocol}: an unknown model is 404`, async () => {
      expectProtocolError(protocol, await send(protocol, { token: harness.account.apiKey, model: "nobody/nothing" }), 404);
    });

    test(`${protocol}: a provider with neither a platform key nor BYOK is 402`, async () => {
      const saved = process.env.MOCK_GOOGLE_API_KEY;
      delete process.env.MOCK_GOOGLE_API_KEY;
      try {
        expectProtocolError(protocol, await send(protocol, { token: harness.account.apiKey, model: "mock-google/gemini-2.5-flash" }), 402);
      } finally {
        process.env.MOCK_GOOGLE_API_KEY = saved;
      }
    });

    test(`${protocol}: an upstream 5xx on the only candidate is 502`, async () => {
      expectProtocolError(protocol, await send(protocol, { token: harness.account.apiKey, model: "mock-anthropic/claude-sonnet-4-5@error500" }), 502);
    });
  }

  test("a google path without an action is 400 in Google's shape", async () => {
    const response = await harness.server.api("POST", "/v1beta/models/mock-openai/gpt-4o-mini", { token: harness.account.apiKey, body: { contents: [] } });
    expectProtocolError("google-generate-content", response, 400);
  });

  test("a google path with malformed percent-encoding is 400 in Google's shape, not a 500", async () => {
    for (const path of ["/v1beta/models/mock-openai%2Fgpt%E0%A4:generateContent", "/v1beta/mock-openai/%ZZ:generateContent", "/v1/models/%:generateContent"]) {
      const response = await harness.server.api("POST", path, { token: harness.account.apiKey, body: { contents: [] } });
      expectProtocolError("google-generate-content", response, 400);
    }
  });

  test("the /v1/models/{model}:generateContent path the current Google SDK calls works too", async () => {
    const response = await harness.server.api("POST", "/v1/models/mock-anthropic/claude-sonnet-4-5:generateContent", {
      headers: { "x-goog-api-key": harness.account.apiKey },
      body: { contents: [{ role: "user", parts: [{ text: "Hi" }] }] },
    });
    expect(response.status).toBe(200);
    expect(response.body.candidates[0].content.parts[0].text).toBe("Hello, world!");
  });

  test("store: true is carried to an OpenAI upstream and refused with 400 when only Anthropic could serve", async () => {
    const token = harness.account.apiKey;
    const toOpenAi = await harness.server.api("POST", "/v1/chat/completions", { token, body: { model: MODEL, store: true, messages: [{ role: "user", content: "Hi" }] } });
    expect(toOpenAi.status).toBe(200);
    expect((harness.mocks.openai.requests.at(-1)!.body as { store?: boolean }).store).toBe(true);
    const before = harness.mocks.anthropic.requests.length;
    const toAnthropic = await harness.server.api("POST", "/v1/chat/completions", { token, body: { model: "mock-anthropic/claude-sonnet-4-5", store: true, messages: [{ role: "user", content: "Hi" }] } });
    expectProtocolError("openai-chat", toAnthropic, 400);
    expect(toAnthropic.body.error.message).toContain("store");
    expect(harness.mocks.anthropic.requests.length).toBe(before);
  });

  test("an oversized inference body is 413 in the client's protocol", async () => {
    const small = await startInferenceHarness({ maxInferenceBodyBytes: 2048 });
    try {
      const body = { model: MODEL, max_tokens: 5, messages: [{ role: "user", content: "x".repeat(5000) }] };
      const response = await small.server.api("POST", "/v1/messages", { token: small.account.apiKey, body });
      expect(response.status).toBe(413);
      expect(response.body.type).toBe("error");
      expect(typeof response.body.error.message).toBe("string");
    } finally {
      await small.close();
    }
  });
});

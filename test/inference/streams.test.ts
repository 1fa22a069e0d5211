import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, MOCK_KEY, type InferenceHarness } from "../support/inference-harness";
import { startMockUpstream } from "../support/mock-upstreams";
import { decodeClientRequest, encodeUpstreamRequest } from "../../src/translation/translate-request";

// Pool mode: every translation, streams included, runs in the worker pool here.
let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness({ translationMode: "pool" });
});
afterAll(() => harness.close());

async function stream(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await fetch(harness.server.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${harness.account.apiKey}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ stream: true, ...body }),
  });
  return { response, text: await response.text() };
}

const CHAT = { messages: [{ role: "user", content: "Hi" }] };

describe("chat usage chunk", () => {
  for (const model of ["mock-openai/gpt-4o-mini", "mock-anthropic/claude-sonnet-4-5"]) {
    test(`is always requested upstream but shown only when the client asked (${model})`, async () => {
      const before = harness.mocks.openai.requests.length;
      const silent = await stream("/v1/chat/completions", { model, ...CHAT });
      expect(silent.text).not.toMatch(/"usage":\{/); // "usage":null rides every OpenAI chunk; no usage object may
      expect(silent.text.endsWith("data: [DONE]\n\n")).toBe(true);
      const asked = await stream("/v1/chat/completions", { model, ...CHAT, stream_options: { include_usage: true } });
      const frames = asked.text.split("\n\n").filter((f) => f.startsWith("data: {"));
      const usageFrame = JSON.parse(frames.at(-1)!.slice(6));
      expect(usageFrame.choices).toEqual([]);
      expect(usageFrame.usage.prompt_tokens).toBeGreaterThan(0);
      if (model.startsWith("mock-openai")) {
        const sent = harness.mocks.openai.requests.slice(before).map((r) => r.body as { stream_options?: { include_usage?: boolean } });
        expect(sent.every((b) => b.stream_options?.include_usage === true)).toBe(true);
      }
    });
  }
});

describe("same-protocol passthrough", () => {
  test("relays the upstream's bytes untouched apart from the model id", async () => {
    // A mock on its own, read directly, gives the reference bytes for the same scenario.
    const direct = await startMockUpstream("anthropic-messages", { apiKey: MOCK_KEY });
    try {
      const body = { model: "claude-sonnet-4-5", max_tokens: 50, messages: [{ role: "user", content: "Hi" }], stream: true };
      const reference = await fetch(`${direct.baseUrl}/messages`, {
        method: "POST",
        headers: { "x-api-key": MOCK_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((r) => r.text());
      const via = await stream("/v1/messages", { ...body, model: "mock-anthropic/claude-sonnet-4-5" }, { "x-api-key": harness.account.apiKey });
      const normalise = (text: string) => text.replace(/"id":"msg_[A-Za-z0-9]+"/g, '"id":"msg_X"').replace(/"id":"toolu_[A-Za-z0-9]+"/g, '"id":"toolu_X"');
      const expected = normalise(reference).replaceAll('"model":"claude-sonnet-4-5-20250929"', '"model":"mock-anthropic/claude-sonnet-4-5"');
      expect(normalise(via.text)).toBe(expected);
    } finally {
      await direct.close();
    }
  });
});

describe("warnings", () => {
  test("a field the upstream protocol cannot carry is reported in a response header", async () => {
    const response = await fetch(harness.server.url + "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": harness.account.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", max_tokens: 20, top_k: 5, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-switchyard-warnings")).toContain("top_k");
  });
});

describe("worker death", () => {
  test("a stream whose translation worker dies ends with an error frame, and the next request is served", async () => {
    const translator = harness.server.server.services.translator as unknown as {
      pool?: { members: Array<{ worker: Worker }>; stats(): { restarts: number }; ready(): Promise<void> };
    };
    expect(translator.pool).toBeDefined();
    harness.mocks.openai.queueScenarios({ kind: "slow", delayMs: 0, chunkDelayMs: 150, text: "one two three four five six seven" });
    const response = await fetch(harness.server.url + "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": harness.account.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", stream: true, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] }),
    });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    const [killed, restartsBefore] = [translator.pool!.members.length, translator.pool!.stats().restarts];
    for (const member of translator.pool!.members) member.worker.terminate();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toMatch(/event: error\ndata: \{"type":"error"/);
    // Replacement workers start: waited for, not slept for (a loaded machine is slower).
    for (let polls = 0; translator.pool!.stats().restarts < restartsBefore + killed; polls++) {
      if (polls > 1_000) throw new Error("the dead workers were not replaced");
      await Bun.sleep(10);
    }
    await translator.pool!.ready();
    const next = await harness.server.api("POST", "/v1/messages", {
      headers: { "x-api-key": harness.account.apiKey },
      body: { model: "mock-openai/gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content: "Hi" }] },
    });
    expect(next.status).toBe(200);
  });
});

describe("TRANSLATION_MODE=auto", () => {
  test("translates small bodies inline and sends large ones to the worker pool", async () => {
    const auto = await startInferenceHarness({ translationMode: "auto", translationInlineMaxBytes: 4096 });
    try {
      const translator = auto.server.server.services.translator as unknown as { pooled: { pool: { stats(): { busy: number } } }; mode: string };
      expect(translator.mode).toBe("auto");
      type Exchange = (payload: string, texts: readonly string[] | undefined, key?: string) => Promise<{ body: string; texts?: readonly string[] }>;
      const pool = translator.pooled.pool as unknown as { exchange: Exchange };
      let pooledCalls = 0;
      const original = pool.exchange.bind(pool);
      pool.exchange = (payload, texts, key) => {
        pooledCalls++;
        return original(payload, texts, key);
      };
      const send = (content: string) =>
        auto.server.api("POST", "/v1/messages", {
          headers: { "x-api-key": auto.account.apiKey },
          body: { model: "mock-openai/gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content }] },
        });
      expect((await send("small")).status).toBe(200);
      expect(pooledCalls).toBe(0);
      expect((await send("x".repeat(10_000))).status).toBe(200);
      expect(pooledCalls).toBe(2); // decode and encode; the small upstream answer is translated inline
    } finally {
      await auto.close();
    }
  });
});

describe("TRANSLATION_MODE=auto, a large body", () => {
  test("declared or chunked, ASCII or not, reaches the upstream as inline translation writes it", async () => {
    const auto = await startInferenceHarness({ translationMode: "auto", translationInlineMaxBytes: 4096 });
    try {
      const long = "Grüße — “quoted” ✓ 🙂 ".repeat(5_000);
      for (const [content, upstream, model] of [
        [long, "anthropic-messages", "mock-anthropic/claude-sonnet-4-5"],
        [long, "openai-chat", "mock-openai/gpt-4o-mini"],
        ["plain ascii ".repeat(10_000), "anthropic-messages", "mock-anthropic/claude-sonnet-4-5"],
      ] as const) {
        const body = JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: [{ type: "text", text: content }] }, { role: "user", content: "and a short one" }] });
        const expected = encodeUpstreamRequest(upstream, decodeClientRequest("openai-chat", body).request, model.slice(model.indexOf("/") + 1), false).body;
        const mock = upstream === "openai-chat" ? auto.mocks.openai : auto.mocks.anthropic;
        for (const chunked of [false, true]) {
          const bytes = new TextEncoder().encode(body);
          const sent = chunked
            ? new ReadableStream<Uint8Array>({
                start(controller) {
                  // Split inside multi-byte characters as a network would.
                  for (let at = 0; at < bytes.byteLength; at += 7_777) controller.enqueue(bytes.subarray(at, at + 7_777));
                  controller.close();
                },
              })
            : bytes;
          const response = await fetch(`${auto.server.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${auto.account.apiKey}`, "content-type": "application/json" },
            body: sent,
          });
          expect(response.status).toBe(200);
          await response.arrayBuffer();
          const recorded = mock.requests.at(-1)!;
          expect(recorded.headers["content-type"]).toBe("application/json");
          expect(recorded.body).toEqual(JSON.parse(expected));
        }
      }
    } finally {
      await auto.close();
    }
  });
});

describe("a long stream", () => {
  test("keeps a few accounting entries, not one per chunk, and still counts every output character", async () => {
    const services = harness.server.server.services;
    const outcomes: Array<{ attempts: Array<{ signals: Array<{ outputBytes: number }> }> }> = [];
    const add = services.pendingSettlements.add.bind(services.pendingSettlements);
    services.pendingSettlements.add = (outcome) => {
      outcomes.push(outcome);
      add(outcome);
    };
    try {
      // Frames 2 ms apart reach the gateway as separate chunks.
      const text = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");
      for (const [path, model] of [
        ["/v1/chat/completions", "mock-openai/gpt-4o-mini"],
        ["/v1/messages", "mock-openai/gpt-4o-mini"],
      ] as const) {
        harness.mocks.openai.queueScenarios({ kind: "text", text, chunkDelayMs: 2 });
        const { response } = await stream(path, { model, max_tokens: 50, ...CHAT });
        expect(response.status).toBe(200);
        const signals = outcomes.at(-1)!.attempts[0]!.signals;
        expect(signals.length).toBeLessThan(10);
        expect(signals.reduce((sum, s) => sum + s.outputBytes, 0)).toBe(text.length);
      }
    } finally {
      services.pendingSettlements.add = add;
    }
  });
});

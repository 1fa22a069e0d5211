import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { createTestDatabase } from "../support/test-database";
import { MOCK_KEY, spawnServerOnMocks } from "../support/inference-harness";
import { DEFAULT_TEXT, startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import { startOtlpCollector, type CollectedSpan, type OtlpCollector } from "../support/otlp-collector";
import type { SpawnedServer } from "../support/spawn-server";

/**
 * Request traces (docs/operations.md "Traces") from `bun src/main.ts` with the OTEL_* variables set,
 * exported over OTLP/HTTP to a collector stand-in on loopback: the spans of five requests
 * (JSON, read back), then the exporter as an operator meets it (the protobuf default, a
 * collector that never answers).
 */

const SERVER_KIND = 2;
const CLIENT_KIND = 3;
const INTERNAL_KIND = 1;
const ERROR = 2;
/** A client's own trace context (W3C Trace Context's example ids). */
const CLIENT_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID = "00f067aa0ba902b7";
/** Text of every prompt sent: it must appear in no exported byte. */
const PROMPT = "tracing-canary-prompt 7f3a9c: the secret plans of the harbour";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let mocks: MockUpstreamSet;
let collector: OtlpCollector;
let server: SpawnedServer;
let spans: CollectedSpan[];
const responses: Record<string, { status: number; requestId: string; body: string }> = {};
let funded: string;

async function createAccount(url: string, credit: number): Promise<string> {
  const created = await fetch(`${url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: "Bearer op", "content-type": "application/json" },
    body: JSON.stringify({ email: `t${Date.now()}${Math.random()}@example.test`, credit_micro_usd: credit }),
  }).then((r) => r.json() as Promise<{ api_key: string }>);
  return created.api_key;
}

async function chat(name: string, apiKey: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<void> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ messages: [{ role: "user", content: PROMPT }], ...body }),
  });
  responses[name] = { status: response.status, requestId: response.headers.get("x-request-id") ?? "", body: await response.text() };
}

/** The request span of `name`'s request, and its children. */
function traceOf(name: string): { root: CollectedSpan; children: CollectedSpan[] } {
  const requestId = responses[name]!.requestId;
  const root = spans.find((span) => span.kind === SERVER_KIND && span.attributes["switchyard.request_id"] === requestId);
  if (root === undefined) throw new Error(`no request span for ${name} (${requestId})`);
  const children = spans.filter((span) => span.traceId === root.traceId && span.parentSpanId === root.spanId);
  return { root, children };
}

/** The request span's attributes of a stream the Anthropic mock served (its default answer). */
const SERVED_STREAM = {
  "gen_ai.provider.name": "mock-anthropic",
  "gen_ai.usage.input_tokens": 12,
  "gen_ai.usage.output_tokens": 5,
  "gen_ai.response.finish_reasons": ["stop"],
  "switchyard.streamed": true,
  "switchyard.status": "succeeded",
};

const stageNames = (children: CollectedSpan[]) => children.filter((span) => span.kind === INTERNAL_KIND).map((span) => span.name);
const attemptsOf = (children: CollectedSpan[]) => children.filter((span) => span.kind === CLIENT_KIND).sort((a, b) => Number(a.attributes["switchyard.attempt"]) - Number(b.attributes["switchyard.attempt"]));

beforeAll(async () => {
  database = await createTestDatabase();
  mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
});

afterAll(async () => {
  await mocks.close();
  await database.drop();
});

describe("request traces over OTLP/HTTP", () => {
  // The batch processor's delay is ten minutes: every span arrives through the flush SIGTERM makes.
  beforeAll(async () => {
    collector = await startOtlpCollector();
    server = await spawnServerOnMocks(mocks, {
      DATABASE_URL: database.url,
      ADMIN_TOKEN: "op",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "switchyard-under-test",
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    });
    funded = await createAccount(server.url, 100_000_000);
    const broke = await createAccount(server.url, 0);
    await chat("sync", funded, { model: "mock-openai/gpt-4o-mini" }, { traceparent: `00-${CLIENT_TRACE_ID}-${CLIENT_SPAN_ID}-01` });
    // A frame every 5 ms: the stream is relayed (one that arrives whole is answered as one body).
    mocks.anthropic.queueScenarios({ kind: "text", chunkDelayMs: 5 });
    await chat("stream", funded, { model: "mock-anthropic/claude-sonnet-4-5", stream: true, stream_options: { include_usage: true } });
    await chat("whole stream", funded, { model: "mock-anthropic/claude-sonnet-4-5", stream: true, stream_options: { include_usage: true } });
    await chat("refused", broke, { model: "mock-openai/gpt-4o-mini" });
    await chat("fallback", funded, { model: "ignored/by-models", models: ["mock-openai/gpt-4o-mini@error500", "mock-google/gemini-2.5-flash"] });
    await chat("unauthenticated", "sk-not-a-key", { model: "mock-openai/gpt-4o-mini" });
    // Nothing is exported before the flush SIGTERM makes (the schedule delay is ten minutes).
    expect(collector.received).toEqual([]);
    server.process.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    spans = collector.spans();
  }, 60_000);

  afterAll(async () => {
    server.process.kill("SIGKILL");
    await collector.close();
  });

  test("the requests were answered as the scenario says", () => {
    expect(Object.fromEntries(Object.entries(responses).map(([name, response]) => [name, response.status]))).toEqual({
      sync: 200,
      stream: 200,
      "whole stream": 200,
      refused: 402,
      fallback: 200,
      unauthenticated: 401,
    });
    expect(collector.received.every((body) => body.path === "/v1/traces" && body.contentType.includes("application/json"))).toBe(true);
  });

  test("a whole answer: a SERVER span in the client's trace with the GenAI attributes, a span per stage and a CLIENT span for its upstream", () => {
    const { root, children } = traceOf("sync");
    expect(root.name).toBe("chat mock-openai/gpt-4o-mini");
    expect(root.traceId).toBe(CLIENT_TRACE_ID);
    expect(root.parentSpanId).toBe(CLIENT_SPAN_ID);
    expect(root.resource["service.name"]).toBe("switchyard-under-test");
    const charge = JSON.parse(responses.sync!.body).usage.cost;
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "mock-openai/gpt-4o-mini",
      "gen_ai.response.model": "mock-openai/gpt-4o-mini",
      "gen_ai.provider.name": "mock-openai",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.usage.output_tokens": 5,
      "gen_ai.response.finish_reasons": ["stop"],
      "switchyard.request_id": responses.sync!.requestId,
      "switchyard.streamed": false,
      "http.response.status_code": 200,
      "url.path": "/v1/chat/completions",
    });
    expect(root.attributes["switchyard.cost_micro_usd"]).toBeGreaterThan(0);
    expect(root.attributes["switchyard.cost_micro_usd"]).toBe(Math.round(charge * 1_000_000));
    expect(root.status).not.toBe(ERROR);
    expect(stageNames(children)).toEqual(["authenticate", "decode", "resolve", "plan", "fund", "admit", "attempt"]);
    const [upstream, ...more] = attemptsOf(children);
    expect(more).toEqual([]);
    expect(upstream!.name).toBe("chat gpt-4o-mini");
    expect(upstream!.attributes).toMatchObject({
      "gen_ai.provider.name": "mock-openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "switchyard.endpoint": "mock-openai/gpt-4o-mini",
      "switchyard.attempt": 1,
      "switchyard.attempt_outcome": "success",
      "server.address": "127.0.0.1",
      "http.response.status_code": 200,
    });
    // Every child lies within the request's span.
    for (const child of children) {
      expect(child.startNs).toBeGreaterThanOrEqual(root.startNs);
      expect(child.endNs).toBeLessThanOrEqual(root.endNs);
    }
  });

  test("a stream: its span ends when the stream ends, after a relay span, with the final usage", () => {
    const { root, children } = traceOf("stream");
    expect(root.name).toBe("chat mock-anthropic/claude-sonnet-4-5");
    expect(root.parentSpanId).toBe("");
    expect(root.attributes).toMatchObject(SERVED_STREAM);
    expect(root.attributes["switchyard.cost_micro_usd"]).toBeGreaterThan(0);
    expect(stageNames(children)).toEqual(["authenticate", "decode", "resolve", "plan", "fund", "admit", "attempt", "relay"]);
    const relay = children.find((span) => span.name === "relay")!;
    const attempt = children.find((span) => span.name === "attempt")!;
    expect(relay.startNs).toBe(attempt.endNs);
    const [upstream] = attemptsOf(children);
    expect(upstream!.attributes["switchyard.upstream_protocol"]).toBe("anthropic-messages");
    expect(upstream!.events).toContain("first_token");
    expect(upstream!.endNs).toBeGreaterThan(attempt.endNs);
  });

  test("a stream that arrived whole: settled during its attempt stage, which its span ends with, and no relay span", () => {
    const { root, children } = traceOf("whole stream");
    expect(root.attributes).toMatchObject(SERVED_STREAM);
    expect(root.attributes["switchyard.cost_micro_usd"]).toBeGreaterThan(0);
    expect(stageNames(children)).toEqual(["authenticate", "decode", "resolve", "plan", "fund", "admit", "attempt"]);
    const attempt = children.find((span) => span.name === "attempt")!;
    expect(attempt.endNs).toBe(root.endNs);
    const [upstream] = attemptsOf(children);
    expect(upstream!.events).toContain("first_token");
    expect(upstream!.endNs).toBeLessThanOrEqual(attempt.endNs);
  });

  test("a refused request: an error span whose last stage is the one that refused it, and no upstream span", () => {
    const { root, children } = traceOf("refused");
    expect(root.status).toBe(ERROR);
    expect(root.attributes).toMatchObject({ "error.type": "payment_required", "http.response.status_code": 402, "switchyard.status": "failed" });
    expect(stageNames(children)).toEqual(["authenticate", "decode", "resolve", "plan", "fund", "admit"]);
    expect(attemptsOf(children)).toEqual([]);
  });

  test("a failed first attempt and its fallback: one CLIENT span each, the first an error with the upstream's status", () => {
    const { root, children } = traceOf("fallback");
    expect(root.status).not.toBe(ERROR);
    expect(root.attributes).toMatchObject({
      "gen_ai.request.model": "mock-openai/gpt-4o-mini@error500",
      "gen_ai.response.model": "mock-google/gemini-2.5-flash",
      "gen_ai.provider.name": "mock-google",
      "switchyard.attempts": 2,
    });
    const [first, second] = attemptsOf(children);
    expect(first!.status).toBe(ERROR);
    expect(first!.attributes).toMatchObject({ "switchyard.attempt": 1, "http.response.status_code": 500, "gen_ai.provider.name": "mock-openai", "switchyard.attempt_outcome": "provider_error" });
    expect(typeof first!.attributes["error.type"]).toBe("string");
    expect(second!.status).not.toBe(ERROR);
    expect(second!.name).toBe("generate_content gemini-2.5-flash");
    expect(second!.attributes).toMatchObject({ "switchyard.attempt": 2, "gen_ai.provider.name": "mock-google", "switchyard.attempt_outcome": "success", "http.response.status_code": 200 });
    expect(second!.startNs).toBeGreaterThanOrEqual(first!.endNs);
  });

  test("a request without a valid credential: an error span with the authenticate stage alone", () => {
    const { root, children } = traceOf("unauthenticated");
    expect(root.name).toBe("chat");
    expect(root.status).toBe(ERROR);
    expect(root.attributes).toMatchObject({ "error.type": "authentication", "http.response.status_code": 401 });
    expect(stageNames(children)).toEqual(["authenticate"]);
  });

  test("no prompt, answer or key is in any exported byte", () => {
    const exported = collector.received.map((body) => new TextDecoder().decode(body.bytes)).join("\n");
    expect(exported.length).toBeGreaterThan(0);
    for (const secret of [PROMPT, "tracing-canary", DEFAULT_TEXT, MOCK_KEY, funded, "sk-not-a-key"]) expect(exported).not.toContain(secret);
  });
});

describe("the exporter", () => {
  const prompt = "exporter-canary-prompt 52e1";
  const ask = (on: SpawnedServer, apiKey: string) =>
    fetch(`${on.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: prompt }] }),
    });

  test("by default spans go as OTLP protobuf to the traces endpoint as written", async () => {
    const sink = await startOtlpCollector();
    const traced = await spawnServerOnMocks(mocks, {
      DATABASE_URL: database.url,
      ADMIN_TOKEN: "op",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink.url}/custom/traces`,
    });
    try {
      const response = await ask(traced, await createAccount(traced.url, 100_000_000));
      expect(response.status).toBe(200);
      const requestId = response.headers.get("x-request-id")!;
      traced.process.kill("SIGTERM");
      expect(await traced.exited).toBe(0);
      expect(sink.received.length).toBeGreaterThan(0);
      for (const body of sink.received) {
        expect(body.path).toBe("/custom/traces");
        expect(body.contentType).toBe("application/x-protobuf");
      }
      // Protobuf carries strings as their UTF-8 bytes: the attributes are there, the prompt is not.
      const bytes = sink.received.map((body) => Buffer.from(body.bytes).toString("latin1")).join("");
      expect(bytes).toContain(requestId);
      expect(bytes).toContain("gen_ai.usage.output_tokens");
      expect(bytes).not.toContain(prompt);
    } finally {
      traced.process.kill("SIGKILL");
      await sink.close();
    }
  }, 60_000);

  test("a collector that accepts connections and never answers: requests are served, and SIGTERM still ends the process", async () => {
    const held: Socket[] = [];
    const silent: Server = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    const traced = await spawnServerOnMocks(mocks, {
      DATABASE_URL: database.url,
      ADMIN_TOKEN: "op",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      // Export at once, a tiny queue, and deadlines that would outlast the test: only the
      // gateway's own bounds keep requests and the exit from waiting on the collector.
      OTEL_BSP_SCHEDULE_DELAY: "0",
      OTEL_BSP_MAX_QUEUE_SIZE: "4",
      OTEL_BSP_EXPORT_TIMEOUT: "600000",
      OTEL_EXPORTER_OTLP_TIMEOUT: "600000",
      LOG_LEVEL: "silent",
    });
    try {
      const apiKey = await createAccount(traced.url, 100_000_000);
      const statuses = await Promise.all(Array.from({ length: 20 }, () => ask(traced, apiKey).then((response) => response.status)));
      expect(statuses).toEqual(Array(20).fill(200));
      // The exporter connects on its own schedule, after the spans it sends: wait for it (bounded).
      for (const until = Date.now() + 10_000; held.length === 0 && Date.now() < until; ) await Bun.sleep(20);
      expect(held.length).toBeGreaterThan(0);
      traced.process.kill("SIGTERM");
      expect(await traced.exited).toBe(0);
    } finally {
      traced.process.kill("SIGKILL");
      for (const socket of held) socket.destroy();
      silent.close();
    }
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { connect } from "node:net";
import { chunkedBody, rawHttp } from "../support/raw-http";

/**
 * Bodies that used to crash a handler (500 "Maximum call stack size exceeded", 503
 * "billing is temporarily unavailable" from a bigint overflow) or to get the runtime's
 * bare 413: each is now a 400/413 in the client's own protocol.
 */

const INFERENCE_LIMIT = 2 * 1024 * 1024;
let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness({ maxInferenceBodyBytes: INFERENCE_LIMIT });
});
afterAll(() => harness.close());

type Protocol = "openai-chat" | "openai-responses" | "anthropic-messages" | "google-generate-content";

const CHAT_MODEL = "mock-openai/gpt-4o-mini";
const GOOGLE_MODEL = "mock-google/gemini-2.5-flash";
const PATHS: Record<Protocol, string> = {
  "openai-chat": "/v1/chat/completions",
  "openai-responses": "/v1/responses",
  "anthropic-messages": "/v1/messages",
  "google-generate-content": `/v1beta/models/${CHAT_MODEL}:generateContent`,
};

function post(protocol: Protocol, rawBody: string, path = PATHS[protocol]) {
  return harness.server.api("POST", path, { token: harness.account.apiKey, rawBody });
}

function expectProtocolError(protocol: Protocol, response: { status: number; body: any; text: string }, status: number, messagePart: string) {
  expect(response.status).toBe(status);
  const message: string = protocol === "anthropic-messages" ? response.body.error.message : response.body.error.message;
  if (protocol === "anthropic-messages") expect(response.body.type).toBe("error");
  if (protocol === "google-generate-content") expect(response.body.error.code).toBe(status);
  else expect(typeof response.body.error.type).toBe("string");
  expect(message).toContain(messagePart);
}

/** `{"a":{"a":…1…}}`, `depth` objects deep, as text: building it as a value would need recursion to serialize. */
const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const DEEP = 100_000;
const TOO_DEEP = "deeper than 128 levels";

describe("JSON nested ~100k deep is a 400, never a stack overflow", () => {
  const user = `"messages":[{"role":"user","content":"hi"}]`;
  const cases: Array<[string, Protocol, string]> = [
    ["chat tools[].function.parameters", "openai-chat", `{"model":"${CHAT_MODEL}",${user},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":${deepObject(DEEP)}}}}}]}`],
    ["chat metadata", "openai-chat", `{"model":"${CHAT_MODEL}",${user},"metadata":${deepObject(DEEP)}}`],
    ["chat response_format", "openai-chat", `{"model":"${CHAT_MODEL}",${user},"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${deepObject(DEEP)}}}}`],
    ["responses metadata (arrays)", "openai-responses", `{"model":"${CHAT_MODEL}","input":"hi","metadata":${deepArray(DEEP)}}`],
    ["responses tools[].parameters", "openai-responses", `{"model":"${CHAT_MODEL}","input":"hi","tools":[{"type":"function","name":"f","parameters":${deepObject(DEEP)}}]}`],
    ["anthropic tool_use.input", "anthropic-messages", `{"model":"${CHAT_MODEL}","max_tokens":16,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":${deepObject(DEEP)}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`],
    ["anthropic tools[].input_schema", "anthropic-messages", `{"model":"${CHAT_MODEL}","max_tokens":16,${user},"tools":[{"name":"f","input_schema":${deepObject(DEEP)}}]}`],
    ["google generationConfig.responseSchema", "google-generate-content", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":${deepObject(DEEP)}}}`],
  ];
  for (const [name, protocol, body] of cases) {
    test(`${protocol}: ${name}`, async () => {
      expectProtocolError(protocol, await post(protocol, body), 400, TOO_DEEP);
    });
  }

  test("openai-chat → Google: an anyOf 10k deep in tool parameters", async () => {
    const anyOf = '{"anyOf":['.repeat(10_000) + '{"type":"string"}' + "]}".repeat(10_000);
    const body = `{"model":"${GOOGLE_MODEL}",${user},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":${anyOf}}}}}]}`;
    // Several times: the old failure depended on which thread (and stack) translated it.
    for (let i = 0; i < 3; i++) expectProtocolError("openai-chat", await post("openai-chat", body), 400, TOO_DEEP);
  });

  test("openai-chat → Google: $defs that $ref each other eight times over (8^8 nodes once inlined) are a quick 400", async () => {
    // d0 … d8: each has eight properties referring to the next; 2 KB of JSON, tens of millions of nodes inlined.
    const defs: Record<string, unknown> = { d8: { type: "string" } };
    for (let level = 7; level >= 0; level--) {
      const properties: Record<string, unknown> = {};
      for (let p = 0; p < 8; p++) properties[`p${p}`] = { $ref: `#/$defs/d${level + 1}` };
      defs[`d${level}`] = { type: "object", properties };
    }
    const parameters = { type: "object", properties: { root: { $ref: "#/$defs/d0" } }, $defs: defs };
    const body = JSON.stringify({ model: GOOGLE_MODEL, messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f", parameters } }] });
    // Unbounded, this was served after seconds of CPU on the request thread; bounded, it stops at 10,000 nodes.
    expectProtocolError("openai-chat", await post("openai-chat", body), 400, "$refs are inlined");
  });

  test("a tool-call argument string nested 100k deep is sent on as {} rather than crashing the encoder", async () => {
    const body = JSON.stringify({
      model: GOOGLE_MODEL,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: deepObject(DEEP) } }] },
        { role: "tool", tool_call_id: "c1", content: deepArray(DEEP) },
      ],
    });
    const response = await post("openai-chat", body);
    expect(response.status).toBe(200);
  });

  test("nesting within the limit is served", async () => {
    const body = `{"model":"${CHAT_MODEL}",${user},"metadata":{"x":${deepArray(100)}}}`;
    expect((await post("openai-chat", body)).status).toBe(200);
  });
});

describe("integers out of range are a 400 naming the field, not a billing 503", () => {
  const cases: Array<[Protocol, string, (value: string) => string]> = [
    ["openai-chat", "max_tokens", (v) => `{"model":"${CHAT_MODEL}","messages":[{"role":"user","content":"hi"}],"max_tokens":${v}}`],
    ["openai-chat", "max_completion_tokens", (v) => `{"model":"${CHAT_MODEL}","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":${v}}`],
    ["openai-responses", "max_output_tokens", (v) => `{"model":"${CHAT_MODEL}","input":"hi","max_output_tokens":${v}}`],
    ["anthropic-messages", "max_tokens", (v) => `{"model":"${CHAT_MODEL}","max_tokens":${v},"messages":[{"role":"user","content":"hi"}]}`],
    ["anthropic-messages", "thinking.budget_tokens", (v) => `{"model":"${CHAT_MODEL}","max_tokens":16,"thinking":{"type":"enabled","budget_tokens":${v}},"messages":[{"role":"user","content":"hi"}]}`],
    ["anthropic-messages", "top_k", (v) => `{"model":"${CHAT_MODEL}","max_tokens":16,"top_k":${v},"messages":[{"role":"user","content":"hi"}]}`],
    ["google-generate-content", "generationConfig.maxOutputTokens", (v) => `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":${v}}}`],
    ["google-generate-content", "generationConfig.topK", (v) => `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"topK":${v}}}`],
  ];
  for (const [protocol, field, body] of cases) {
    test(`${protocol}: ${field} 1e20, 1e308 and -1e20`, async () => {
      for (const value of ["1e20", "1e308", "-1e20"]) expectProtocolError(protocol, await post(protocol, body(value)), 400, field);
    });
  }

  test("openai-chat: seed beyond 2^53 is a 400", async () => {
    const body = `{"model":"${CHAT_MODEL}","messages":[{"role":"user","content":"hi"}],"seed":1e20}`;
    expectProtocolError("openai-chat", await post("openai-chat", body), 400, "seed");
  });

  test("the largest token limit is admitted (priced, not crashed): 402 for a small wallet or 200", async () => {
    const body = `{"model":"${CHAT_MODEL}","messages":[{"role":"user","content":"hi"}],"max_tokens":2147483647}`;
    expect([200, 402]).toContain((await post("openai-chat", body)).status);
  });
});

describe("field names become header text", () => {
  test("an unknown field named with a NUL, an emoji and a newline still gets its answer, the warning header in printable ASCII", async () => {
    const body = JSON.stringify({ model: "mock-anthropic/claude-haiku-4-5", messages: [{ role: "user", content: "hi" }], ["na\u00efve\u0000😀\n"]: 1 });
    const response = await post("openai-chat", body);
    expect(response.status).toBe(200);
    const warnings = response.headers.get("x-switchyard-warnings") ?? "";
    expect(warnings).toContain("unsupported_field:na?ve???");
    expect(warnings).toMatch(/^[\x20-\x7e]+$/);
  });
});

describe("inference bodies past the limit are a 413 in the client's protocol, chunked or not", () => {
  const host = () => `Host: ${new URL(harness.server.url).host}`;
  for (const protocol of ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"] as Protocol[]) {
    test(`${protocol}: a chunked body past the limit`, async () => {
      // Past the limit by less than a limit: the server drains that much so a client that writes
      // everything before reading still gets the answer (beyond it the connection is reset).
      const body = JSON.stringify({ model: CHAT_MODEL, input: "hi", messages: [{ role: "user", content: "x".repeat(INFERENCE_LIMIT * 1.5) }] });
      const head = `POST ${PATHS[protocol]} HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`;
      const response = await rawHttp(harness.server.url, head, chunkedBody(body));
      expectProtocolError(protocol, { status: response.status, body: JSON.parse(response.body), text: response.body }, 413, `exceeds ${INFERENCE_LIMIT} bytes`);
    });
  }

  test("a client that writes the rest of its body late, reading nothing until it is done, still gets the 413", async () => {
    // The answer waits for the rest of the body (within a limit's worth): answered and closed
    // while bytes were still coming, the connection would be reset and the paused client
    // would lose the response waiting in its buffer.
    const body = chunkedBody(JSON.stringify({ model: CHAT_MODEL, messages: [{ role: "user", content: "x".repeat(INFERENCE_LIMIT * 1.5) }] }));
    const cut = Math.floor(body.length * 0.8);
    const head = `POST /v1/chat/completions HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
    const url = new URL(harness.server.url);
    const received = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(Number(url.port), url.hostname, async () => {
        socket.pause();
        socket.write(head + body.slice(0, cut));
        await Bun.sleep(300);
        socket.write(body.slice(cut));
        await Bun.sleep(300);
        socket.resume();
      });
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("error", (error) => reject(new Error(`the connection failed (${error.message}) after ${Buffer.concat(chunks).length} bytes of answer`)));
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
    expect(received.slice(0, received.indexOf("\r\n"))).toBe("HTTP/1.1 413 Payload Too Large");
    expect(received).toContain(`exceeds ${INFERENCE_LIMIT} bytes`);
  });

  test("a streamed (chunked) upload of 10× the limit through fetch gets the 413 in the client's protocol", async () => {
    const text = new TextEncoder().encode(JSON.stringify({ model: CHAT_MODEL, messages: [{ role: "user", content: "x".repeat(INFERENCE_LIMIT * 10) }] }));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < text.length; at += 1 << 20) controller.enqueue(text.subarray(at, at + (1 << 20)));
        controller.close();
      },
    });
    const response = await fetch(`${harness.server.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${harness.account.apiKey}`, "content-type": "application/json" }, body });
    expectProtocolError("openai-responses", { status: response.status, body: await response.json(), text: "" }, 413, `exceeds ${INFERENCE_LIMIT} bytes`);
  });

  test("a Content-Length far past every limit (40 MiB declared) is our 413, not the runtime's empty one", async () => {
    const head = `POST /v1/messages HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${40 * 1024 * 1024}`;
    const response = await rawHttp(harness.server.url, head, "{");
    expectProtocolError("anthropic-messages", { status: response.status, body: JSON.parse(response.body), text: response.body }, 413, "exceeds");
  });

  test("a chunked body within the limit is served", async () => {
    const body = JSON.stringify({ model: CHAT_MODEL, messages: [{ role: "user", content: "x".repeat(INFERENCE_LIMIT / 2) }] });
    const head = `POST /v1/chat/completions HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`;
    expect((await rawHttp(harness.server.url, head, chunkedBody(body))).status).toBe(200);
  });
});

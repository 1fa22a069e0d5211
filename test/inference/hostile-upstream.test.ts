import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBehindUpstream, type HandWrittenUpstreamHarness } from "../support/inference-harness";
import type { TestAccount, TestServer } from "../support/test-server";

/**
 * An upstream that answers without end: a body that never stops, one that declares more than
 * the gateway reads, an error body that never stops, a stream line that never ends. Any
 * customer can point a model at such a server (a BYOK key's base URL); the gateway must
 * read a bounded amount of it and answer its client, never buffer it all.
 */

const MAX_UPSTREAM_BODY_BYTES = 1024 * 1024;
const MODEL = "mock-openai/gpt-4o-mini";

type Behaviour = "endless" | "declared too long" | "endless error" | "within" | "endless stream line";
let behaviour: Behaviour = "within";
/** Bytes the upstream got to send of its last answer before the gateway stopped reading. */
let sent = 0;
let cancelled = false;

/** A body of `chunk` repeated until its reader stops: counts what it sent, notes the cancel. */
function endless(head: string, chunk: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let first = true;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const bytes = encoder.encode(first ? head + chunk : chunk);
      first = false;
      sent += bytes.byteLength;
      controller.enqueue(bytes);
    },
    cancel() {
      cancelled = true;
    },
  });
}

const completion = (content: string) =>
  JSON.stringify({
    id: "chatcmpl-hostile",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o-mini",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
  });

let harness: HandWrittenUpstreamHarness;
let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  harness = await startBehindUpstream(async (request) => {
    await request.arrayBuffer();
    sent = 0;
    cancelled = false;
    const json = { "content-type": "application/json" };
    switch (behaviour) {
      case "endless":
        return new Response(endless('{"id":"chatcmpl-x","choices":[{"message":{"content":"', "x".repeat(16 * 1024)), { headers: json });
      case "declared too long": {
        const body = completion("y".repeat(2 * MAX_UPSTREAM_BODY_BYTES));
        return new Response(body, { headers: { ...json, "content-length": String(Buffer.byteLength(body)) } });
      }
      case "endless error":
        return new Response(endless('{"error":{"message":"', "z".repeat(16 * 1024)), { status: 500, headers: json });
      case "within":
        return new Response(completion("w".repeat(MAX_UPSTREAM_BODY_BYTES / 2)), { headers: json });
      case "endless stream line":
        return new Response(endless('data: {"id":"chatcmpl-x","choices":[{"index":0,"delta":{"content":"', "s".repeat(64 * 1024)), { headers: { "content-type": "text/event-stream" } });
    }
  }, { maxUpstreamBodyBytes: MAX_UPSTREAM_BODY_BYTES });
  ({ server, account } = harness);
});

afterAll(() => harness.close());

/** The upstream learns that its reader went away a moment after the gateway answers. */
async function untilCancelled(): Promise<void> {
  for (let waited = 0; !cancelled && waited < 5_000; waited += 10) await Bun.sleep(10);
  expect(cancelled).toBe(true);
}

function ask(stream = false) {
  return server.api("POST", "/v1/chat/completions", { token: account.apiKey, body: { model: MODEL, max_tokens: 10, stream, messages: [{ role: "user", content: "hi" }] } });
}

describe("an upstream that answers without end is read only so far", () => {
  test("an answer within MAX_UPSTREAM_BODY_BYTES is served", async () => {
    behaviour = "within";
    const response = await ask();
    expect(response.status).toBe(200);
    expect(response.body.choices[0].message.content).toHaveLength(MAX_UPSTREAM_BODY_BYTES / 2);
  });

  test("a body that never ends is cut off at the limit: a 502 in the client's protocol, the upstream stopped", async () => {
    behaviour = "endless";
    const response = await ask();
    expect(response.status).toBe(502);
    expect(response.body.error.code).toBe("upstream_invalid_response");
    expect(response.body.error.message).toContain("larger than");
    await untilCancelled();
    // It read the limit and what the sockets' buffers held, not what the upstream would have gone on sending.
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });

  test("a body whose Content-Length is past the limit is refused before it is read", async () => {
    behaviour = "declared too long";
    const response = await ask();
    expect(response.status).toBe(502);
    expect(response.body.error.code).toBe("upstream_invalid_response");
  });

  test("an error body that never ends is not read to its end: the error is the status's own", async () => {
    behaviour = "endless error";
    const response = await ask();
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(typeof response.body.error.message).toBe("string");
    await untilCancelled();
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });

  test("a stream line that never ends is cut off at the event limit: an error, the upstream stopped", async () => {
    behaviour = "endless stream line";
    const response = await ask(true);
    expect(response.status).toBe(502);
    expect(response.body.error.code).toBe("upstream_invalid_response");
    await untilCancelled();
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });
});

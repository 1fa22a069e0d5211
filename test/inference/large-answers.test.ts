import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { startBehindUpstream, type HandWrittenUpstreamHarness } from "../support/inference-harness";
import type { TestAccount, TestServer } from "../support/test-server";
import { translateResponse } from "../../src/translation/translate-response";
import { withUsageCost } from "../../src/protocols/openai-chat/with-usage-cost";

/**
 * Whole answers larger than the translator's inline limit are read as bytes, translated in a
 * worker, and (when not ASCII) come back as the worker's UTF-8 bytes, the charge spliced into
 * them by byte offset (src/pipeline/respond-json.ts). The client must get exactly what inline
 * translation writes, with the charge where addCharge puts it, however the upstream sent the
 * answer: with a Content-Length, chunked, or compressed.
 */

const MODEL = "mock-openai/gpt-4o-mini";
const INLINE_MAX = 4096;

type Framing = "declared" | "chunked" | "gzip";
let answer = "";
let framing: Framing = "declared";

/**
 * An answer of `content`, with a `usage` key inside a string (escaped in JSON, never matched)
 * and characters outside ASCII after the usage object, so a byte offset counted in characters
 * would put the charge in the wrong place.
 */
const completion = (content: string) =>
  JSON.stringify({
    id: "chatcmpl-large",
    object: "chat.completion",
    created: 1767225600,
    model: "gpt-4o-mini",
    choices: [{ index: 0, message: { role: "assistant", content: `${content} "usage": {} ` }, finish_reason: "stop" }],
    usage: { prompt_tokens: 9, completion_tokens: 100, total_tokens: 109 },
    system_fingerprint: /^[\x00-\x7f]*$/.test(content) ? "fp_ascii" : "fp_ünïcödé",
  });

let harness: HandWrittenUpstreamHarness;
let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  harness = await startBehindUpstream(
    async (request) => {
      await request.arrayBuffer();
      const bytes = new TextEncoder().encode(answer);
      const json = { "content-type": "application/json" };
      switch (framing) {
        case "declared":
          return new Response(bytes, { headers: json });
        case "chunked":
          return new Response(
            new ReadableStream<Uint8Array>({
              start(controller) {
                // Split inside multi-byte characters, as a network would.
                for (let at = 0; at < bytes.byteLength; at += 7_777) controller.enqueue(bytes.subarray(at, at + 7_777));
                controller.close();
              },
            }),
            { headers: json },
          );
        case "gzip":
          return new Response(gzipSync(bytes), { headers: { ...json, "content-encoding": "gzip" } });
      }
    },
    { translationMode: "auto", translationInlineMaxBytes: INLINE_MAX },
  );
  ({ server, account } = harness);
});

afterAll(() => harness.close());

async function ask(path: "/v1/chat/completions" | "/v1/messages"): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.apiKey}`, "x-api-key": account.apiKey, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: response.status, text: await response.text() };
}

const context = { requestId: "req_large", model: MODEL, created: 1767225600 };
const CONTENTS = {
  ASCII: "plain ascii \\ text ".repeat(20_000),
  "not ASCII": "Grüße — “quoted” ✓ 🙂 ".repeat(8_000),
} as const;

describe("a whole answer larger than the inline limit, translated in a worker", () => {
  for (const [kind, content] of Object.entries(CONTENTS)) {
    for (const how of ["declared", "chunked", "gzip"] as const) {
      test(`${kind}, ${how}: a chat client gets the inline translation, the charge spliced where addCharge puts it`, async () => {
        answer = completion(content);
        framing = how;
        const { status, text } = await ask("/v1/chat/completions");
        expect(status).toBe(200);
        const charge = JSON.parse(text).usage.cost_micro_usd;
        expect(Number.isSafeInteger(charge) && charge > 0).toBe(true);
        const inline = translateResponse({ upstream: "openai-chat", client: "openai-chat", body: answer, context }).body;
        expect(text).toBe(withUsageCost(inline, charge));
      });
    }

    test(`${kind}: a Messages client gets the inline translation`, async () => {
      answer = completion(content);
      framing = "declared";
      const { status, text } = await ask("/v1/messages");
      expect(status).toBe(200);
      const body = JSON.parse(text);
      const inline = JSON.parse(translateResponse({ upstream: "openai-chat", client: "anthropic-messages", body: answer, context }).body);
      // Ids are the request's own: everything else is as inline translation writes it.
      expect({ ...body, id: undefined }).toEqual({ ...inline, id: undefined });
      expect(body.content[0].text).toBe(`${content} "usage": {} `);
    });
  }

  test("an answer that is not JSON is the upstream's failure, in the client's protocol", async () => {
    answer = `{"id":"x","choices":[${"é".repeat(INLINE_MAX * 4)}`;
    framing = "chunked";
    const { status, text } = await ask("/v1/chat/completions");
    expect(status).toBe(502);
    expect(JSON.parse(text).error.code).toBe("upstream_invalid_response");
  });
});

/**
 * What a client's protocol cannot carry of an answer is reported where request-side
 * warnings are: a whole answer in `x-switchyard-warnings` and in the request record; a
 * stream, whose head has gone out before anything can be dropped, in the record when it ends.
 * Through the real server, in both translation modes (inline, and every translation in a
 * worker, so the warnings cross the worker boundary).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { catalogFor, mockProviderEnv, startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import { MOCK_KEY } from "../support/inference-harness";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { UPSTREAM, closeClients, database, recordsFor, send, type Protocol, type Sent } from "../metering/metering-support";

/**
 * Upstream answers the mocks never give, in each vendor's documented shape: Anthropic
 * redacted thinking, chat tool arguments cut short, a Gemini image part.
 */
const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const chatChunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "broken-args", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const BROKEN_ARGUMENTS = '{"location": "Par';

const CANNED = {
  "anthropic-redacted": {
    json: {
      id: "msg_1", type: "message", role: "assistant", model: "redacted",
      content: [{ type: "redacted_thinking", data: "EmwKAhgB" }, { type: "text", text: "Answer." }],
      stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 },
    },
    stream: [
      sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "redacted", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }),
      sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "EmwKAhgB" } }),
      sse("content_block_stop", { type: "content_block_stop", index: 0 }),
      sse("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
      sse("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Answer." } }),
      sse("content_block_stop", { type: "content_block_stop", index: 1 }),
      sse("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } }),
      sse("message_stop", { type: "message_stop" }),
    ].join(""),
  },
  "chat-broken-args": {
    json: {
      id: "chatcmpl-1", object: "chat.completion", created: 1, model: "broken-args",
      choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: BROKEN_ARGUMENTS } }] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
    stream: [
      chatChunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
      chatChunk({ tool_calls: [{ index: 0, function: { arguments: BROKEN_ARGUMENTS } }] }),
      chatChunk({}, "tool_calls"),
      `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "broken-args", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`,
      "data: [DONE]\n\n",
    ].join(""),
  },
  "google-image": {
    json: {
      candidates: [{ content: { role: "model", parts: [{ text: "Here it is." }, { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "image",
    },
    stream: undefined,
  },
} as const;

type CannedName = keyof typeof CANNED;
const CANNED_PROVIDERS: Record<CannedName, { protocol: Protocol; model: string }> = {
  "anthropic-redacted": { protocol: "anthropic-messages", model: "canned-anthropic/redacted" },
  "chat-broken-args": { protocol: "openai-chat", model: "canned-chat/broken-args" },
  "google-image": { protocol: "google-generate-content", model: "canned-google/image" },
};

function startCannedUpstream() {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const name = new URL(request.url).pathname.split("/")[1] as CannedName;
      const body = (await request.json()) as { stream?: boolean };
      const canned = CANNED[name];
      const streamed = body.stream === true || request.url.includes(":streamGenerateContent");
      if (streamed && canned.stream !== undefined) return new Response(canned.stream, { headers: { "content-type": "text/event-stream" } });
      return Response.json(canned.json);
    },
  });
}

const PRICING = { input: 1, output: 2, cache_read: 0, cache_write: 0 };

function writeCatalog(mocks: MockUpstreamSet, cannedUrl: string): string {
  const catalog = catalogFor(mocks);
  for (const [name, { protocol, model }] of Object.entries(CANNED_PROVIDERS)) {
    const [provider, upstreamModel] = model.split("/") as [string, string];
    catalog.providers.push({ id: provider, name, protocol, base_url: `${cannedUrl}/${name}`, api_key_env: "CANNED_API_KEY", byok: false });
    catalog.models.push({
      id: model, name, open_weights: false, input_modalities: ["text"], output_modalities: ["text"], capabilities: ["tools"],
      endpoints: [{ provider, provider_model_id: upstreamModel, pricing: PRICING }],
    });
  }
  const file = join(mkdtempSync(join(tmpdir(), "switchyard-catalog-")), "providers.json");
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

/** The `code:field` pairs of a request record's warnings that the answer's translation raised. */
const outputWarnings = (record: { warnings: Array<{ code: string; field?: string }> }) =>
  record.warnings.filter((warning) => warning.field?.startsWith("output.")).map((warning) => `${warning.code}:${warning.field}`);

for (const translationMode of ["auto", "pool"] as const) {
  describe(`answer warnings (TRANSLATION_MODE=${translationMode})`, () => {
    let mocks: MockUpstreamSet;
    let canned: ReturnType<typeof startCannedUpstream>;
    let server: TestServer;
    let account: TestAccount;
    let sql: postgres.Sql;

    beforeAll(async () => {
      mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
      canned = startCannedUpstream();
      Object.assign(process.env, mockProviderEnv(MOCK_KEY), { CANNED_API_KEY: "canned-key" });
      server = await startTestServer({ providersFile: writeCatalog(mocks, `http://127.0.0.1:${canned.port}`), translationMode });
      account = await server.createAccount(undefined, 100_000_000);
      sql = database(server.databaseUrl);
    });
    afterAll(async () => {
      await closeClients();
      await server.close();
      await mocks.close();
      canned.stop(true);
    });

    async function recordOf(sent: Sent) {
      await server.server.services.writeBuffer.flush();
      const [record] = await recordsFor(sql, sent.requestId);
      return record;
    }

    async function expectStreamWarning(client: Protocol, model: string, warning: string) {
      const sent = await send(server.url, account.apiKey, client, model, { stream: true, maxTokens: 100 });
      expect(sent.status).toBe(200);
      // The stream's head went out before anything was dropped: it cannot name the loss.
      expect(sent.headers.get("x-switchyard-warnings") ?? "").not.toContain("output.");
      expect(outputWarnings(await recordOf(sent))).toEqual([warning]);
      return sent;
    }

    async function expectJsonWarning(client: Protocol, model: string, warning: string) {
      const sent = await send(server.url, account.apiKey, client, model, { maxTokens: 100 });
      expect(sent.status).toBe(200);
      expect(sent.headers.get("x-switchyard-warnings")).toContain(warning);
      expect(outputWarnings(await recordOf(sent))).toEqual([warning]);
      return sent;
    }

    for (const upstream of ["openai-chat", "google-generate-content"] as const) {
      test(`an Anthropic Messages stream from ${upstream} drops the unsigned reasoning and the record says so`, async () => {
        const sent = await expectStreamWarning("anthropic-messages", `${UPSTREAM[upstream].model}@reasoning`, "dropped_content:output.reasoning");
        expect(sent.text).toContain("text_delta");
        expect(sent.text).not.toContain("thinking");
      });

      test(`an Anthropic Messages answer from ${upstream} drops the unsigned reasoning, named in the header and the record`, async () => {
        const sent = await expectJsonWarning("anthropic-messages", `${UPSTREAM[upstream].model}@reasoning`, "dropped_content:output.reasoning");
        expect(sent.json.content.map((block: { type: string }) => block.type)).toEqual(["text"]);
      });
    }

    test("Anthropic-signed reasoning reaches an Anthropic client, and an answer carried whole raises no answer warning", async () => {
      for (const stream of [false, true]) {
        const sent = await send(server.url, account.apiKey, "anthropic-messages", `${UPSTREAM["anthropic-messages"].model}@reasoning`, { stream });
        expect(sent.text).toContain("thinking");
        expect(outputWarnings(await recordOf(sent))).toEqual([]);
        const plain = await send(server.url, account.apiKey, "openai-responses", `${UPSTREAM["openai-chat"].model}@reasoning`, { stream });
        expect(plain.headers.get("x-switchyard-warnings")).toBeNull();
        expect(outputWarnings(await recordOf(plain))).toEqual([]);
      }
    });

    for (const client of ["openai-chat", "openai-responses", "google-generate-content"] as const) {
      test(`Anthropic's redacted thinking has no ${client} form: reported for an answer and for a stream`, async () => {
        await expectJsonWarning(client, CANNED_PROVIDERS["anthropic-redacted"].model, "dropped_content:output.redacted_reasoning");
        await expectStreamWarning(client, CANNED_PROVIDERS["anthropic-redacted"].model, "dropped_content:output.redacted_reasoning");
      });
    }

    test("tool arguments that are not a JSON object reach a Gemini client as {}: reported for an answer and for a stream", async () => {
      const answer = await expectJsonWarning("google-generate-content", CANNED_PROVIDERS["chat-broken-args"].model, "invalid_tool_arguments:output.tool_calls");
      expect(answer.json.candidates[0].content.parts[0].functionCall).toEqual({ name: "get_weather", args: {} });
      await expectStreamWarning("google-generate-content", CANNED_PROVIDERS["chat-broken-args"].model, "invalid_tool_arguments:output.tool_calls");
    });

    test("tool arguments that are not a JSON object reach an Anthropic client as {}, reported", async () => {
      const answer = await expectJsonWarning("anthropic-messages", CANNED_PROVIDERS["chat-broken-args"].model, "invalid_tool_arguments:output.tool_calls");
      expect(answer.json.content[0]).toMatchObject({ type: "tool_use", input: {} });
    });

    for (const client of ["openai-chat", "openai-responses", "anthropic-messages"] as const) {
      test(`a Gemini image part has no ${client} answer form: reported`, async () => {
        const answer = await expectJsonWarning(client, CANNED_PROVIDERS["google-image"].model, "dropped_content:output.image");
        expect(answer.text).toContain("Here it is.");
      });
    }
  });
}

/**
 * Non-stream responses across every upstream × client pair: a real upstream body in
 * protocol B goes through translateResponse, and the assertions read client protocol
 * A's wire fields — text, tool calls, finish reason and usage — and then
 * decode the client body again with A's own decoder.
 */
import { describe, expect, test } from "bun:test";
import { PROTOCOL_IDS, type IrFinishReason, type ProtocolId } from "../../src/ir";
import { codecFor } from "../../src/translation/codec-registry";
import { translateResponse } from "../../src/translation/translate-response";
import {
  canonicalOf,
  expectedDecodedUsage,
  expectedWireFinish,
  expectedWireUsage,
  jsonBody,
  readFixture,
  type CanonicalUsage,
  type ExpectedCall,
} from "./support/expectations";

const CONTEXT = { requestId: "req_01JRESPMATRIX", model: "switchyard/client-model", created: 1_750_000_000 };

interface UpstreamResponse {
  upstream: ProtocolId;
  name: string;
  body: string;
  text: string;
  reasoning: string;
  calls: ExpectedCall[];
  finish: IrFinishReason;
  usage: CanonicalUsage;
  /** Reasoning carries an Anthropic signature (only then may an Anthropic client see it). */
  anthropicSigned?: boolean;
}

const CASES: UpstreamResponse[] = [
  // ------------------------------------------------------------ OpenAI chat
  {
    upstream: "openai-chat",
    name: "response-text.json",
    body: readFixture("openai-chat", "response-text.json"),
    text: "The capital of France is Paris.",
    reasoning: "",
    calls: [],
    finish: "stop",
    usage: { prompt: 1230, completion: 8, reasoning: 0, cacheRead: 1152 },
  },
  {
    upstream: "openai-chat",
    name: "response-tool-calls.json",
    body: readFixture("openai-chat", "response-tool-calls.json"),
    text: "",
    reasoning: "",
    calls: [
      { id: "call_a1B2c3D4e5F6g7H8i9J0kLmN", name: "get_weather", args: '{"location":"Paris, France"}' },
      { id: "call_Z9y8X7w6V5u4T3s2R1q0PoNm", name: "get_time", args: '{"timezone":"Europe/Paris"}' },
    ],
    finish: "tool_calls",
    usage: { prompt: 140, completion: 250, reasoning: 192, cacheRead: 0 },
  },
  {
    upstream: "openai-chat",
    name: "response-deepseek-reasoning.json",
    body: readFixture("openai-chat", "response-deepseek-reasoning.json"),
    text: "9.11 is smaller than 9.8.",
    reasoning: "Compare 9.11 and 9.8: the tenths digit 1 < 8, so 9.11 is smaller.",
    calls: [],
    finish: "stop",
    usage: { prompt: 18, completion: 96, reasoning: 83, cacheRead: 0 },
  },
  {
    upstream: "openai-chat",
    name: "response-refusal.json",
    body: readFixture("openai-chat", "response-refusal.json"),
    text: "I'm sorry, I can't assist with that request.",
    reasoning: "",
    calls: [],
    finish: "content_filter",
    usage: { prompt: 64, completion: 12, reasoning: 0, cacheRead: 0 },
  },
  {
    upstream: "openai-chat",
    name: "a length-limited completion",
    body: jsonBody({
      id: "chatcmpl-len",
      object: "chat.completion",
      created: 1747145300,
      model: "gpt-4o-mini",
      choices: [{ index: 0, message: { role: "assistant", content: "Once upon a time" }, finish_reason: "length" }],
      usage: { prompt_tokens: 10, completion_tokens: 16, total_tokens: 26 },
    }),
    text: "Once upon a time",
    reasoning: "",
    calls: [],
    finish: "length",
    usage: { prompt: 10, completion: 16 },
  },
  // ------------------------------------------------------- OpenAI Responses
  {
    upstream: "openai-responses",
    name: "response-function-call.json",
    body: readFixture("openai-responses", "response-function-call.json"),
    text: "",
    reasoning: "**Planning the lookup**\n\nNeed the weather tool.",
    calls: [{ id: "call_Hn4bV7cX0zL3kJ6gF9dS2aQw", name: "get_weather", args: '{"location":"Oslo, Norway"}' }],
    finish: "tool_calls",
    usage: { prompt: 512, completion: 220, reasoning: 192, cacheRead: 384 },
  },
  {
    upstream: "openai-responses",
    name: "response-reasoning-text.json",
    body: readFixture("openai-responses", "response-reasoning-text.json"),
    text: "There are **three** r's in “strawberry”.",
    reasoning: "**Counting letters**\n\nThe word strawberry has three r's.\n\n**Answer**\n\nReply briefly.",
    calls: [],
    finish: "stop",
    usage: { prompt: 1320, completion: 412, reasoning: 384, cacheRead: 1152 },
  },
  {
    upstream: "openai-responses",
    name: "response-refusal.json",
    body: readFixture("openai-responses", "response-refusal.json"),
    text: "I'm sorry, but I can't help with that.",
    reasoning: "",
    calls: [],
    finish: "content_filter",
    usage: { prompt: 40, completion: 10, reasoning: 0, cacheRead: 0 },
  },
  {
    upstream: "openai-responses",
    name: "an incomplete (max_output_tokens) response",
    body: jsonBody({
      id: "resp_len",
      object: "response",
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      model: "gpt-4.1-mini",
      output: [{ id: "msg_1", type: "message", status: "incomplete", role: "assistant", content: [{ type: "output_text", text: "In the beginning", annotations: [] }] }],
      usage: { input_tokens: 25, input_tokens_details: { cached_tokens: 0 }, output_tokens: 16, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 41 },
    }),
    text: "In the beginning",
    reasoning: "",
    calls: [],
    finish: "length",
    usage: { prompt: 25, completion: 16, reasoning: 0, cacheRead: 0 },
  },
  // ------------------------------------------------------ Anthropic Messages
  {
    upstream: "anthropic-messages",
    name: "response-thinking-tool-use.json",
    body: readFixture("anthropic-messages", "response-thinking-tool-use.json"),
    text: "I'll look up the current weather in San Francisco.",
    reasoning: "The user asked for the weather in San Francisco; I need the get_weather tool.",
    anthropicSigned: true,
    calls: [{ id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", args: '{"location":"San Francisco, CA","unit":"fahrenheit"}' }],
    finish: "tool_calls",
    // input 2095 is cache-exclusive: prompt = 2095 + 3000 read + 1500 write.
    usage: { prompt: 6595, completion: 503, cacheRead: 3000, cacheWrite: 1500 },
  },
  {
    upstream: "anthropic-messages",
    name: "a cached turn (input 5, cache_read 100, cache_creation 20)",
    body: jsonBody({
      id: "msg_cache",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "Hello again." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 7 },
    }),
    text: "Hello again.",
    reasoning: "",
    calls: [],
    finish: "stop",
    usage: { prompt: 125, completion: 7, cacheRead: 100, cacheWrite: 20 },
  },
  {
    upstream: "anthropic-messages",
    name: "a max_tokens stop",
    body: jsonBody({
      id: "msg_len",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "Once upon a time, in a land" }],
      stop_reason: "max_tokens",
      stop_sequence: null,
      usage: { input_tokens: 25, output_tokens: 16 },
    }),
    text: "Once upon a time, in a land",
    reasoning: "",
    calls: [],
    finish: "length",
    usage: { prompt: 25, completion: 16 },
  },
  {
    upstream: "anthropic-messages",
    name: "a refusal stop",
    body: jsonBody({
      id: "msg_refusal",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "I can't help with that." }],
      stop_reason: "refusal",
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 8 },
    }),
    text: "I can't help with that.",
    reasoning: "",
    calls: [],
    finish: "content_filter",
    usage: { prompt: 30, completion: 8 },
  },
  // ---------------------------------------------------------------- Gemini
  {
    upstream: "google-generate-content",
    name: "response-parallel-calls.json (STOP with functionCall)",
    body: readFixture("google-generate-content", "response-parallel-calls.json"),
    text: "",
    reasoning: "The user wants both values; call both functions.",
    calls: [
      { id: "", name: "get_weather", args: '{"location":"Paris, France"}' },
      { id: "", name: "get_time", args: '{"timezone":"Europe/Paris"}' },
    ],
    finish: "tool_calls",
    // completion = candidates 58 + thoughts 112.
    usage: { prompt: 1843, completion: 170, reasoning: 112, cacheRead: 1024 },
  },
  {
    upstream: "google-generate-content",
    name: "response-text.json",
    body: readFixture("google-generate-content", "response-text.json"),
    text: "Paris is 18°C with light rain.",
    reasoning: "",
    calls: [],
    finish: "stop",
    usage: { prompt: 2107, completion: 11 },
  },
  {
    upstream: "google-generate-content",
    name: "response-prompt-blocked.json",
    body: readFixture("google-generate-content", "response-prompt-blocked.json"),
    text: "",
    reasoning: "",
    calls: [],
    finish: "content_filter",
    usage: { prompt: 31, completion: 0 },
  },
  {
    upstream: "google-generate-content",
    name: "a MAX_TOKENS candidate",
    body: jsonBody({
      candidates: [{ content: { role: "model", parts: [{ text: "Once upon a time" }] }, finishReason: "MAX_TOKENS", index: 0 }],
      usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 16, totalTokenCount: 25 },
      modelVersion: "gemini-2.5-pro",
      responseId: "resp-max",
    }),
    text: "Once upon a time",
    reasoning: "",
    calls: [],
    finish: "length",
    usage: { prompt: 9, completion: 16 },
  },
];

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

interface ClientView {
  text: string;
  reasoning: string;
  calls: Array<{ id?: string; name: string; args: string }>;
  finish: unknown;
  usage: Json;
}

/** Reads the client body by its own wire fields. */
function readClientBody(client: ProtocolId, body: Json): ClientView {
  switch (client) {
    case "openai-chat": {
      const choice = record(list(body.choices)[0]);
      const message = record(choice.message);
      return {
        text: typeof message.content === "string" ? message.content + (typeof message.refusal === "string" ? message.refusal : "") : typeof message.refusal === "string" ? message.refusal : "",
        reasoning: typeof message.reasoning_content === "string" ? message.reasoning_content : "",
        calls: list(message.tool_calls).map((value) => {
          const call = record(value);
          const fn = record(call.function);
          expect(call.type).toBe("function");
          return { id: String(call.id), name: String(fn.name), args: String(fn.arguments) };
        }),
        finish: choice.finish_reason,
        usage: record(body.usage),
      };
    }
    case "openai-responses": {
      const view: ClientView = { text: "", reasoning: "", calls: [], finish: body.status, usage: record(body.usage) };
      for (const value of list(body.output)) {
        const item = record(value);
        if (item.type === "message") {
          for (const part of list(item.content).map(record)) view.text += String(part.type === "refusal" ? part.refusal : part.text);
        } else if (item.type === "reasoning") {
          const summary = list(item.summary).map((part) => String(record(part).text));
          view.reasoning += summary.length > 0 ? summary.join("\n\n") : list(item.content).map((part) => String(record(part).text)).join("");
        } else if (item.type === "function_call") {
          view.calls.push({ id: String(item.call_id), name: String(item.name), args: String(item.arguments) });
        }
      }
      return view;
    }
    case "anthropic-messages": {
      const view: ClientView = { text: "", reasoning: "", calls: [], finish: body.stop_reason, usage: record(body.usage) };
      for (const block of list(body.content).map(record)) {
        if (block.type === "text") view.text += String(block.text);
        else if (block.type === "thinking") view.reasoning += String(block.thinking);
        else if (block.type === "tool_use") view.calls.push({ id: String(block.id), name: String(block.name), args: JSON.stringify(block.input) });
      }
      return view;
    }
    case "google-generate-content": {
      const candidate = record(list(body.candidates)[0]);
      const view: ClientView = { text: "", reasoning: "", calls: [], finish: candidate.finishReason, usage: record(body.usageMetadata) };
      for (const part of list(record(candidate.content).parts).map(record)) {
        if (typeof part.text === "string") {
          if (part.thought === true) view.reasoning += part.text;
          else view.text += part.text;
        } else if (part.functionCall !== undefined) {
          const call = record(part.functionCall);
          view.calls.push({ name: String(call.name), args: JSON.stringify(call.args) });
        }
      }
      if (candidate.finishReason === undefined && record(body.promptFeedback).blockReason !== undefined) view.finish = record(body.promptFeedback).blockReason;
      return view;
    }
  }
}

function argsEqual(actual: string, expected: string): void {
  expect(JSON.parse(actual)).toEqual(JSON.parse(expected));
}

describe("non-stream responses: every upstream × client pair", () => {
  for (const upstreamCase of CASES) {
    for (const client of PROTOCOL_IDS) {
      const { upstream, name } = upstreamCase;
      const same = upstream === client;

      test(`${upstream} ${name} → ${client} client: text, tool calls, finish and usage are rendered in ${client}'s wire`, () => {
        const translated = translateResponse({ upstream, client, body: upstreamCase.body, context: CONTEXT });
        const body = JSON.parse(translated.body) as Json;
        const view = readClientBody(client, body);

        expect(view.text).toBe(upstreamCase.text);

        // Tool calls: name and full arguments; ids kept where the client protocol has ids.
        expect(view.calls.map((call) => call.name)).toEqual(upstreamCase.calls.map((call) => call.name));
        view.calls.forEach((call, index) => argsEqual(call.args, upstreamCase.calls[index]?.args ?? "null"));
        if (client !== "google-generate-content") {
          const ids = view.calls.map((call) => call.id ?? "");
          if (upstream === "google-generate-content") {
            // Gemini has none: synthesised, unique, valid Anthropic tool_use ids.
            expect(new Set(ids).size).toBe(ids.length);
            for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
          } else {
            expect(ids).toEqual(upstreamCase.calls.map((call) => call.id));
          }
        }

        // Reasoning: shown to every client that has a slot for it; Anthropic clients only get Anthropic-signed thinking.
        if (client === "anthropic-messages" && !upstreamCase.anthropicSigned) expect(view.reasoning).toBe("");
        else expect(view.reasoning).toBe(upstreamCase.reasoning);

        // Usage as the client wire renders it (a same-protocol body is the upstream's own usage object, checked byte for byte below).
        if (!same) expect(view.usage).toMatchObject(expectedWireUsage(client, upstreamCase.usage));

        // Finish reason as the client wire names it (a same-protocol body is the upstream's own bytes).
        if (!same) {
          const wire = expectedWireFinish(client, upstreamCase.finish);
          if (client === "openai-responses" && upstreamCase.finish === "content_filter") {
            const incomplete = record(body.incomplete_details).reason;
            expect(view.finish === "completed" || (view.finish === "incomplete" && incomplete === "content_filter")).toBe(true);
          } else if (client === "openai-responses" && upstreamCase.finish === "length") {
            expect(view.finish).toBe("incomplete");
            expect(body.incomplete_details).toEqual({ reason: "max_output_tokens" });
          } else {
            expect(view.finish).toBe(wire);
          }
        }
      });

      test(`${upstream} ${name} → ${client} client: the client's own decoder reads back the same turn`, () => {
        const translated = translateResponse({ upstream, client, body: upstreamCase.body, context: CONTEXT });
        const decoded = codecFor(client).decodeResponse(JSON.parse(translated.body));
        const text = decoded.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
        expect(text).toBe(upstreamCase.text);
        expect(decoded.content.filter((part) => part.type === "tool_call").map((part) => (part.type === "tool_call" ? part.name : ""))).toEqual(
          upstreamCase.calls.map((call) => call.name),
        );
        const refusalAsCompleted = client === "openai-responses" && upstreamCase.finish === "content_filter" && decoded.finish.reason === "stop";
        if (!refusalAsCompleted) expect(decoded.finish.reason).toBe(upstreamCase.finish);
        expect(canonicalOf(decoded.usage)).toEqual(expectedDecodedUsage(client, upstreamCase.usage));
      });

      test(`${upstream} ${name} → ${client} client: metering signals come from the upstream body`, () => {
        const { signals } = translateResponse({ upstream, client, body: upstreamCase.body, context: CONTEXT });
        expect(signals.finish?.reason).toBe(upstreamCase.finish);
        expect(signals.toolCalls).toBe(upstreamCase.calls.length);
        expect(signals.usageFrames).toHaveLength(1);
        expect(canonicalOf(signals.usageFrames[0])).toEqual(upstreamCase.usage);
        const visible = upstreamCase.text.length + upstreamCase.reasoning.length;
        if (visible > 0 || upstreamCase.calls.length > 0) expect(signals.outputBytes).toBeGreaterThan(0);
        const first = upstreamCase.reasoning !== "" ? "reasoning" : upstreamCase.text !== "" ? "text" : upstreamCase.calls.length > 0 ? "tool" : undefined;
        expect(signals.firstToken).toBe(first);
      });

      if (same) {
        test(`${upstream} ${name} → ${client} client: same protocol passes the upstream bytes through, only the model id changes`, () => {
          const translated = translateResponse({ upstream, client, body: upstreamCase.body, context: CONTEXT });
          const original = JSON.parse(upstreamCase.body) as Json;
          const relayed = JSON.parse(translated.body) as Json;
          if (original.model !== undefined) expect(relayed.model).toBe(CONTEXT.model);
          expect({ ...relayed, model: undefined }).toEqual({ ...original, model: undefined });
        });
      }
    }
  }
});

/**
 * Streams across every upstream × client pair. Realistic upstream SSE bytes (the codec
 * authors' fixtures, plus one synthesised interleaving case) are fed to StreamTranslation
 * in random chunk splits; the client's SSE is parsed back with the client protocol's own
 * SseParser + stream decoder. Cross-protocol pairs run with passthrough=false; same-protocol
 * pairs run with passthrough=true, where nothing may be written and only signals count.
 */
import { describe, expect, test } from "bun:test";
import { PROTOCOL_IDS, irError, type IrErrorKind, type IrFinishReason, type ProtocolId } from "../../src/ir";
import { mergeUsage } from "./support/merge-usage";
import { REPLAY_SEEDS, splitAtRandom } from "../support/split-chunks";
import { canonicalOf, expectedDecodedUsage, expectedWireFinish, expectedWireUsage, readFixture, type CanonicalUsage, type ExpectedCall } from "./support/expectations";
import {
  STREAM_CONTEXT,
  dataOf,
  list,
  readClientStream,
  record,
  runPieces,
  runStream,
  runThenFail,
  type ClientStreamView,
  type RunOptions,
  type RunResult,
} from "./support/stream-harness";

interface StreamCase {
  upstream: ProtocolId;
  file: string;
  /** Fixture folder (the codec's own, or test/fixtures/translation). */
  folder?: string;
  text: string;
  reasoning: string;
  calls: ExpectedCall[];
  firstToken: "text" | "reasoning" | "tool";
  /** A stream that finishes normally. */
  finish?: IrFinishReason;
  usage?: CanonicalUsage;
  /** A stream that fails mid-way (error frame, or the upstream closing early). */
  error?: { kind: IrErrorKind; message: string };
}

const CASES: StreamCase[] = [
  // ------------------------------------------------------------ OpenAI chat
  {
    upstream: "openai-chat",
    file: "stream-text-with-usage.sse",
    text: "Hello! How can I help you today?",
    reasoning: "",
    calls: [],
    firstToken: "text",
    finish: "stop",
    usage: { prompt: 1117, completion: 9, reasoning: 0, cacheRead: 1024 },
  },
  {
    upstream: "openai-chat",
    file: "stream-parallel-tool-calls.sse",
    text: "",
    reasoning: "",
    calls: [
      { id: "call_Kc9yOd7h2pXf3kNq1uLz8wRt", name: "get_weather", args: '{"location": "Paris, France"}' },
      { id: "call_X4mB0sE7vQn2GzJw9hTa6cYp", name: "get_weather", args: '{"location": "Bogotá, Colombia"}' },
    ],
    firstToken: "tool",
    finish: "tool_calls",
    usage: { prompt: 82, completion: 51, reasoning: 0, cacheRead: 0 },
  },
  {
    upstream: "openai-chat",
    file: "stream-compat-reasoning-tools.sse",
    text: "Let me check that for you.",
    reasoning: "The user wants the weather in Oslo. I should call the tool.",
    calls: [{ id: "call_0_5c2d7e1a-9f3b-4c8d-a6e2-1b4f7c9d3e5a", name: "get_weather", args: '{"city": "Oslo", "unit": "celsius"}' }],
    firstToken: "reasoning",
    finish: "tool_calls",
    usage: { prompt: 310, completion: 187, reasoning: 142, cacheRead: 256 },
  },
  {
    upstream: "openai-chat",
    file: "stream-refusal.sse",
    text: "I'm sorry, I can't assist with that.",
    reasoning: "",
    calls: [],
    firstToken: "text",
    finish: "content_filter",
    usage: { prompt: 95, completion: 11, reasoning: 0, cacheRead: 0 },
  },
  {
    upstream: "openai-chat",
    folder: "translation",
    file: "chat-interleaved-tool-calls.sse",
    text: "Checking both.",
    reasoning: "",
    calls: [
      { id: "call_il_weather", name: "get_weather", args: '{"location": "Paris"}' },
      { id: "call_il_time", name: "get_time", args: '{"timezone": "Europe/Paris"}' },
    ],
    firstToken: "text",
    finish: "tool_calls",
    usage: { prompt: 240, completion: 38, cacheRead: 128 },
  },
  {
    upstream: "openai-chat",
    file: "stream-error-frame.sse",
    text: "Once upon a time",
    reasoning: "",
    calls: [],
    firstToken: "text",
    error: { kind: "upstream_bad_gateway", message: "The server had an error while processing your request. Sorry about that!" },
  },
  {
    upstream: "openai-chat",
    file: "stream-truncated.sse",
    text: "The first three primes are",
    reasoning: "",
    calls: [],
    firstToken: "text",
    error: { kind: "upstream_invalid_response", message: "stream ended early" },
  },
  // ------------------------------------------------------- OpenAI Responses
  {
    upstream: "openai-responses",
    file: "stream-function-calls.sse",
    text: "",
    reasoning: "",
    calls: [
      { id: "call_Qm3xT8rV1nB6kZ2wL9pYc4Hd", name: "get_weather", args: '{"location":"Paris, France"}' },
      { id: "call_Wd5uJ2fG7hK0lP3sN6qRe9Tb", name: "get_weather", args: '{"location":"Tokyo, Japan"}' },
    ],
    firstToken: "tool",
    finish: "tool_calls",
    usage: { prompt: 291, completion: 46, reasoning: 0, cacheRead: 0 },
  },
  {
    upstream: "openai-responses",
    file: "stream-reasoning-text.sse",
    text: "There are **three** r's in “strawberry”.",
    reasoning: "**Counting letters**\n\nThe word strawberry has three r's.\n\n**Answer**\n\nReply briefly.",
    calls: [],
    firstToken: "reasoning",
    finish: "stop",
    usage: { prompt: 1320, completion: 412, reasoning: 384, cacheRead: 1152 },
  },
  {
    upstream: "openai-responses",
    file: "stream-incomplete.sse",
    text: "In the beginning the universe was created. This has made a lot of",
    reasoning: "",
    calls: [],
    firstToken: "text",
    finish: "length",
    usage: { prompt: 25, completion: 16, reasoning: 0, cacheRead: 0 },
  },
  {
    upstream: "openai-responses",
    file: "stream-failed.sse",
    text: "Partial answer",
    reasoning: "",
    calls: [],
    firstToken: "text",
    error: { kind: "upstream_bad_gateway", message: "The model failed to generate a response." },
  },
  {
    upstream: "openai-responses",
    file: "stream-truncated.sse",
    text: "Half a sen",
    reasoning: "",
    calls: [],
    firstToken: "text",
    error: { kind: "upstream_invalid_response", message: "stream ended early" },
  },
  // ------------------------------------------------------ Anthropic Messages
  {
    upstream: "anthropic-messages",
    file: "stream-thinking-text-tools.sse",
    text: "I'll check the weather and the time in Paris — é ✓.",
    reasoning: "The user wants the weather and the local time in Paris. Both tools can run in parallel.",
    calls: [
      { id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", args: '{"location": "Paris, France", "unit": "celsius"}' },
      { id: "toolu_01VbJ2p8sQnLk4TmZyX7cR3d", name: "get_time", args: '{"timezone": "Europe/Paris"}' },
    ],
    firstToken: "reasoning",
    finish: "tool_calls",
    // input 472 is cache-exclusive: prompt = 472 + 2048 read + 1024 write.
    usage: { prompt: 3544, completion: 156, cacheRead: 2048, cacheWrite: 1024 },
  },
  {
    upstream: "anthropic-messages",
    file: "stream-redacted-max-tokens.sse",
    text: "Once upon a time, in a land far away",
    reasoning: "",
    calls: [],
    firstToken: "text",
    finish: "length",
    usage: { prompt: 25, completion: 16, cacheRead: 0, cacheWrite: 0 },
  },
  {
    upstream: "anthropic-messages",
    file: "stream-overloaded-error.sse",
    text: "Hello",
    reasoning: "",
    calls: [],
    firstToken: "text",
    error: { kind: "upstream_unavailable", message: "Overloaded" },
  },
  // ---------------------------------------------------------------- Gemini
  {
    upstream: "google-generate-content",
    file: "stream-thinking-parallel-calls.sse",
    text: "Let me look that up — un instant.",
    reasoning: "**Planning the lookups**\n\nThe user wants weather and time for Paris; both calls are independent, so I can issue them together.",
    calls: [
      { id: "call_mZ5TaKnPLYqsz7IPpqvT8QE_0", name: "get_weather", args: '{"location":"Paris, France","unit":"celsius"}' },
      { id: "call_mZ5TaKnPLYqsz7IPpqvT8QE_1", name: "get_time", args: '{"timezone":"Europe/Paris"}' },
    ],
    firstToken: "reasoning",
    // Gemini finishes a function-call turn with STOP: it must still reach clients as a tool turn.
    finish: "tool_calls",
    usage: { prompt: 1843, completion: 170, reasoning: 112, cacheRead: 1024 },
  },
  {
    upstream: "google-generate-content",
    file: "stream-text-max-tokens.sse",
    text: "Once upon a time, in a quiet valley, there lived",
    reasoning: "",
    calls: [],
    firstToken: "text",
    finish: "length",
    usage: { prompt: 9, completion: 16 },
  },
  {
    upstream: "google-generate-content",
    file: "stream-safety.sse",
    text: "Here is how to",
    reasoning: "",
    calls: [],
    firstToken: "text",
    finish: "content_filter",
    usage: { prompt: 14, completion: 4 },
  },
  {
    upstream: "google-generate-content",
    file: "stream-unavailable-error.sse",
    text: "Partial answer",
    reasoning: "",
    calls: [],
    firstToken: "text",
    error: { kind: "upstream_unavailable", message: "The model is overloaded. Please try again later." },
  },
  {
    upstream: "google-generate-content",
    file: "stream-truncated.sse",
    text: "Partial answer that never fin",
    reasoning: "",
    calls: [],
    firstToken: "text",
    error: { kind: "upstream_invalid_response", message: "stream ended early" },
  },
];

/** Seeds × piece counts: a few large chunks, and many tiny ones (boundaries inside UTF-8 text and JSON). */
const SPLITS: Array<{ seed: number; maxPieces: number }> = REPLAY_SEEDS.flatMap((seed) => [
  { seed, maxPieces: 40 },
  { seed, maxPieces: 2000 },
]);

function upstreamText(streamCase: StreamCase): string {
  return readFixture(streamCase.folder ?? streamCase.upstream, streamCase.file);
}

const cache = new Map<string, RunResult>();

function run(streamCase: StreamCase, options: RunOptions, seed: number, maxPieces: number): RunResult {
  const key = `${streamCase.upstream}/${streamCase.file}/${options.client}/${options.passthrough}/${options.clientAskedUsage}/${seed}/${maxPieces}`;
  let result = cache.get(key);
  if (result === undefined) {
    result = runStream(options, upstreamText(streamCase), seed, maxPieces);
    cache.set(key, result);
  }
  return result;
}

function crossOptions(streamCase: StreamCase, client: ProtocolId, clientAskedUsage = true): RunOptions {
  return { upstream: streamCase.upstream, client, passthrough: false, clientAskedUsage };
}

function label(streamCase: StreamCase): string {
  return `${streamCase.upstream} ${streamCase.file}`;
}

// ---------------------------------------------------------- wire validators

function eventNames(view: ClientStreamView): string[] {
  return view.events.map((event) => event.event ?? "message");
}

/** Chat: role on the first chunk, name on each call's first chunk, [DONE] last, usage chunk only when asked. */
function checkChatWire(view: ClientStreamView, success: boolean, askedUsage: boolean, expectUsage: boolean): void {
  const events = view.events;
  expect(events.at(-1)?.data).toBe("[DONE]");
  expect(events.filter((event) => event.data === "[DONE]")).toHaveLength(1);
  const chunks = events.filter((event) => event.data !== "[DONE]").map(dataOf);
  const normal = chunks.filter((chunk) => chunk.error === undefined);
  if (normal.length > 0) expect(record(record(list(normal[0]?.choices)[0]).delta).role).toBe("assistant");
  const opened = new Set<unknown>();
  for (const chunk of normal) {
    expect(chunk.object).toBe("chat.completion.chunk");
    expect(chunk.id).toBe(STREAM_CONTEXT.requestId);
    expect(chunk.model).toBe(STREAM_CONTEXT.model);
    for (const value of list(record(record(list(chunk.choices)[0]).delta).tool_calls)) {
      const call = record(value);
      if (opened.has(call.index)) continue;
      opened.add(call.index);
      // Some SDKs (Vercel AI SDK) need the id and function.name on a call's first chunk.
      expect(typeof call.id === "string" && call.id !== "").toBe(true);
      expect(typeof record(call.function).name === "string" && record(call.function).name !== "").toBe(true);
    }
  }
  const finishChunks = normal.filter((chunk) => {
    const reason = record(list(chunk.choices)[0]).finish_reason;
    return reason !== null && reason !== undefined;
  });
  const usageChunks = normal.filter((chunk) => chunk.usage !== undefined && chunk.usage !== null);
  if (success) {
    expect(finishChunks).toHaveLength(1);
    expect(chunks.some((chunk) => chunk.error !== undefined)).toBe(false);
    if (askedUsage && expectUsage) {
      expect(usageChunks).toHaveLength(1);
      expect(usageChunks[0]?.choices).toEqual([]);
      expect(normal.indexOf(usageChunks[0] ?? {})).toBeGreaterThan(normal.indexOf(finishChunks[0] ?? {}));
    }
  }
  if (!askedUsage) expect(usageChunks).toHaveLength(0);
}

/**
 * Messages: message_start first, blocks with increasing indexes that never interleave, message_delta +
 * message_stop last; a thinking block is closed only after its signature_delta.
 */
function checkAnthropicWire(view: ClientStreamView, success: boolean): void {
  const names = eventNames(view);
  let open: number | undefined;
  let openThinking = false;
  let signed = false;
  let next = 0;
  for (const event of view.events) {
    const data = dataOf(event);
    expect(data.type).toBe(event.event);
    if (event.event === "content_block_start") {
      expect(open).toBeUndefined();
      expect(data.index).toBe(next++);
      open = data.index as number;
      openThinking = record(data.content_block).type === "thinking";
      signed = false;
    } else if (event.event === "content_block_delta") {
      expect(data.index).toBe(open);
      const delta = record(data.delta);
      if (delta.type === "text_delta") expect(String(delta.text)).not.toBe("");
      if (delta.type === "signature_delta") signed = true;
    } else if (event.event === "content_block_stop") {
      expect(data.index).toBe(open);
      if (openThinking) expect(signed).toBe(true);
      open = undefined;
    } else if (event.event === "message_delta" || event.event === "message_stop") {
      expect(open).toBeUndefined();
    } else if (event.event === "message_start") {
      expect(record(data.message).model).toBe(STREAM_CONTEXT.model);
    }
  }
  if (success) {
    expect(names[0]).toBe("message_start");
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(names.filter((name) => name === "message_stop")).toHaveLength(1);
  } else {
    expect(names.at(-1)).toBe("error");
    expect(names).not.toContain("message_stop");
  }
}

const RESPONSES_TERMINALS = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** Responses: sequence numbers from 0, created + in_progress first, items never interleave, one terminal, no [DONE]. */
function checkResponsesWire(view: ClientStreamView): void {
  const names = eventNames(view);
  expect(names.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
  expect(view.events.some((event) => event.data === "[DONE]")).toBe(false);
  let open: number | undefined;
  let done = 0;
  view.events.forEach((event, index) => {
    const data = dataOf(event);
    expect(data.type).toBe(event.event);
    expect(data.sequence_number).toBe(index);
    if (event.event === "response.output_item.added") {
      expect(open).toBeUndefined();
      expect(data.output_index).toBe(done);
      open = data.output_index as number;
    } else if (event.event === "response.output_item.done") {
      expect(data.output_index).toBe(open ?? -1);
      open = undefined;
      done++;
    } else if (typeof data.output_index === "number") {
      expect(data.output_index).toBe(open ?? -1);
    }
  });
  expect(names.filter((name) => RESPONSES_TERMINALS.has(name))).toHaveLength(1);
  expect(RESPONSES_TERMINALS.has(names.at(-1) ?? "")).toBe(true);
  const terminal = record(dataOf(view.events.at(-1) ?? { data: "{}" }).response);
  expect(terminal.model).toBe(STREAM_CONTEXT.model);
  if (terminal.status !== "failed") expect(list(terminal.output)).toHaveLength(done);
}

/** Gemini: JSON chunks only; the last carries finishReason and usageMetadata (or the error envelope). */
function checkGeminiWire(view: ClientStreamView, success: boolean): void {
  const chunks = view.events.map(dataOf);
  const last = chunks.at(-1) ?? {};
  if (success) {
    const candidate = record(list(last.candidates)[0]);
    expect(typeof candidate.finishReason).toBe("string");
    expect(last.usageMetadata).toBeDefined();
    expect(chunks.filter((chunk) => record(list(chunk.candidates)[0]).finishReason !== undefined)).toHaveLength(1);
  } else {
    expect(last.error).toBeDefined();
  }
}

function checkWire(client: ProtocolId, view: ClientStreamView, success: boolean, askedUsage: boolean, expectUsage: boolean): void {
  if (client === "openai-chat") checkChatWire(view, success, askedUsage, expectUsage);
  else if (client === "anthropic-messages") checkAnthropicWire(view, success);
  else if (client === "openai-responses") checkResponsesWire(view);
  else checkGeminiWire(view, success);
}

/** The client protocol's own mid-stream error frame, carrying the upstream's message. */
function checkErrorFrame(client: ProtocolId, view: ClientStreamView, message: string): void {
  switch (client) {
    case "openai-chat": {
      const errors = view.events.filter((event) => event.data !== "[DONE]").map(dataOf).filter((chunk) => chunk.error !== undefined);
      expect(errors).toHaveLength(1);
      const error = record(errors[0]?.error);
      expect(error.message).toBe(message);
      expect(typeof error.type).toBe("string");
      expect(typeof error.code).toBe("string");
      expect(view.events.at(-2)?.data).toBe(JSON.stringify(errors[0]));
      break;
    }
    case "anthropic-messages": {
      const last = view.events.at(-1);
      expect(last?.event).toBe("error");
      const data = dataOf(last ?? { data: "{}" });
      expect(data.type).toBe("error");
      expect(typeof record(data.error).type).toBe("string");
      expect(record(data.error).message).toBe(message);
      break;
    }
    case "openai-responses": {
      const last = view.events.at(-1);
      expect(last?.event).toBe("response.failed");
      const response = record(dataOf(last ?? { data: "{}" }).response);
      expect(response.status).toBe("failed");
      expect(response.object).toBe("response");
      expect(typeof record(response.error).code).toBe("string");
      expect(record(response.error).message).toBe(message);
      break;
    }
    case "google-generate-content": {
      const error = record(dataOf(view.events.at(-1) ?? { data: "{}" }).error);
      expect(typeof error.code).toBe("number");
      expect(error.code).toBeGreaterThanOrEqual(400);
      expect(typeof error.status).toBe("string");
      expect(error.message).toBe(message);
      break;
    }
  }
}

/** The finish as each client's wire shows it. */
function checkWireFinish(client: ProtocolId, view: ClientStreamView, reason: IrFinishReason): void {
  const expected = expectedWireFinish(client, reason);
  switch (client) {
    case "openai-chat": {
      const finishes = view.events
        .filter((event) => event.data !== "[DONE]")
        .map((event) => record(list(dataOf(event).choices)[0]).finish_reason)
        .filter((value) => value !== null && value !== undefined);
      expect(finishes).toEqual([expected as string]);
      break;
    }
    case "anthropic-messages": {
      const delta = view.events.find((event) => event.event === "message_delta");
      expect(record(dataOf(delta ?? { data: "{}" }).delta).stop_reason).toBe(expected);
      break;
    }
    case "google-generate-content": {
      const last = dataOf(view.events.at(-1) ?? { data: "{}" });
      expect(record(list(last.candidates)[0]).finishReason).toBe(expected);
      break;
    }
    case "openai-responses": {
      const terminal = dataOf(view.events.at(-1) ?? { data: "{}" });
      const response = record(terminal.response);
      if (reason === "length") {
        expect(terminal.type).toBe("response.incomplete");
        expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
      } else if (reason === "content_filter") {
        const incomplete = terminal.type === "response.incomplete" && record(response.incomplete_details).reason === "content_filter";
        expect(incomplete || terminal.type === "response.completed").toBe(true);
      } else {
        expect(terminal.type).toBe("response.completed");
        expect(response.status).toBe("completed");
      }
      break;
    }
  }
}

/** The usage object as each client's wire shows it at the end. */
function wireUsageOf(client: ProtocolId, view: ClientStreamView): unknown {
  const datas = view.events.filter((event) => event.data !== "[DONE]").map(dataOf);
  switch (client) {
    case "openai-chat":
      return datas.filter((chunk) => chunk.usage !== undefined && chunk.usage !== null).at(-1)?.usage;
    case "anthropic-messages":
      return datas.filter((data) => data.type === "message_delta").at(-1)?.usage;
    case "openai-responses":
      return record(datas.at(-1)?.response).usage;
    case "google-generate-content":
      return datas.at(-1)?.usageMetadata;
  }
}

function argsMatch(client: ProtocolId, actual: string, expected: string): void {
  // Gemini has no argument deltas: the call is re-serialised from its args object.
  if (client === "google-generate-content") expect(JSON.parse(actual)).toEqual(JSON.parse(expected));
  else expect(actual).toBe(expected);
}

// ------------------------------------------------------------------- tests

describe("streams: upstream SSE in protocol B reaches a protocol A client intact (passthrough=false, every B ≠ A)", () => {
  for (const streamCase of CASES) {
    for (const client of PROTOCOL_IDS) {
      if (client === streamCase.upstream) continue;
      const name = `${label(streamCase)} → ${client} client`;
      const options = crossOptions(streamCase, client);

      test(`${name}: text, reasoning and every tool call (name, full arguments, id) survive any chunking`, () => {
        for (const { seed, maxPieces } of SPLITS) {
          const view = readClientStream(client, run(streamCase, options, seed, maxPieces).out);
          expect(view.text).toBe(streamCase.text);
          // No other vendor signs reasoning for Anthropic, and unsigned thinking is dropped on the Messages wire.
          if (client === "anthropic-messages") expect(view.reasoning).toBe("");
          else expect(view.reasoning).toBe(streamCase.reasoning);
          expect(view.calls.map((call) => call.name)).toEqual(streamCase.calls.map((call) => call.name));
          view.calls.forEach((call, index) => argsMatch(client, call.args, streamCase.calls[index]?.args ?? "null"));
          if (client !== "google-generate-content") expect(view.calls.map((call) => call.id)).toEqual(streamCase.calls.map((call) => call.id));
        }
      });

      test(`${name}: the client's wire is well-formed, with its terminal frame`, () => {
        for (const { seed, maxPieces } of SPLITS) {
          const view = readClientStream(client, run(streamCase, options, seed, maxPieces).out);
          checkWire(client, view, streamCase.error === undefined, true, streamCase.usage !== undefined);
        }
      });

      if (streamCase.error === undefined) {
        test(`${name}: the finish reason is mapped (${streamCase.finish}) and the final usage is complete, not zero`, () => {
          for (const { seed, maxPieces } of SPLITS) {
            const view = readClientStream(client, run(streamCase, options, seed, maxPieces).out);
            expect(view.error).toBeUndefined();
            expect(view.finish?.reason).toBe(streamCase.finish);
            checkWireFinish(client, view, streamCase.finish ?? "stop");
            const usage = streamCase.usage;
            if (usage === undefined) continue;
            expect(wireUsageOf(client, view)).toMatchObject(expectedWireUsage(client, usage));
            expect(canonicalOf(view.usage)).toEqual(expectedDecodedUsage(client, usage));
          }
        });
      } else {
        const error = streamCase.error;
        test(`${name}: the mid-stream upstream failure becomes ${client}'s error frame after the partial text`, () => {
          for (const { seed, maxPieces } of SPLITS) {
            const view = readClientStream(client, run(streamCase, options, seed, maxPieces).out);
            expect(view.text).toBe(streamCase.text);
            expect(view.error).toBeDefined();
            checkErrorFrame(client, view, error.message);
          }
        });
      }

      test(`${name}: signals report the first token, usage frames, tool calls and output size`, () => {
        for (const { seed, maxPieces } of SPLITS) {
          const { signals } = run(streamCase, options, seed, maxPieces);
          expect(signals.firstToken).toBe(streamCase.firstToken);
          expect(signals.toolCalls).toBe(streamCase.calls.length);
          expect(signals.outputBytes).toBeGreaterThan(0);
          if (streamCase.error !== undefined) {
            expect(signals.error?.kind).toBe(streamCase.error.kind);
          } else {
            expect(signals.error).toBeUndefined();
            expect(signals.finish?.reason).toBe(streamCase.finish);
            expect(signals.usageFrames.length).toBeGreaterThan(0);
            const merged = signals.usageFrames.reduce<ReturnType<typeof mergeUsage> | undefined>((all, frame) => mergeUsage(all, frame), undefined);
            expect(canonicalOf(merged)).toEqual(streamCase.usage);
          }
        }
      });
    }
  }
});

describe("streams: same protocol runs as a passthrough (nothing written, signals still collected)", () => {
  for (const streamCase of CASES) {
    const client = streamCase.upstream;
    test(`${label(streamCase)} → ${client} client (passthrough): every output is empty and the signals match the upstream`, () => {
      for (const { seed, maxPieces } of SPLITS) {
        const result = run(streamCase, { upstream: client, client, passthrough: true, clientAskedUsage: true }, seed, maxPieces);
        for (const output of result.outputs) expect(output.out).toBe("");
        const signals = result.signals;
        expect(signals.firstToken).toBe(streamCase.firstToken);
        expect(signals.toolCalls).toBe(streamCase.calls.length);
        expect(signals.outputBytes).toBeGreaterThan(0);
        if (streamCase.error !== undefined) {
          expect(signals.error?.kind).toBe(streamCase.error.kind);
        } else {
          expect(signals.finish?.reason).toBe(streamCase.finish);
          const merged = signals.usageFrames.reduce<ReturnType<typeof mergeUsage> | undefined>((all, frame) => mergeUsage(all, frame), undefined);
          expect(canonicalOf(merged)).toEqual(streamCase.usage);
        }
      }
    });
  }
});

describe("streams: a chat client that did not ask for usage gets no usage chunk", () => {
  for (const streamCase of CASES) {
    if (streamCase.upstream === "openai-chat" || streamCase.usage === undefined) continue;
    test(`${label(streamCase)} → openai-chat client without stream_options.include_usage: no usage chunk, still [DONE]`, () => {
      const result = runStream(crossOptions(streamCase, "openai-chat", false), upstreamText(streamCase), 42, 40);
      const view = readClientStream("openai-chat", result.out);
      checkChatWire(view, true, false, false);
      expect(view.usage).toBeUndefined();
      expect(view.text).toBe(streamCase.text);
      // Metering still sees the usage the upstream reported.
      expect(result.signals.usageFrames.length).toBeGreaterThan(0);
    });
  }
});

describe("streams: an upstream that fails or times out mid-stream (StreamTranslation.fail) ends the client stream with its error frame", () => {
  const primary = new Map<ProtocolId, StreamCase>();
  for (const streamCase of CASES) if (streamCase.error === undefined && !primary.has(streamCase.upstream)) primary.set(streamCase.upstream, streamCase);
  for (const streamCase of primary.values()) {
    for (const client of PROTOCOL_IDS) {
      const passthrough = client === streamCase.upstream;
      test(`${label(streamCase)} cut after three frames → ${client} client${passthrough ? " (passthrough: nothing written)" : ": error frame, no success terminal"}`, () => {
        const frames = upstreamText(streamCase).split(/\r?\n\r?\n/).slice(0, 3).map((frame) => `${frame}\n\n`);
        const pieces = frames.flatMap((frame, index) => splitAtRandom(frame, 9001 + index, 5));
        const timeout = irError("upstream_timeout", "upstream timed out after 30s");
        const result = runThenFail({ upstream: streamCase.upstream, client, passthrough, clientAskedUsage: true }, pieces, timeout);
        expect(result.signals.error?.kind).toBe("upstream_timeout");
        if (passthrough) {
          for (const output of result.outputs) expect(output.out).toBe("");
          return;
        }
        const view = readClientStream(client, result.out);
        expect(view.error).toBeDefined();
        expect(view.finish).toBeUndefined();
        checkErrorFrame(client, view, "upstream timed out after 30s");
        checkWire(client, view, false, true, false);
      });
    }
  }
});

describe("streams: a tool call is never opened before its name, even when the upstream sends arguments first", () => {
  // An OpenAI-compatible upstream that sends an argument fragment before the function name (as in stream-compat-reasoning-tools.sse).
  for (const client of PROTOCOL_IDS) {
    if (client === "openai-chat") continue;
    test(`openai-chat (arguments before name) → ${client} client: the call arrives whole under its name`, () => {
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const upstream =
        chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_early", type: "function", function: { arguments: '{"city"' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { name: "get_weather", arguments: ': "Oslo"}' } }] }) +
        chunk({}, "tool_calls") +
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [], usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 } })}\n\n` +
        "data: [DONE]\n\n";
      for (const seed of REPLAY_SEEDS) {
        const result = runPieces({ upstream: "openai-chat", client, passthrough: false, clientAskedUsage: true }, splitAtRandom(upstream, seed, 200));
        const view = readClientStream(client, result.out);
        expect(view.calls.map((call) => call.name)).toEqual(["get_weather"]);
        argsMatch(client, view.calls[0]?.args ?? "", '{"city": "Oslo"}');
        expect(view.finish?.reason).toBe("tool_calls");
        expect(canonicalOf(view.usage)).toEqual(expectedDecodedUsage(client, { prompt: 5, completion: 6 }));
      }
    });
  }
});

describe("streams: signed thinking on the Messages wire", () => {
  const signedCases = CASES.filter((streamCase) => streamCase.upstream === "anthropic-messages" && streamCase.error === undefined);
  for (const streamCase of signedCases) {
    test(`${label(streamCase)} re-encoded for a Messages client keeps thinking and its signature in one block`, () => {
      const options: RunOptions = { upstream: "anthropic-messages", client: "anthropic-messages", passthrough: false, clientAskedUsage: true };
      const upstreamView = readClientStream("anthropic-messages", upstreamText(streamCase));
      for (const { seed, maxPieces } of SPLITS) {
        const view = readClientStream("anthropic-messages", run(streamCase, options, seed, maxPieces).out);
        checkWire("anthropic-messages", view, true, true, true);
        expect(view.reasoning).toBe(streamCase.reasoning);
        const blockTypes = (client: ClientStreamView) =>
          client.events.filter((event) => event.event === "content_block_start").map((event) => record(dataOf(event).content_block).type);
        expect(blockTypes(view)).toEqual(blockTypes(upstreamView));
        const signatures = (client: ClientStreamView) =>
          client.events.map((event) => record(dataOf(event).delta)).filter((delta) => delta.type === "signature_delta");
        expect(signatures(view)).toEqual(signatures(upstreamView));
      }
    });
  }
});

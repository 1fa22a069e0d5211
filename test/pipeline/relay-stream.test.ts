import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { irError, type ProtocolId } from "../../src/ir";
import { relayStream } from "../../src/pipeline/relay-stream";
import { InFlightRequests } from "../../src/pipeline/in-flight-requests";
import type { StreamEnd, StreamObserver } from "../../src/pipeline/stream-observer";
import { BodyReader } from "../../src/routing/body-reader";
import { InlineTranslator } from "../../src/translation/translator";
import type { StreamOutput } from "../../src/translation/translation-types";
import { loadRecordings, type Recording } from "../replay/recording";
import { bytePieces } from "../replay/replay-upstream";

// An OpenAI chat stream as the vendor sends it, one frame per network chunk.
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-x", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const FRAMES = [
  chunk({ role: "assistant", content: "Hel" }),
  chunk({ content: "lo, " }),
  chunk({ content: "secret" }),
  chunk({}, "stop"),
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-x", choices: [], usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 } })}\n\n`,
  "data: [DONE]\n\n",
];

function upstreamBody(frames: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < frames.length) controller.enqueue(encoder.encode(frames[next++]!));
      else controller.close();
    },
  });
}

/** An observer that records what it saw and refuses the first output whose client text contains `word`. */
function observer(refuseOn?: string) {
  const parts: StreamOutput[] = [];
  const ends: StreamEnd[] = [];
  const watcher: StreamObserver = {
    onParts(output) {
      parts.push(output);
      if (refuseOn !== undefined && output.out.includes(refuseOn)) return { error: irError("permission_denied", "the answer matched a blocked pattern") };
    },
    onEnd(end) {
      ends.push(end);
      return { chargeMicroUsd: 42, holdsEnded: Promise.resolve() };
    },
  };
  return { watcher, parts, ends };
}

/** What differs from one test's attempt to the next; the rest is passed as the pipeline passes it. */
interface Attempt {
  /** The request id's tail: its session is `req_<id>#1`. */
  id: string;
  upstream: ProtocolId;
  client: ProtocolId;
  clientAskedUsage: boolean;
  readOnMs?: number;
  headers?: Record<string, string>;
  /** Called when the upstream is aborted (by the relay, or by the body's idle deadline). */
  onAbort?: () => void;
}

/** relayStream over `body` for `attempt`, a passthrough when client and upstream speak the same protocol. */
function relayAttempt(watcher: StreamObserver, body: ReadableStream<Uint8Array>, attempt: Attempt) {
  const abort = () => attempt.onAbort?.();
  return relayStream(
    { translator: new InlineTranslator(), inFlight: new InFlightRequests(), stallTimeoutMs: 0, ...(attempt.readOnMs === undefined ? {} : { readOnMs: attempt.readOnMs }) },
    {
      sessionId: `req_${attempt.id}#1`,
      upstreamProtocol: attempt.upstream,
      clientProtocol: attempt.client,
      passthrough: attempt.client === attempt.upstream,
      context: { requestId: `req_${attempt.id}`, model: "mock/model", created: 1 },
      clientAskedUsage: attempt.clientAskedUsage,
      reader: new BodyReader(body, 5_000, abort),
      abortUpstream: abort,
      release: () => {},
      headers: attempt.headers ?? {},
      observer: watcher,
      waits: {},
    },
  );
}

async function relay(watcher: StreamObserver, body: ReadableStream<Uint8Array> = upstreamBody(FRAMES)) {
  let aborted = 0;
  const result = await relayAttempt(watcher, body, {
    id: "relay",
    upstream: "openai-chat",
    client: "anthropic-messages",
    clientAskedUsage: false,
    headers: { "x-request-id": "req_relay" },
    onAbort: () => aborted++,
  });
  return { result, aborted: () => aborted };
}

describe("relayStream with a StreamObserver", () => {
  test("every output goes to the observer, which hears once how the stream ended", async () => {
    const { watcher, parts, ends } = observer();
    const { result } = await relay(watcher);
    expect(result.ok).toBe(true);
    const text = await (result as { response: Response }).response.text();
    expect(text).toContain("Hel");
    expect(text).toContain("secret");
    expect(text).toContain("message_stop");
    expect(parts.some((part) => part.signals.firstToken !== undefined)).toBe(true);
    expect(ends).toEqual([{ attemptOutcome: "success", status: "succeeded", interrupted: false }]);
  });

  test("a refusal before the first token is sent answers with the refusal and tries no other candidate", async () => {
    const { watcher, ends } = observer("Hel");
    const { result, aborted } = await relay(watcher);
    expect(result).toMatchObject({ ok: false, refused: true, attemptOutcome: "success", error: { kind: "permission_denied" } });
    expect(aborted()).toBeGreaterThan(0);
    expect(ends).toEqual([]);
  });

  test("a refusal after the stream is committed ends it with the protocol's error frame and settles it as failed", async () => {
    const { watcher, ends } = observer("secret");
    const { result, aborted } = await relay(watcher);
    expect(result.ok).toBe(true);
    const text = await (result as { response: Response }).response.text();
    expect(text).toContain("Hel");
    expect(text).not.toContain("secret");
    expect(text).toContain("event: error");
    expect(text).toContain("the answer matched a blocked pattern");
    expect(text).not.toContain("message_stop");
    expect(aborted()).toBeGreaterThan(0);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ attemptOutcome: "success", status: "failed", interrupted: false, error: { kind: "permission_denied" } });
  });
});

describe("a committed stream's warnings", () => {
  test("reasoning the client's protocol could not carry, held when the upstream fails, reaches the observer with the end", async () => {
    // The upstream thinks (unsigned: a Messages client never gets it), then its connection resets.
    const thinking = [chunk({ role: "assistant", reasoning_content: "Let me " }), chunk({ reasoning_content: "think." })];
    const encoder = new TextEncoder();
    let next = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next < thinking.length) controller.enqueue(encoder.encode(thinking[next++]!));
        else controller.error(new Error("connection reset"));
      },
    });
    const { watcher, parts, ends } = observer();
    const { result } = await relay(watcher, failing);
    expect(result.ok).toBe(true);
    const text = await (result as { response: Response }).response.text();
    expect(text).toContain("event: error");
    expect(text).not.toContain("think.");
    expect(parts.some((part) => part.warnings !== undefined)).toBe(false);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ status: "failed", warnings: [{ code: "dropped_content", field: "output.reasoning" }] });
  });
});

/**
 * An answer refused because it asks the client for an action the client's protocol cannot
 * express is complete at the upstream, which bills all of it: the relay reads on to the
 * usage report at its end (bounded), so the request is charged what the provider reports.
 * The recorded OpenAI stream of a `local_shell_call` (test/replay/recordings/openai), one
 * event per network chunk.
 */
describe("a refused client action is read on to its usage", () => {
  const recorded = readFileSync(join(import.meta.dir, "../replay/recordings/openai/openai-responses-local-shell-stream.sse"), "utf8");
  const events = recorded.split("\n\n").filter((event) => event.trim() !== "").map((event) => `${event}\n\n`);
  const completedAt = events.findIndex((event) => event.includes('"type":"response.completed"'));
  const actionAt = events.findIndex((event) => event.includes('"type":"response.output_item.added"') && event.includes("local_shell_call"));
  // Text the model wrote before asking for the action: the stream is committed when the action comes.
  const message = (type: string, extra: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...extra })}\n\n`;
  const textFirst = [
    message("response.output_item.added", { output_index: 1, item: { id: "msg_1", type: "message", role: "assistant", status: "in_progress", content: [] } }),
    message("response.output_text.delta", { output_index: 1, item_id: "msg_1", content_index: 0, delta: "Listing your files." }),
    message("response.output_item.done", { output_index: 1, item: { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Listing your files.", annotations: [] }] } }),
  ];
  const reportedUsage = (parts: StreamOutput[]) => parts.flatMap((part) => part.signals.usageFrames).map((usage) => usage.completionTokens);

  async function relayResponses(watcher: StreamObserver, body: ReadableStream<Uint8Array>, readOnMs?: number) {
    const aborted = { count: 0 };
    const result = await relayAttempt(watcher, body, {
      id: "action",
      upstream: "openai-responses",
      client: "openai-chat",
      clientAskedUsage: false,
      ...(readOnMs === undefined ? {} : { readOnMs }),
      onAbort: () => aborted.count++,
    });
    return { result, aborted };
  }

  test("before the first token: the refusal answers after the upstream's usage is read, and says the stream was read to its end", async () => {
    expect(actionAt).toBeGreaterThan(0);
    expect(completedAt).toBeGreaterThan(actionAt);
    const { watcher, parts } = observer();
    const { result } = await relayResponses(watcher, upstreamBody(events));
    expect(result).toMatchObject({ ok: false, refused: true, readToEnd: true, error: { kind: "upstream_invalid_response" } });
    // OpenAI's report: 151 output tokens, 128 of them reasoning.
    expect(reportedUsage(parts)).toEqual([151]);
  });

  test("after text went out: the error frame follows the read-on, and the end is settled with the final usage", async () => {
    const { watcher, parts, ends } = observer();
    const frames = [...events.slice(0, actionAt), ...textFirst, ...events.slice(actionAt)];
    const { result } = await relayResponses(watcher, upstreamBody(frames));
    expect(result.ok).toBe(true);
    const text = await (result as { response: Response }).response.text();
    expect(text).toContain("Listing your files.");
    // Chat's error frame, after the text: nothing of the action is delivered as content.
    expect(text.indexOf('"code":"upstream_invalid_response"')).toBeGreaterThan(text.indexOf("Listing your files."));
    expect(text).not.toContain("ls -a");
    expect(reportedUsage(parts)).toEqual([151]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ attemptOutcome: "success", status: "failed", readToEnd: true, error: { kind: "upstream_invalid_response" } });
  });

  test("an upstream that never ends after the action is read on only as long as the bound, then cut and settled as before", async () => {
    const { watcher, parts, ends } = observer();
    const encoder = new TextEncoder();
    const frames = [...events.slice(0, actionAt), ...textFirst, ...events.slice(actionAt, completedAt)];
    let next = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next < frames.length) controller.enqueue(encoder.encode(frames[next++]!));
        // Then nothing: no response.completed, no end.
      },
      cancel() {
        cancelled = true;
      },
    });
    const started = performance.now();
    const { result, aborted } = await relayResponses(watcher, endless, 200);
    expect(result.ok).toBe(true);
    const text = await (result as { response: Response }).response.text();
    const took = performance.now() - started;
    expect(text).toContain("local_shell_call");
    expect(took).toBeGreaterThanOrEqual(190);
    expect(cancelled).toBe(true);
    expect(aborted.count).toBeGreaterThan(0);
    expect(reportedUsage(parts)).toEqual([]);
    expect(ends).toHaveLength(1);
    expect(ends[0]!.readToEnd).toBeUndefined();
    expect(ends[0]).toMatchObject({ status: "failed", interrupted: false });
  });
});

/**
 * A short answer from a fast upstream arrives whole: its terminal frame is in the chunk that
 * brings the first token, and the body's end right behind it. Such a stream goes out as one
 * body, settled before it is sent, with nothing relayed behind it; an upstream that keeps its
 * body open after the terminal frame, or sends more, is relayed as before.
 */
describe("a stream that arrived whole", () => {
  const WHOLE = FRAMES.join("");

  /** The whole stream in one chunk, then `after`: the end (close), more text, or nothing until `release`. */
  function oneChunk(after: "close" | "more" | "hang") {
    const encoder = new TextEncoder();
    let pulls = 0;
    let release = () => {};
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        if (pulls === 1) return controller.enqueue(encoder.encode(WHOLE));
        if (after === "more" && pulls === 2) return controller.enqueue(encoder.encode(": trailing comment\n\n"));
        if (after === "hang" && pulls === 2) return new Promise<void>((resolve) => (release = () => (controller.close(), resolve())));
        controller.close();
      },
    });
    return { body, release: () => release() };
  }

  async function passthrough(watcher: StreamObserver, body: ReadableStream<Uint8Array>) {
    return relayAttempt(watcher, body, { id: "whole", upstream: "openai-chat", client: "openai-chat", clientAskedUsage: true });
  }

  test("goes out as one body, settled before it is sent, with the same bytes and the charge in its usage frame", async () => {
    const whole = observer();
    const result = await passthrough(whole.watcher, oneChunk("close").body);
    expect(result.ok).toBe(true);
    // Settled before the response was handed back: nothing is relayed after it.
    expect(whole.ends).toEqual([{ attemptOutcome: "success", status: "succeeded", interrupted: false }]);
    const text = await (result as { response: Response }).response.text();

    // The same answer a frame a chunk goes through the relay: the client gets the same bytes.
    const relayed = observer();
    const framed = await passthrough(relayed.watcher, upstreamBody(FRAMES));
    expect(relayed.ends).toEqual([]);
    expect(text).toBe(await (framed as { response: Response }).response.text());
    expect(relayed.ends).toEqual(whole.ends);
    expect(text).toContain('"model":"mock/model"');
    expect(text).toContain('"cost":');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("an upstream that keeps its body open after the terminal frame: the text goes out at once, the end when the body ends", async () => {
    const { watcher, ends } = observer();
    const upstream = oneChunk("hang");
    const result = await passthrough(watcher, upstream.body);
    expect(result.ok).toBe(true);
    expect(ends).toEqual([]);
    const reader = (result as { response: Response }).response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("secret")) text += decoder.decode((await reader.read()).value, { stream: true });
    // The answer's text is out while the upstream still holds its body open; its terminal frame waits for the settlement.
    expect(text).not.toContain("[DONE]");
    expect(ends).toEqual([]);
    upstream.release();
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += decoder.decode(read.value, { stream: true });
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(ends).toEqual([{ attemptOutcome: "success", status: "succeeded", interrupted: false }]);
  });

  test("more after the terminal frame is relayed as before", async () => {
    const { watcher, ends } = observer();
    const result = await passthrough(watcher, oneChunk("more").body);
    expect(result.ok).toBe(true);
    expect(ends).toEqual([]);
    const text = await (result as { response: Response }).response.text();
    expect(text).toContain(": trailing comment");
    expect(text).toContain("[DONE]");
    expect(ends).toHaveLength(1);
  });
});

/**
 * The same against real provider traffic: every recorded stream (test/replay/recordings) is
 * relayed twice, whole in one chunk (as a fast upstream's short answer comes) and in the
 * replay upstream's pieces of 1 to 512 bytes, to its own protocol and to another. Where the
 * answer's end came whole it goes out as one body; the client gets the same text either way,
 * and the request is settled the same way.
 */
describe("recorded real streams, whole or in pieces", () => {
  const streams = loadRecordings().filter((recording) => recording.mode === "stream");
  const encoder = new TextEncoder();

  async function relayRecording(recording: Recording, client: ProtocolId, chunks: readonly Uint8Array[]) {
    const { watcher, ends } = observer();
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks[next++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const result = await relayAttempt(watcher, body, { id: recording.id, upstream: recording.protocol, client, clientAskedUsage: true });
    const settledBeforeSent = ends.length;
    const text = result.ok ? await result.response.text() : undefined;
    return { ok: result.ok, text, ends, settledBeforeSent };
  }

  test("the same client text and the same end, and an answer that came whole goes out as one body", async () => {
    expect(streams.length).toBeGreaterThan(20);
    let answeredWhole = 0;
    for (const recording of streams) {
      const bytes = encoder.encode(recording.bytes);
      for (const client of [recording.protocol, recording.protocol === "openai-chat" ? "anthropic-messages" : "openai-chat"] as const) {
        const whole = await relayRecording(recording, client, [bytes]);
        const pieces = await relayRecording(recording, client, bytePieces(bytes, recording.id));
        const cell = `${recording.id} → ${client}`;
        expect({ cell, ok: whole.ok, text: whole.text, ends: whole.ends }).toEqual({ cell, ok: pieces.ok, text: pieces.text, ends: pieces.ends });
        if (whole.settledBeforeSent === 1) answeredWhole++;
      }
    }
    // Every recording of a protocol with a terminal frame that ends cleanly (all but Gemini's, and failed ones).
    expect(answeredWhole).toBeGreaterThan(streams.length);
  });
});

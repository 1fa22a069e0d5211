import { describe, expect, test } from "bun:test";
import { irError } from "../../src/ir";
import { relayStream } from "../../src/pipeline/relay-stream";
import { InFlightRequests } from "../../src/pipeline/in-flight-requests";
import type { StreamEnd, StreamObserver } from "../../src/pipeline/stream-observer";
import { BodyReader } from "../../src/routing/body-reader";
import { InlineTranslator } from "../../src/translation/translator";
import type { StreamOutput } from "../../src/translation/translation-types";

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

async function relay(watcher: StreamObserver, body: ReadableStream<Uint8Array> = upstreamBody(FRAMES)) {
  let aborted = 0;
  const result = await relayStream(
    { translator: new InlineTranslator(), inFlight: new InFlightRequests(), stallTimeoutMs: 0 },
    {
      sessionId: "req_relay#1",
      upstreamProtocol: "openai-chat",
      clientProtocol: "anthropic-messages",
      passthrough: false,
      context: { requestId: "req_relay", model: "mock/model", created: 1 },
      clientAskedUsage: false,
      reader: new BodyReader(body, 5_000, () => aborted++),
      abortUpstream: () => aborted++,
      release: () => {},
      headers: { "x-request-id": "req_relay" },
      observer: watcher,
      waits: {},
    },
  );
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

import { describe, expect, test } from "bun:test";
import type { IrStreamPart } from "../../../src/ir";
import { anthropicMessagesCodec as codec } from "../../../src/protocols/anthropic-messages";
import { googleGenerateContentCodec } from "../../../src/protocols/google-generate-content";
import { REPLAY_SEEDS, splitAtRandom } from "../../support/split-chunks";
import { CONTEXT, decodePieces, parseEvents, readFixture } from "./stream-replay";

function encode(parts: IrStreamPart[]): string {
  const encoder = codec.createStreamEncoder(CONTEXT, { includeUsage: false });
  return parts.map((part) => encoder.push(part)).join("") + encoder.end();
}

function eventsOf(text: string): Array<{ event: string | undefined; data: Record<string, unknown> }> {
  return parseEvents(text).map((event) => ({ event: event.event, data: JSON.parse(event.data) }));
}

/** A turn as an OpenAI chat upstream delivers it: text, then two tool calls, tool ends and usage only after the finish. */
const chatLikeTurn: IrStreamPart[] = [
  { type: "start", id: "chatcmpl-1", model: "gpt-5" },
  { type: "text_delta", text: "Let me check." },
  { type: "tool_call_start", index: 0, id: "call_a", name: "get_weather" },
  { type: "tool_call_delta", index: 0, argumentsDelta: '{"location":' },
  { type: "tool_call_delta", index: 0, argumentsDelta: '"Paris"}' },
  { type: "tool_call_start", index: 1, id: "call_b", name: "get_time" },
  { type: "tool_call_delta", index: 1, argumentsDelta: '{"timezone":"Europe/Paris"}' },
  { type: "tool_call_end", index: 0 },
  { type: "tool_call_end", index: 1 },
  { type: "finish", finish: { reason: "stop", raw: "stop" } },
  { type: "usage", usage: { promptTokens: 1200, completionTokens: 40, cacheReadTokens: 1000 } },
];

describe("anthropic-messages stream encoder", () => {
  test("writes the exact event order of a text + two tool call turn", () => {
    const events = eventsOf(encode(chatLikeTurn));
    expect(events.map((event) => event.event)).toEqual([
      "message_start",
      "content_block_start", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_stop",
      "message_delta", "message_stop",
    ]);
    for (const event of events) expect(event.data.type).toBe(event.event);
    const starts = events.filter((event) => event.event === "content_block_start").map((event) => [event.data.index, event.data.content_block]);
    expect(starts).toEqual([
      [0, { type: "text", text: "" }],
      [1, { type: "tool_use", id: "call_a", name: "get_weather", input: {} }],
      [2, { type: "tool_use", id: "call_b", name: "get_time", input: {} }],
    ]);
  });

  test("a mixed text + tool turn ends with stop_reason tool_use even when the upstream said stop", () => {
    const delta = eventsOf(encode(chatLikeTurn)).find((event) => event.event === "message_delta");
    expect(delta?.data.delta).toEqual({ stop_reason: "tool_use", stop_sequence: null });
  });

  test("usage that arrives after the finish still reaches message_delta, cache-exclusive", () => {
    const delta = eventsOf(encode(chatLikeTurn)).find((event) => event.event === "message_delta");
    expect(delta?.data.usage).toEqual({ input_tokens: 200, output_tokens: 40, cache_read_input_tokens: 1000 });
  });

  test("frames are `event: <type>\\ndata: <json>\\n\\n`", () => {
    const text = encode(chatLikeTurn);
    const frames = text.split("\n\n").filter((frame) => frame !== "");
    for (const frame of frames) expect(frame).toMatch(/^event: [a-z_]+\ndata: \{.*\}$/);
  });

  test("message_start reports input tokens when the upstream's usage came before the first content", () => {
    const events = eventsOf(
      encode([
        { type: "start" },
        { type: "usage", usage: { promptTokens: 3544, completionTokens: 2, cacheReadTokens: 2048, cacheWriteTokens: 1024 } },
        { type: "text_delta", text: "Hi" },
        { type: "finish", finish: { reason: "stop", raw: "end_turn" } },
      ]),
    );
    expect(events[0]?.data.message).toEqual({
      id: "msg_req_7f3a",
      type: "message",
      role: "assistant",
      model: "anthropic/claude-sonnet-4.5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 472, output_tokens: 0, cache_read_input_tokens: 2048, cache_creation_input_tokens: 1024 },
    });
    expect(events.at(-2)?.data.delta).toEqual({ stop_reason: "end_turn", stop_sequence: null });
  });

  test("text after a tool call opens a new text block, and empty text never opens one", () => {
    const events = eventsOf(
      encode([
        { type: "text_delta", text: "" },
        { type: "tool_call_start", index: 0, id: "c1", name: "f" },
        { type: "tool_call_delta", index: 0, argumentsDelta: "{}" },
        { type: "tool_call_end", index: 0 },
        { type: "text_delta", text: "" },
        { type: "text_delta", text: "Done." },
        { type: "finish", finish: { reason: "tool_calls" } },
      ]),
    );
    const starts = events.filter((event) => event.event === "content_block_start").map((event) => event.data.content_block);
    expect(starts).toEqual([{ type: "tool_use", id: "c1", name: "f", input: {} }, { type: "text", text: "" }]);
    const textDeltas = events.filter((event) => (event.data.delta as { type?: string } | undefined)?.type === "text_delta");
    expect(textDeltas.map((event) => (event.data.delta as { text: string }).text)).toEqual(["Done."]);
  });

  test("tool calls whose deltas interleave are written as whole blocks without losing a fragment", () => {
    const events = eventsOf(
      encode([
        { type: "tool_call_start", index: 0, id: "a", name: "f" },
        { type: "tool_call_start", index: 1, id: "b", name: "g" },
        { type: "tool_call_delta", index: 1, argumentsDelta: '{"y":' },
        { type: "tool_call_delta", index: 0, argumentsDelta: '{"x":1}' },
        { type: "tool_call_delta", index: 1, argumentsDelta: "2}" },
        { type: "tool_call_end", index: 0 },
        { type: "tool_call_end", index: 1 },
        { type: "finish", finish: { reason: "tool_calls" } },
      ]),
    );
    const byIndex = new Map<number, string>();
    for (const event of events) {
      const delta = event.data.delta as { type?: string; partial_json?: string } | undefined;
      if (delta?.type !== "input_json_delta") continue;
      const index = event.data.index as number;
      byIndex.set(index, (byIndex.get(index) ?? "") + delta.partial_json);
    }
    expect(JSON.parse(byIndex.get(0) ?? "")).toEqual({ x: 1 });
    expect(JSON.parse(byIndex.get(1) ?? "")).toEqual({ y: 2 });
    expect(events.map((event) => event.event)).toEqual([
      "message_start",
      "content_block_start", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_stop",
      "message_delta", "message_stop",
    ]);
  });

  test("an error part becomes an `event: error` frame and the stream ends there", () => {
    const encoder = codec.createStreamEncoder(CONTEXT, { includeUsage: true });
    let text = encoder.push({ type: "text_delta", text: "Hel" });
    text += encoder.push({ type: "error", error: { kind: "upstream_unavailable", status: 503, message: "Overloaded" } });
    text += encoder.push({ type: "text_delta", text: "lo" });
    text += encoder.end();
    const events = eventsOf(text);
    expect(events.map((event) => event.event)).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_stop", "error"]);
    expect(events.at(-1)?.data).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
  });

  test("an Anthropic stream decoded and re-encoded decodes back to the same parts, signature included", () => {
    const fixture = readFixture("stream-thinking-text-tools.sse");
    for (const seed of REPLAY_SEEDS) {
      const decoded = decodePieces(codec.createStreamDecoder(), splitAtRandom(fixture, seed));
      const reencoded = encode(decoded);
      const again = decodePieces(codec.createStreamDecoder(), splitAtRandom(reencoded, seed));
      const withoutStart = (parts: IrStreamPart[]) => parts.filter((part) => part.type !== "start" && part.type !== "usage");
      expect(withoutStart(again)).toEqual(withoutStart(decoded));
      expect(again.filter((part) => part.type === "usage").at(-1)).toMatchObject({
        usage: { promptTokens: 3544, completionTokens: 156, cacheReadTokens: 2048, cacheWriteTokens: 1024 },
      });
      const signature = again.find((part) => part.type === "reasoning_signature");
      expect(signature).toEqual(decoded.find((part) => part.type === "reasoning_signature"));
    }
  });

  test("thinking is written as thinking_delta then signature_delta in one block, redacted thinking as its own block", () => {
    const events = eventsOf(
      encode([
        { type: "redacted_reasoning", data: "opaque", protocol: "anthropic-messages" },
        { type: "reasoning_delta", text: "hmm" },
        { type: "reasoning_signature", signature: "sig", protocol: "anthropic-messages" },
        { type: "text_delta", text: "ok" },
        { type: "finish", finish: { reason: "stop" } },
      ]),
    );
    expect(events.slice(1, 9).map((event) => [event.event, event.data.index, event.data.content_block ?? event.data.delta ?? null])).toEqual([
      ["content_block_start", 0, { type: "redacted_thinking", data: "opaque" }],
      ["content_block_stop", 0, null],
      ["content_block_start", 1, { type: "thinking", thinking: "" }],
      ["content_block_delta", 1, { type: "thinking_delta", thinking: "hmm" }],
      ["content_block_delta", 1, { type: "signature_delta", signature: "sig" }],
      ["content_block_stop", 1, null],
      ["content_block_start", 2, { type: "text", text: "" }],
      ["content_block_delta", 2, { type: "text_delta", text: "ok" }],
    ]);
  });

  test("reasoning without an Anthropic signature opens no thinking block; the next blocks keep contiguous indexes", () => {
    const events = eventsOf(
      encode([
        { type: "start", id: "chatcmpl-1", model: "deepseek-reasoner" },
        { type: "reasoning_delta", text: "The user wants " },
        { type: "reasoning_delta", text: "the weather." },
        { type: "text_delta", text: "Checking." },
        { type: "reasoning_delta", text: "Now call the tool." },
        { type: "tool_call_start", index: 0, id: "call_a", name: "get_weather" },
        { type: "tool_call_delta", index: 0, argumentsDelta: '{"location":"Paris"}' },
        { type: "tool_call_end", index: 0 },
        { type: "reasoning_delta", text: "trailing thought" },
        { type: "finish", finish: { reason: "tool_calls", raw: "tool_calls" } },
      ]),
    );
    expect(events.map((event) => [event.event, event.data.index ?? null])).toEqual([
      ["message_start", null],
      ["content_block_start", 0],
      ["content_block_delta", 0],
      ["content_block_stop", 0],
      ["content_block_start", 1],
      ["content_block_delta", 1],
      ["content_block_stop", 1],
      ["message_delta", null],
      ["message_stop", null],
    ]);
    const blocks = events.filter((event) => event.event === "content_block_start").map((event) => event.data.content_block);
    expect(blocks).toEqual([{ type: "text", text: "" }, { type: "tool_use", id: "call_a", name: "get_weather", input: {} }]);
    expect(JSON.stringify(events)).not.toContain("thinking");
  });

  test("a signature or redacted reasoning from another vendor is never passed off as Anthropic's", () => {
    const events = eventsOf(
      encode([
        { type: "reasoning_delta", text: "Gemini thought" },
        { type: "reasoning_signature", signature: "gemini-thought-signature", protocol: "google-generate-content" },
        { type: "redacted_reasoning", data: "openai-encrypted-content", protocol: "openai-responses" },
        { type: "text_delta", text: "Answer." },
        { type: "finish", finish: { reason: "stop" } },
      ]),
    );
    const blocks = events.filter((event) => event.event === "content_block_start").map((event) => [event.data.index, event.data.content_block]);
    expect(blocks).toEqual([[0, { type: "text", text: "" }]]);
    const text = JSON.stringify(events);
    for (const foreign of ["thinking", "gemini-thought-signature", "openai-encrypted-content"]) expect(text).not.toContain(foreign);
  });

  test("signed thinking is written whole when its signature arrives, and an empty signed block is kept", () => {
    const encoder = codec.createStreamEncoder(CONTEXT, { includeUsage: false });
    const first = encoder.push({ type: "reasoning_delta", text: "step one" });
    const held = encoder.push({ type: "reasoning_delta", text: ", step two" });
    expect(eventsOf(first).map((event) => event.event)).toEqual(["message_start"]);
    expect(held).toBe("");
    const signed = eventsOf(encoder.push({ type: "reasoning_signature", signature: "sig-1", protocol: "anthropic-messages" }));
    expect(signed.map((event) => [event.event, event.data.index, event.data.content_block ?? event.data.delta ?? null])).toEqual([
      ["content_block_start", 0, { type: "thinking", thinking: "" }],
      ["content_block_delta", 0, { type: "thinking_delta", thinking: "step one" }],
      ["content_block_delta", 0, { type: "thinking_delta", thinking: ", step two" }],
      ["content_block_delta", 0, { type: "signature_delta", signature: "sig-1" }],
      ["content_block_stop", 0, null],
    ]);
    // A thinking block whose text was omitted still carries its signature (a second block here).
    const omitted = eventsOf(encoder.push({ type: "reasoning_signature", signature: "sig-2", protocol: "anthropic-messages" }));
    expect(omitted.map((event) => [event.event, event.data.index])).toEqual([
      ["content_block_start", 1],
      ["content_block_delta", 1],
      ["content_block_stop", 1],
    ]);
    expect(omitted[1]?.data.delta).toEqual({ type: "signature_delta", signature: "sig-2" });
  });

  test("a Gemini upstream stream reaches an Anthropic client with tool_use, full arguments and cache-exclusive usage", () => {
    const gemini = readFixture("../google-generate-content/stream-thinking-parallel-calls.sse");
    for (const seed of REPLAY_SEEDS) {
      const parts = decodePieces(googleGenerateContentCodec.createStreamDecoder(), splitAtRandom(gemini, seed));
      const events = eventsOf(encode(parts));
      const blocks = events.filter((event) => event.event === "content_block_start").map((event) => (event.data.content_block as { type: string }).type);
      // Gemini's thoughts carry no Anthropic signature: no thinking block, and the indexes stay contiguous.
      expect(blocks).toEqual(["text", "tool_use", "tool_use"]);
      const indexes = events.filter((event) => event.event === "content_block_start").map((event) => event.data.index);
      expect(indexes).toEqual([0, 1, 2]);
      const json = events
        .filter((event) => (event.data.delta as { type?: string } | undefined)?.type === "input_json_delta")
        .map((event) => JSON.parse((event.data.delta as { partial_json: string }).partial_json));
      expect(json).toEqual([{ location: "Paris, France", unit: "celsius" }, { timezone: "Europe/Paris" }]);
      const delta = events.find((event) => event.event === "message_delta");
      expect(delta?.data).toEqual({
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { input_tokens: 1843 - 1024, output_tokens: 170, cache_read_input_tokens: 1024 },
      });
      expect(events.some((event) => (event.data.delta as { type?: string } | undefined)?.type === "signature_delta")).toBe(false);
    }
  });
});

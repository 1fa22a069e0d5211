import { describe, expect, test } from "bun:test";
import type { IrStreamPart } from "../../../src/ir";
import { anthropicMessagesCodec } from "../../../src/protocols/anthropic-messages";
import { googleGenerateContentCodec as codec } from "../../../src/protocols/google-generate-content";
import { REPLAY_SEEDS, splitAtRandom } from "../../support/split-chunks";
import { CONTEXT, decodePieces, parseEvents, readFixture } from "./stream-replay";

function encode(parts: IrStreamPart[]): string {
  const encoder = codec.createStreamEncoder(CONTEXT, { includeUsage: false });
  return parts.map((part) => encoder.push(part)).join("") + encoder.end();
}

function chunksOf(text: string): Array<Record<string, unknown>> {
  return parseEvents(text).map((event) => JSON.parse(event.data));
}

function partsOf(chunk: Record<string, unknown> | undefined): unknown {
  return (chunk?.candidates as Array<{ content: { parts: unknown[] } }> | undefined)?.[0]?.content.parts;
}

describe("google-generate-content stream encoder", () => {
  test("text and thought deltas stream one chunk each; tool calls arrive whole; the last chunk finishes", () => {
    const chunks = chunksOf(
      encode([
        { type: "start", id: "msg_1", model: "claude" },
        { type: "reasoning_delta", text: "Thinking…" },
        { type: "reasoning_signature", signature: "anthropic-only", protocol: "anthropic-messages" },
        { type: "text_delta", text: "Let me check." },
        { type: "text_delta", text: "" },
        { type: "tool_call_start", index: 0, id: "toolu_1", name: "get_weather" },
        { type: "tool_call_delta", index: 0, argumentsDelta: '{"location": "Par' },
        { type: "tool_call_delta", index: 0, argumentsDelta: 'is"}' },
        { type: "tool_call_end", index: 0 },
        { type: "usage", usage: { promptTokens: 3544, completionTokens: 156, cacheReadTokens: 2048, cacheWriteTokens: 1024 } },
        { type: "finish", finish: { reason: "tool_calls", raw: "tool_use" } },
      ]),
    );
    expect(chunks.map(partsOf)).toEqual([
      [{ text: "Thinking…", thought: true }],
      [{ text: "Let me check." }],
      [{ functionCall: { name: "get_weather", args: { location: "Paris" } } }],
      [],
    ]);
    expect(chunks[0]).toMatchObject({ modelVersion: "google/gemini-2.5-pro", responseId: "req_7f3a" });
    expect(chunks.at(-1)).toEqual({
      candidates: [{ content: { role: "model", parts: [] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 3544, candidatesTokenCount: 156, totalTokenCount: 3700, cachedContentTokenCount: 2048 },
      modelVersion: "google/gemini-2.5-pro",
      responseId: "req_7f3a",
    });
  });

  test("every frame is a single `data: <json>` line", () => {
    const text = encode([{ type: "text_delta", text: "a\nb" }, { type: "finish", finish: { reason: "stop" } }]);
    for (const frame of text.split("\n\n").filter((item) => item !== "")) expect(frame).toMatch(/^data: \{.*\}$/);
  });

  test("a tool call still open at the end is flushed before the final chunk", () => {
    const chunks = chunksOf(
      encode([
        { type: "tool_call_start", index: 0, id: "c", name: "f" },
        { type: "tool_call_delta", index: 0, argumentsDelta: '{"x":1}' },
        { type: "finish", finish: { reason: "tool_calls" } },
      ]),
    );
    expect(chunks.map(partsOf)).toEqual([[{ functionCall: { name: "f", args: { x: 1 } } }], []]);
  });

  test("an error part becomes a Google error chunk and nothing follows", () => {
    const encoder = codec.createStreamEncoder(CONTEXT, { includeUsage: true });
    const text =
      encoder.push({ type: "text_delta", text: "Hi" }) +
      encoder.push({ type: "error", error: { kind: "upstream_rate_limited", status: 429, message: "quota" } }) +
      encoder.end();
    const chunks = chunksOf(text);
    expect(chunks).toHaveLength(2);
    expect(chunks[1]).toEqual({
      error: {
        code: 429,
        message: "quota",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "upstream_rate_limited", domain: "switchyard" }],
      },
    });
  });

  test("an Anthropic upstream stream translated to Gemini decodes back with every call, tool_calls finish and usage", () => {
    const anthropic = readFixture("../anthropic-messages/stream-thinking-text-tools.sse");
    for (const seed of REPLAY_SEEDS) {
      const irParts = decodePieces(anthropicMessagesCodec.createStreamDecoder(), splitAtRandom(anthropic, seed));
      const gemini = encode(irParts);
      const back = decodePieces(codec.createStreamDecoder(), splitAtRandom(gemini, seed));
      expect(back.map((part) => part.type)).toEqual([
        "start", "reasoning_delta", "reasoning_delta", "text_delta", "text_delta",
        "tool_call_start", "tool_call_delta", "tool_call_end",
        "tool_call_start", "tool_call_delta", "tool_call_end",
        "usage", "finish",
      ]);
      const args = back.flatMap((part) => (part.type === "tool_call_delta" ? [JSON.parse(part.argumentsDelta)] : []));
      expect(args).toEqual([{ location: "Paris, France", unit: "celsius" }, { timezone: "Europe/Paris" }]);
      expect(back.at(-1)).toEqual({ type: "finish", finish: { reason: "tool_calls", raw: "STOP" } });
      expect(back.at(-2)).toMatchObject({ usage: { promptTokens: 3544, completionTokens: 156, cacheReadTokens: 2048 } });
    }
  });

  test("a Gemini stream decoded, re-encoded and decoded again keeps its content", () => {
    const fixture = readFixture("stream-thinking-parallel-calls.sse");
    const withoutIds = (parts: IrStreamPart[]) =>
      parts.filter((part) => part.type !== "start" && part.type !== "usage").map((part) => (part.type === "tool_call_start" ? { ...part, id: "" } : part));
    for (const seed of REPLAY_SEEDS) {
      const first = decodePieces(codec.createStreamDecoder(), splitAtRandom(fixture, seed));
      const second = decodePieces(codec.createStreamDecoder(), splitAtRandom(encode(first), seed));
      expect(withoutIds(second)).toEqual(withoutIds(first));
      expect(second.filter((part) => part.type === "usage").at(-1)).toMatchObject({
        usage: { promptTokens: 1843, completionTokens: 170, reasoningTokens: 112, cacheReadTokens: 1024 },
      });
    }
  });
});

import { describe, expect, test } from "bun:test";
import type { IrStreamPart } from "../../../src/ir";
import { anthropicMessagesCodec as codec } from "../../../src/protocols/anthropic-messages";
import { REPLAY_SEEDS, splitAtRandom } from "../../support/split-chunks";
import { decodePieces, readFixture } from "./stream-replay";

const types = (parts: IrStreamPart[]) => parts.map((part) => part.type);

function replayEverySplit(fixture: string, check: (parts: IrStreamPart[]) => void): void {
  const text = readFixture(fixture);
  check(decodePieces(codec.createStreamDecoder(), [text]));
  for (const seed of REPLAY_SEEDS) check(decodePieces(codec.createStreamDecoder(), splitAtRandom(text, seed)));
}

describe("anthropic-messages stream decoder: thinking, text and two tool calls", () => {
  test("emits the exact part sequence whatever the chunk boundaries", () => {
    replayEverySplit("stream-thinking-text-tools.sse", (parts) => {
      expect(types(parts)).toEqual([
        "start", "usage",
        "reasoning_delta", "reasoning_delta", "reasoning_signature",
        "text_delta", "text_delta",
        "tool_call_start", "tool_call_delta", "tool_call_delta", "tool_call_delta", "tool_call_end",
        "tool_call_start", "tool_call_delta", "tool_call_delta", "tool_call_end",
        "usage", "finish",
      ]);
    });
  });

  test("carries the payloads: reasoning, signature, text and reassemblable tool arguments", () => {
    replayEverySplit("stream-thinking-text-tools.sse", (parts) => {
      expect(parts[0]).toEqual({ type: "start", id: "msg_01XFDUDYJgAACzvnptvVoYEL", model: "claude-sonnet-4-5-20250929" });
      const reasoning = parts.flatMap((part) => (part.type === "reasoning_delta" ? [part.text] : [])).join("");
      expect(reasoning).toBe("The user wants the weather and the local time in Paris. Both tools can run in parallel.");
      expect(parts[4]).toMatchObject({ type: "reasoning_signature", protocol: "anthropic-messages", signature: expect.stringMatching(/^EqQBCkYIBxgCKkBd7pX0.*iIwX9$/) });
      const text = parts.flatMap((part) => (part.type === "text_delta" ? [part.text] : [])).join("");
      expect(text).toBe("I'll check the weather and the time in Paris — é ✓.");
      expect(parts.filter((part) => part.type === "tool_call_start")).toEqual([
        { type: "tool_call_start", index: 0, id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather" },
        { type: "tool_call_start", index: 1, id: "toolu_01VbJ2p8sQnLk4TmZyX7cR3d", name: "get_time" },
      ]);
      const args = (index: number) =>
        parts.flatMap((part) => (part.type === "tool_call_delta" && part.index === index ? [part.argumentsDelta] : [])).join("");
      expect(JSON.parse(args(0))).toEqual({ location: "Paris, France", unit: "celsius" });
      expect(JSON.parse(args(1))).toEqual({ timezone: "Europe/Paris" });
      expect(parts.at(-1)).toEqual({ type: "finish", finish: { reason: "tool_calls", raw: "tool_use" } });
    });
  });

  test("merges message_start and message_delta usage so the last usage part is complete", () => {
    replayEverySplit("stream-thinking-text-tools.sse", (parts) => {
      const usages = parts.flatMap((part) => (part.type === "usage" ? [part.usage] : []));
      expect(usages[0]).toMatchObject({ promptTokens: 472 + 1024 + 2048, completionTokens: 2, cacheReadTokens: 2048, cacheWriteTokens: 1024 });
      expect(usages.at(-1)).toMatchObject({ promptTokens: 3544, completionTokens: 156, cacheReadTokens: 2048, cacheWriteTokens: 1024 });
    });
  });

  test("a usage key named __proto__ is an unknown field, not a prototype whose counts are inherited", () => {
    const frames = [
      `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}\n\n`,
      `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n`,
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n`,
      `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n`,
      `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"__proto__":{"cache_read_input_tokens":999,"input_tokens":999},"output_tokens":5}}\n\n`,
      `event: message_stop\ndata: {"type":"message_stop"}\n\n`,
    ];
    const usages = decodePieces(codec.createStreamDecoder(), frames).flatMap((part) => (part.type === "usage" ? [part.usage] : []));
    expect(usages.at(-1)).toMatchObject({ promptTokens: 10, completionTokens: 5 });
    expect(usages.at(-1)?.cacheReadTokens ?? 0).toBe(0);
  });
});

describe("anthropic-messages stream decoder: redacted thinking and max_tokens", () => {
  test("emits redacted reasoning, ignores pings and finishes with length", () => {
    replayEverySplit("stream-redacted-max-tokens.sse", (parts) => {
      expect(types(parts)).toEqual(["start", "usage", "redacted_reasoning", "text_delta", "text_delta", "usage", "finish"]);
      expect(parts[2]).toEqual({ type: "redacted_reasoning", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8Zk3", protocol: "anthropic-messages" });
      expect(parts.at(-1)).toEqual({ type: "finish", finish: { reason: "length", raw: "max_tokens" } });
      expect(parts.at(-2)).toMatchObject({ type: "usage", usage: { promptTokens: 25, completionTokens: 16, cacheReadTokens: 0, cacheWriteTokens: 0, webSearchCount: 0 } });
    });
  });
});

describe("anthropic-messages stream decoder: errors and truncation", () => {
  test("an overloaded_error frame becomes an upstream_unavailable error part and nothing follows", () => {
    replayEverySplit("stream-overloaded-error.sse", (parts) => {
      expect(types(parts)).toEqual(["start", "usage", "text_delta", "error"]);
      expect(parts.at(-1)).toEqual({ type: "error", error: { kind: "upstream_unavailable", status: 503, message: "Overloaded" } });
    });
  });

  test("an error frame's nested error.type decides the kind: rate limit 429, billing 402, each with Anthropic's message", () => {
    const frame = (error: Record<string, unknown>) => `event: error\ndata: ${JSON.stringify({ type: "error", error })}\n\n`;
    const decode = (text: string) => decodePieces(codec.createStreamDecoder(), [text]);
    expect(decode(frame({ details: null, type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" }))).toEqual([
      { type: "error", error: { kind: "upstream_rate_limited", status: 429, message: "Number of request tokens has exceeded your per-minute rate limit" } },
    ]);
    expect(decode(frame({ type: "billing_error", message: "Your credit balance is too low" }))).toEqual([
      { type: "error", error: { kind: "upstream_payment_required", status: 402, message: "Your credit balance is too low" } },
    ]);
  });

  test("a stream cut before message_delta ends with an upstream_invalid_response error", () => {
    const text = readFixture("stream-thinking-text-tools.sse");
    const cut = text.slice(0, text.indexOf("event: message_delta"));
    for (const seed of REPLAY_SEEDS) {
      const parts = decodePieces(codec.createStreamDecoder(), splitAtRandom(cut, seed));
      expect(parts.at(-1)).toEqual({ type: "error", error: { kind: "upstream_invalid_response", status: 502, message: "stream ended early" } });
      expect(types(parts)).not.toContain("finish");
    }
  });

  test("a malformed data line is reported instead of throwing", () => {
    const decoder = codec.createStreamDecoder();
    expect(decoder.push({ event: "message_start", data: "{not json" })).toEqual([
      { type: "error", error: { kind: "upstream_invalid_response", status: 502, message: "upstream sent a malformed stream event" } },
    ]);
    expect(decoder.end()).toEqual([]);
  });
});

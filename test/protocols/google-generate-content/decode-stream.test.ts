import { describe, expect, test } from "bun:test";
import type { IrStreamPart } from "../../../src/ir";
import { googleGenerateContentCodec as codec } from "../../../src/protocols/google-generate-content";
import { REPLAY_SEEDS, splitAtRandom } from "../../support/split-chunks";
import { decodePieces, readFixture } from "./stream-replay";

const types = (parts: IrStreamPart[]) => parts.map((part) => part.type);

function replayEverySplit(fixture: string, check: (parts: IrStreamPart[]) => void): void {
  const text = readFixture(fixture);
  check(decodePieces(codec.createStreamDecoder(), [text]));
  for (const seed of REPLAY_SEEDS) check(decodePieces(codec.createStreamDecoder(), splitAtRandom(text, seed)));
}

describe("google-generate-content stream decoder: thoughts, text and two parallel calls", () => {
  test("emits the exact part sequence whatever the chunk boundaries", () => {
    replayEverySplit("stream-thinking-parallel-calls.sse", (parts) => {
      expect(types(parts)).toEqual([
        "start", "reasoning_delta", "usage",
        "reasoning_delta", "usage",
        "text_delta", "usage",
        "tool_call_start", "tool_call_delta", "tool_call_end",
        "tool_call_start", "tool_call_delta", "tool_call_end",
        "usage", "finish",
      ]);
    });
  });

  test("function calls get stable synthesised ids and whole argument objects", () => {
    replayEverySplit("stream-thinking-parallel-calls.sse", (parts) => {
      expect(parts[0]).toEqual({ type: "start", id: "mZ5TaKnPLYqsz7IPpqvT8QE", model: "gemini-2.5-pro" });
      expect(parts.slice(7, 13)).toEqual([
        { type: "tool_call_start", index: 0, id: "call_mZ5TaKnPLYqsz7IPpqvT8QE_0", name: "get_weather" },
        { type: "tool_call_delta", index: 0, argumentsDelta: '{"location":"Paris, France","unit":"celsius"}' },
        { type: "tool_call_end", index: 0 },
        { type: "tool_call_start", index: 1, id: "call_mZ5TaKnPLYqsz7IPpqvT8QE_1", name: "get_time" },
        { type: "tool_call_delta", index: 1, argumentsDelta: '{"timezone":"Europe/Paris"}' },
        { type: "tool_call_end", index: 1 },
      ]);
      const reasoning = parts.flatMap((part) => (part.type === "reasoning_delta" ? [part.text] : [])).join("");
      expect(reasoning).toBe("**Planning the lookups**\n\nThe user wants weather and time for Paris; both calls are independent, so I can issue them together.");
      expect(parts[5]).toEqual({ type: "text_delta", text: "Let me look that up — un instant." });
    });
  });

  test("a STOP finish after function calls is tool_calls, and the last usage counts thoughts as completion", () => {
    replayEverySplit("stream-thinking-parallel-calls.sse", (parts) => {
      expect(parts.at(-1)).toEqual({ type: "finish", finish: { reason: "tool_calls", raw: "STOP" } });
      expect(parts.at(-2)).toMatchObject({
        type: "usage",
        usage: { promptTokens: 1843, completionTokens: 170, reasoningTokens: 112, cacheReadTokens: 1024 },
      });
      expect(parts[2]).toMatchObject({ type: "usage", usage: { promptTokens: 1843, cacheReadTokens: 1024 } });
    });
  });
});

describe("google-generate-content stream decoder: other endings", () => {
  test("MAX_TOKENS finishes with length and a trailing [DONE] is tolerated", () => {
    replayEverySplit("stream-text-max-tokens.sse", (parts) => {
      expect(types(parts)).toEqual(["start", "text_delta", "usage", "text_delta", "usage", "text_delta", "usage", "finish"]);
      expect(parts.at(-1)).toEqual({ type: "finish", finish: { reason: "length", raw: "MAX_TOKENS" } });
      expect(parts.at(-2)).toMatchObject({ usage: { promptTokens: 9, completionTokens: 16 } });
    });
  });

  test("SAFETY finishes with content_filter", () => {
    replayEverySplit("stream-safety.sse", (parts) => {
      expect(types(parts)).toEqual(["start", "text_delta", "usage", "usage", "finish"]);
      expect(parts.at(-1)).toEqual({ type: "finish", finish: { reason: "content_filter", raw: "SAFETY" } });
    });
  });

  test("an error chunk becomes an upstream_unavailable error part", () => {
    replayEverySplit("stream-unavailable-error.sse", (parts) => {
      expect(types(parts)).toEqual(["start", "text_delta", "usage", "error"]);
      expect(parts.at(-1)).toEqual({
        type: "error",
        error: { kind: "upstream_unavailable", status: 503, message: "The model is overloaded. Please try again later." },
      });
    });
  });

  test("a stream that ends without a finishReason reports stream ended early", () => {
    replayEverySplit("stream-truncated.sse", (parts) => {
      expect(types(parts)).toEqual(["start", "text_delta", "usage", "error"]);
      expect(parts.at(-1)).toEqual({ type: "error", error: { kind: "upstream_invalid_response", status: 502, message: "stream ended early" } });
    });
  });
});

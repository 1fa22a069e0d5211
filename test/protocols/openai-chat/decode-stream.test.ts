import { describe, expect, test } from "bun:test";
import type { IrStreamPart } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";
import { REPLAY_SEEDS, splitAtRandom } from "../../support/split-chunks";
import { collect, decodePieces, readFixture, types } from "./replay-sse";

const decodeWhole = (text: string) => decodePieces(openaiChatCodec.createStreamDecoder(), [text]);

/** Decodes the fixture whole, then under every replay seed and byte by byte; all must agree on types and payloads. */
function replayFixture(name: string): IrStreamPart[] {
  const text = readFixture("openai-chat", name);
  const whole = decodeWhole(text);
  const splits = [...REPLAY_SEEDS.map((seed) => splitAtRandom(text, seed)), text.split("")];
  for (const pieces of splits) {
    const parts = decodePieces(openaiChatCodec.createStreamDecoder(), pieces);
    expect(types(parts)).toEqual(types(whole));
    expect(parts).toEqual(whole);
  }
  return whole;
}

describe("openai-chat stream decoder on recorded upstream bytes", () => {
  test("decodes a text stream and takes usage from the trailing usage-only chunk", () => {
    const parts = replayFixture("stream-text-with-usage.sse");
    expect(types(parts)).toEqual(["start", "text_delta", "text_delta", "text_delta", "text_delta", "text_delta", "finish", "usage"]);
    expect(parts[0]).toEqual({ type: "start", id: "chatcmpl-BWyqaJ1HXyP1v0v1Zf0ZgVhDkS4cE", model: "gpt-4o-2024-08-06" });
    expect(collect(parts).text).toBe("Hello! How can I help you today?");
    expect(parts[6]).toEqual({ type: "finish", finish: { reason: "stop", raw: "stop" } });
    const usage = parts[7];
    expect(usage?.type === "usage" && usage.usage).toMatchObject({ promptTokens: 1117, completionTokens: 9, cacheReadTokens: 1024, reasoningTokens: 0 });
  });

  test("decodes parallel tool calls whose id and name come only on the first fragment", () => {
    const parts = replayFixture("stream-parallel-tool-calls.sse");
    expect(types(parts)).toEqual([
      "start",
      "tool_call_start",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call_start",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call_end",
      "tool_call_end",
      "finish",
      "usage",
    ]);
    expect(parts[1]).toEqual({ type: "tool_call_start", index: 0, id: "call_Kc9yOd7h2pXf3kNq1uLz8wRt", name: "get_weather" });
    expect(parts[5]).toEqual({ type: "tool_call_start", index: 1, id: "call_X4mB0sE7vQn2GzJw9hTa6cYp", name: "get_weather" });
    expect(collect(parts).toolArguments).toEqual({ 0: '{"location": "Paris, France"}', 1: '{"location": "Bogotá, Colombia"}' });
    expect(parts[10]).toEqual({ type: "finish", finish: { reason: "tool_calls", raw: "tool_calls" } });
  });

  test("keeps usage that rides the finish chunk together with non-empty choices", () => {
    const parts = replayFixture("stream-compat-reasoning-tools.sse");
    const usage = parts.find((part) => part.type === "usage");
    expect(usage?.type === "usage" && usage.usage).toMatchObject({
      promptTokens: 310,
      completionTokens: 187,
      reasoningTokens: 142,
      cacheReadTokens: 256,
    });
    expect(types(parts).slice(-3)).toEqual(["tool_call_end", "finish", "usage"]);
  });

  test("decodes DeepSeek reasoning_content deltas and buffers tool arguments until the name arrives", () => {
    const parts = replayFixture("stream-compat-reasoning-tools.sse");
    expect(types(parts)).toEqual([
      "start",
      "reasoning_delta",
      "reasoning_delta",
      "reasoning_delta",
      "text_delta",
      "text_delta",
      "tool_call_start",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call_end",
      "finish",
      "usage",
    ]);
    const content = collect(parts);
    expect(content.reasoning).toBe("The user wants the weather in Oslo. I should call the tool.");
    expect(content.text).toBe("Let me check that for you.");
    expect(parts[6]).toEqual({ type: "tool_call_start", index: 0, id: "call_0_5c2d7e1a-9f3b-4c8d-a6e2-1b4f7c9d3e5a", name: "get_weather" });
    // The fragment sent before the name is released with the name chunk's own fragment, right after the start.
    expect(parts[7]).toEqual({ type: "tool_call_delta", index: 0, argumentsDelta: '{"city": "Os' });
    expect(content.toolArguments[0]).toBe('{"city": "Oslo", "unit": "celsius"}');
  });

  test("streams a refusal as text and finishes it as content_filter", () => {
    const parts = replayFixture("stream-refusal.sse");
    expect(types(parts)).toEqual(["start", "text_delta", "text_delta", "finish", "usage"]);
    expect(collect(parts).text).toBe("I'm sorry, I can't assist with that.");
    expect(parts[3]).toEqual({ type: "finish", finish: { reason: "content_filter", raw: "stop" } });
  });

  test("turns a mid-stream error frame into an error part and nothing after it", () => {
    const parts = replayFixture("stream-error-frame.sse");
    expect(types(parts)).toEqual(["start", "text_delta", "text_delta", "error"]);
    const error = parts[3];
    expect(error?.type === "error" && error.error).toMatchObject({
      kind: "upstream_bad_gateway",
      message: "The server had an error while processing your request. Sorry about that!",
    });
  });

  test("reports a stream that ends without finish or [DONE] as cut short", () => {
    const parts = replayFixture("stream-truncated.sse");
    expect(types(parts)).toEqual(["start", "text_delta", "text_delta", "error"]);
    const error = parts[3];
    expect(error?.type === "error" && error.error).toMatchObject({ kind: "upstream_invalid_response", message: "stream ended early", status: 502 });
  });
});

describe("openai-chat stream decoder edge cases", () => {
  const frame = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`;

  test("does not open a tool call whose name never arrives", () => {
    const text =
      frame({ id: "x", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", function: { arguments: "{}" } }] }, finish_reason: null }] }) +
      frame({ id: "x", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }) +
      "data: [DONE]\n\n";
    expect(types(decodeWhole(text))).toEqual(["start", "finish"]);
  });

  test("an error frame's quota and rate-limit errors keep their kind, status and message", () => {
    const quota = { error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } };
    expect(decodeWhole(frame(quota))).toEqual([{ type: "error", error: { kind: "upstream_payment_required", status: 402, message: "You exceeded your current quota" } }]);
    const limited = { error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" } };
    expect(decodeWhole(frame(limited))).toEqual([{ type: "error", error: { kind: "upstream_rate_limited", status: 429, message: "Rate limit reached" } }]);
  });

  test("an error frame whose code is an HTTP status is read as that status", () => {
    // Compatible providers and routers put the upstream's status in `code` (a 429 from a router; a 400 a provider refused).
    const routed = { error: { code: 429, message: "Provider returned error", metadata: {} } };
    expect(decodeWhole(frame(routed))).toEqual([{ type: "error", error: { kind: "upstream_rate_limited", status: 429, message: "Provider returned error" } }]);
    const refused = { error: { message: "bad request", type: "provider_error", param: null, code: 400 } };
    expect(decodeWhole(frame(refused))[0]).toMatchObject({ type: "error", error: { kind: "invalid_request", status: 400, message: "bad request" } });
  });

  test("treats [DONE] without a finish reason as a normal stop rather than an error", () => {
    const text = frame({ id: "x", choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }] }) + "data: [DONE]\n\n";
    const parts = decodeWhole(text);
    expect(types(parts)).toEqual(["start", "text_delta", "finish"]);
  });

  test("reports a frame that is not JSON as an invalid upstream response", () => {
    const parts = decodeWhole("data: {not json\n\n");
    expect(parts).toHaveLength(1);
    expect(parts[0]?.type === "error" && parts[0].error.kind).toBe("upstream_invalid_response");
  });

  test("maps a rate-limit error frame to upstream_rate_limited", () => {
    const parts = decodeWhole(frame({ error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }) + "data: [DONE]\n\n");
    expect(parts[0]?.type === "error" && parts[0].error.kind).toBe("upstream_rate_limited");
  });
});

import { describe, expect, test } from "bun:test";
import type { IrStreamPart } from "../../../src/ir";
import { openaiResponsesCodec } from "../../../src/protocols/openai-responses";
import { codecFor } from "../../../src/translation/codec-registry";
import { REPLAY_SEEDS, splitAtRandom } from "../../support/split-chunks";
import { collect, decodePieces, readFixture, types } from "../openai-chat/replay-sse";

const decodeWhole = (text: string) => decodePieces(openaiResponsesCodec.createStreamDecoder(), [text]);

function replayFixture(name: string): IrStreamPart[] {
  const text = readFixture("openai-responses", name);
  const whole = decodeWhole(text);
  for (const pieces of [...REPLAY_SEEDS.map((seed) => splitAtRandom(text, seed)), text.split("")]) {
    const parts = decodePieces(openaiResponsesCodec.createStreamDecoder(), pieces);
    expect(types(parts)).toEqual(types(whole));
    expect(parts).toEqual(whole);
  }
  return whole;
}

describe("openai-responses stream decoder on recorded upstream bytes", () => {
  test("decodes reasoning summary parts and message text, with usage from response.completed", () => {
    const parts = replayFixture("stream-reasoning-text.sse");
    expect(types(parts)).toEqual([
      "start",
      "reasoning_delta",
      "reasoning_delta",
      "reasoning_delta",
      "reasoning_delta",
      "reasoning_delta",
      "reasoning_delta",
      "text_delta",
      "text_delta",
      "text_delta",
      "finish",
      "usage",
    ]);
    expect(parts[0]).toEqual({ type: "start", id: "resp_6823a1f0c5d88191b2f1e0d3c4b5a69708e2f3a1b4c5d6e7", model: "o4-mini-2025-04-16" });
    const content = collect(parts);
    expect(content.reasoning).toBe("**Counting letters**\n\nThe word strawberry has three r's.\n\n**Answer**\n\nReply briefly.");
    expect(content.text).toBe("There are **three** r's in “strawberry”.");
    expect(parts[10]).toEqual({ type: "finish", finish: { reason: "stop", raw: "completed" } });
    const usage = parts[11];
    expect(usage?.type === "usage" && usage.usage).toMatchObject({ promptTokens: 1320, completionTokens: 412, reasoningTokens: 384, cacheReadTokens: 1152 });
  });

  test("decodes function calls item by item, keyed by call_id, and finishes as tool_calls", () => {
    const parts = replayFixture("stream-function-calls.sse");
    expect(types(parts)).toEqual([
      "start",
      "tool_call_start",
      ...Array(6).fill("tool_call_delta"),
      "tool_call_end",
      "tool_call_start",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call_end",
      "finish",
      "usage",
    ]);
    expect(parts[1]).toEqual({ type: "tool_call_start", index: 0, id: "call_Qm3xT8rV1nB6kZ2wL9pYc4Hd", name: "get_weather" });
    expect(parts[9]).toEqual({ type: "tool_call_start", index: 1, id: "call_Wd5uJ2fG7hK0lP3sN6qRe9Tb", name: "get_weather" });
    expect(collect(parts).toolArguments).toEqual({ 0: '{"location":"Paris, France"}', 1: '{"location":"Tokyo, Japan"}' });
    expect(parts.at(-2)).toEqual({ type: "finish", finish: { reason: "tool_calls", raw: "completed" } });
  });

  test("maps response.incomplete for max_output_tokens to a length finish and keeps its usage", () => {
    const parts = replayFixture("stream-incomplete.sse");
    expect(types(parts)).toEqual(["start", "text_delta", "text_delta", "text_delta", "finish", "usage"]);
    expect(parts[4]).toEqual({ type: "finish", finish: { reason: "length", raw: "max_output_tokens" } });
    const usage = parts[5];
    expect(usage?.type === "usage" && usage.usage.completionTokens).toBe(16);
  });

  test("turns response.failed into an error part carrying the upstream message", () => {
    const parts = replayFixture("stream-failed.sse");
    expect(types(parts)).toEqual(["start", "text_delta", "error"]);
    const error = parts[2];
    expect(error?.type === "error" && error.error).toMatchObject({ kind: "upstream_bad_gateway", message: "The model failed to generate a response." });
  });

  test("reads a recorded quota error from the error event's nested error: the client gets the 402 and OpenAI's message", () => {
    // OpenAI's stream: response.created, response.in_progress, then `event: error` with the
    // error under `error`, then response.failed (which the decoder no longer needs).
    const parts = replayFixture("stream-openai-quota-error.sse");
    expect(types(parts)).toEqual(["start", "error"]);
    const error = parts[1]?.type === "error" ? parts[1].error : undefined;
    expect(error).toMatchObject({ kind: "upstream_payment_required", status: 402 });
    expect(error?.message).toStartWith("You exceeded your current quota, please check your plan and billing details.");
    for (const client of ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"] as const) {
      const rendered = codecFor(client).encodeError(error!);
      expect(rendered.status).toBe(402);
      expect(JSON.stringify(rendered.body)).toContain("You exceeded your current quota");
    }
  });

  test("reports a stream that ends without a terminal event as cut short", () => {
    const parts = replayFixture("stream-truncated.sse");
    expect(types(parts)).toEqual(["start", "text_delta", "error"]);
    const error = parts[2];
    expect(error?.type === "error" && error.error).toMatchObject({ kind: "upstream_invalid_response", message: "stream ended early" });
  });
});

describe("openai-responses stream decoder edge cases", () => {
  const event = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

  test("buffers argument deltas until the function call item names its function", () => {
    const text =
      event({ type: "response.created", response: { id: "r", model: "m", status: "in_progress", output: [] } }) +
      event({ type: "response.output_item.added", output_index: 0, item: { id: "fc_1", type: "function_call", call_id: "call_1", arguments: "" } }) +
      event({ type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 0, delta: '{"a":' }) +
      event({ type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 0, delta: "1}" }) +
      event({ type: "response.output_item.done", output_index: 0, item: { id: "fc_1", type: "function_call", call_id: "call_1", name: "f", arguments: '{"a":1}' } }) +
      event({ type: "response.completed", response: { id: "r", status: "completed", output: [] } });
    expect(decodeWhole(text)).toEqual([
      { type: "start", id: "r", model: "m" },
      { type: "tool_call_start", index: 0, id: "call_1", name: "f" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '{"a":1}' },
      { type: "tool_call_end", index: 0 },
      { type: "finish", finish: { reason: "tool_calls", raw: "completed" } },
    ]);
  });

  test("takes arguments from the done event when no deltas were streamed", () => {
    const text =
      event({ type: "response.output_item.added", output_index: 0, item: { id: "fc_1", type: "function_call", call_id: "call_1", name: "f", arguments: "" } }) +
      event({ type: "response.function_call_arguments.done", item_id: "fc_1", output_index: 0, arguments: "{}" }) +
      event({ type: "response.completed", response: { status: "completed", output: [] } });
    expect(collect(decodeWhole(text)).toolArguments).toEqual({ 0: "{}" });
  });

  test("maps a top-level error event, such as a rate limit, to an error part", () => {
    const parts = decodeWhole(event({ type: "error", code: "rate_limit_exceeded", message: "Rate limit reached", param: null, sequence_number: 1 }));
    expect(parts).toEqual([{ type: "error", error: { kind: "upstream_rate_limited", status: 429, message: "Rate limit reached" } }]);
  });

  test("reads response.failed's own error when no error event came before it", () => {
    const failed = { type: "response.failed", response: { status: "failed", error: { code: "rate_limit_exceeded", message: "Slow down" }, usage: null } };
    expect(decodeWhole(event(failed)).at(-1)).toEqual({ type: "error", error: { kind: "upstream_rate_limited", status: 429, message: "Slow down" } });
  });

  test("streams a refusal as text that finishes as content_filter", () => {
    const text =
      event({ type: "response.refusal.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "No." }) +
      event({ type: "response.completed", response: { status: "completed", output: [] } });
    expect(decodeWhole(text).slice(1)).toEqual([
      { type: "text_delta", text: "No." },
      { type: "finish", finish: { reason: "content_filter", raw: "completed" } },
    ]);
  });
});

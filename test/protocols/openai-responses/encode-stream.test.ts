import { describe, expect, test } from "bun:test";
import { irError, type IrStreamPart } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";
import { openaiResponsesCodec } from "../../../src/protocols/openai-responses";
import { decodePieces, encodeAll, parseEvents, readFixture, testContext } from "../openai-chat/replay-sse";

const usage = { promptTokens: 120, completionTokens: 30, reasoningTokens: 10, cacheReadTokens: 64 };

const turn: IrStreamPart[] = [
  { type: "start", id: "chatcmpl-1", model: "deepseek-reasoner" },
  { type: "reasoning_delta", text: "Plan" },
  { type: "reasoning_delta", text: " it." },
  { type: "text_delta", text: "Let me " },
  { type: "text_delta", text: "check." },
  { type: "tool_call_start", index: 0, id: "call_1", name: "get_weather" },
  { type: "tool_call_delta", index: 0, argumentsDelta: '{"city":' },
  { type: "tool_call_delta", index: 0, argumentsDelta: '"Oslo"}' },
  { type: "tool_call_end", index: 0 },
  { type: "finish", finish: { reason: "tool_calls", raw: "tool_calls" } },
  // Chat upstreams send usage after the finish: it must still reach the terminal event.
  { type: "usage", usage },
];

function encode(parts: IrStreamPart[]): string {
  return encodeAll(openaiResponsesCodec.createStreamEncoder(testContext(), { includeUsage: false }), parts);
}

describe("openai-responses stream encoder", () => {
  test("emits the full event sequence in order, items never interleaving", () => {
    const events = parseEvents(encode(turn));
    expect(events.map((event) => event.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });

  test("numbers events from 0, repeats the type in the data, and ends without [DONE]", () => {
    const out = encode(turn);
    const events = parseEvents(out);
    events.forEach((event, index) => {
      const data = JSON.parse(event.data) as { type: string; sequence_number: number };
      expect(data.type).toBe(event.event ?? "");
      expect(data.sequence_number).toBe(index);
    });
    expect(out).not.toContain("[DONE]");
  });

  test("ends with response.completed listing every completed item and the buffered usage", () => {
    const events = parseEvents(encode(turn));
    const terminal = JSON.parse(events.at(-1)?.data ?? "{}") as { response: Record<string, unknown> };
    expect(terminal.response).toEqual({
      id: "brc_cmVxXzAxSFpYM0s5UTQ",
      object: "response",
      created_at: 1747150000,
      status: "completed",
      model: "openai/gpt-4.1-mini",
      output: [
        { id: "rs_0", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "Plan it." }], status: "completed" },
        { id: "msg_1", type: "message", status: "completed", content: [{ type: "output_text", annotations: [], text: "Let me check." }], role: "assistant" },
        { id: "fc_2", type: "function_call", status: "completed", arguments: '{"city":"Oslo"}', call_id: "call_1", name: "get_weather" },
      ],
      usage: { input_tokens: 120, input_tokens_details: { cached_tokens: 64 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 10 }, total_tokens: 150 },
    });
  });

  test("opens a function call item with its call_id and name", () => {
    const added = parseEvents(encode(turn)).filter((event) => event.event === "response.output_item.added");
    expect(JSON.parse(added[2]?.data ?? "{}")).toMatchObject({
      output_index: 2,
      item: { id: "fc_2", type: "function_call", status: "in_progress", arguments: "", call_id: "call_1", name: "get_weather" },
    });
  });

  test("ends with response.incomplete for a length finish", () => {
    const events = parseEvents(encode([{ type: "text_delta", text: "In the" }, { type: "finish", finish: { reason: "length" } }]));
    expect(events.at(-1)?.event).toBe("response.incomplete");
    expect(JSON.parse(events.at(-1)?.data ?? "{}").response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  test("ends with response.failed on an error part, keeping completed items and usage", () => {
    const encoder = openaiResponsesCodec.createStreamEncoder(testContext(), { includeUsage: false });
    let out = encoder.push({ type: "reasoning_delta", text: "x" });
    out += encoder.push({ type: "text_delta", text: "partial" });
    out += encoder.push({ type: "usage", usage });
    out += encoder.push({ type: "error", error: irError("upstream_bad_gateway", "upstream request failed") });
    out += encoder.push({ type: "text_delta", text: "ignored" });
    out += encoder.end();
    const events = parseEvents(out);
    expect(events.at(-1)?.event).toBe("response.failed");
    const failed = JSON.parse(events.at(-1)?.data ?? "{}").response;
    expect(failed.status).toBe("failed");
    expect(failed.error).toEqual({ code: "upstream_bad_gateway", message: "upstream request failed" });
    expect(failed.output.map((item: { type: string }) => item.type)).toEqual(["reasoning"]);
    expect(failed.usage.input_tokens).toBe(120);
    expect(events.filter((event) => event.event === "response.failed")).toHaveLength(1);
  });

  test("still sends a terminal response.failed when the stream ends with neither finish nor error", () => {
    const events = parseEvents(encode([{ type: "text_delta", text: "hi" }]));
    expect(events.at(-1)?.event).toBe("response.failed");
  });

  test("round-trips: encoder output decodes back to the same content, finish and usage", () => {
    const decoded = decodePieces(openaiResponsesCodec.createStreamDecoder(), [encode(turn)]);
    expect(decoded).toEqual([
      { type: "start", id: "brc_cmVxXzAxSFpYM0s5UTQ", model: "openai/gpt-4.1-mini" },
      { type: "reasoning_delta", text: "Plan" },
      { type: "reasoning_delta", text: " it." },
      { type: "text_delta", text: "Let me " },
      { type: "text_delta", text: "check." },
      { type: "tool_call_start", index: 0, id: "call_1", name: "get_weather" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '{"city":' },
      { type: "tool_call_delta", index: 0, argumentsDelta: '"Oslo"}' },
      { type: "tool_call_end", index: 0 },
      { type: "finish", finish: { reason: "tool_calls", raw: "completed" } },
      { type: "usage", usage: { ...usage, raw: expect.any(Object) } },
    ]);
  });

  test("translates a recorded chat upstream stream with usage on the finish chunk into a Responses stream with usage", () => {
    const upstream = decodePieces(openaiChatCodec.createStreamDecoder(), [readFixture("openai-chat", "stream-compat-reasoning-tools.sse")]);
    const events = parseEvents(encode(upstream));
    const terminal = JSON.parse(events.at(-1)?.data ?? "{}").response;
    expect(events.at(-1)?.event).toBe("response.completed");
    expect(terminal.usage).toEqual({
      input_tokens: 310,
      input_tokens_details: { cached_tokens: 256 },
      output_tokens: 187,
      output_tokens_details: { reasoning_tokens: 142 },
      total_tokens: 497,
    });
    expect(terminal.output.map((item: { type: string }) => item.type)).toEqual(["reasoning", "message", "function_call"]);
  });
});

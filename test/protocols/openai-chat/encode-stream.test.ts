import { describe, expect, test } from "bun:test";
import { irError, type IrStreamPart } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";
import { decodePieces, encodeAll, parseEvents, readFixture, testContext } from "./replay-sse";

const usage = { promptTokens: 50, completionTokens: 20, reasoningTokens: 5, cacheReadTokens: 32 };

const toolTurn: IrStreamPart[] = [
  { type: "start", id: "msg_01", model: "claude-sonnet-4-5" },
  { type: "reasoning_delta", text: "Need weather." },
  { type: "text_delta", text: "Checking" },
  { type: "tool_call_start", index: 0, id: "toolu_01A", name: "get_weather" },
  { type: "tool_call_delta", index: 0, argumentsDelta: '{"city":' },
  { type: "tool_call_delta", index: 0, argumentsDelta: '"Oslo"}' },
  { type: "tool_call_end", index: 0 },
  { type: "usage", usage },
  // Anthropic's end_turn for a mixed text + tool turn: the client must still see tool_calls.
  { type: "finish", finish: { reason: "stop", raw: "end_turn" } },
];

function chunks(text: string): unknown[] {
  return parseEvents(text).map((event) => (event.data === "[DONE]" ? "[DONE]" : JSON.parse(event.data)));
}

describe("openai-chat stream encoder", () => {
  test("emits role first, then reasoning, text, tool opening and argument chunks, finish, usage chunk and [DONE]", () => {
    const out = encodeAll(openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: true }), toolTurn);
    const head = { id: "req_01HZX3K9Q4", object: "chat.completion.chunk", created: 1747150000, model: "openai/gpt-4.1-mini" };
    const choice = (delta: unknown, finish_reason: string | null = null) => ({ ...head, choices: [{ index: 0, delta, finish_reason }] });
    expect(chunks(out)).toEqual([
      choice({ role: "assistant", reasoning_content: "Need weather." }),
      choice({ content: "Checking" }),
      choice({ tool_calls: [{ index: 0, id: "toolu_01A", type: "function", function: { name: "get_weather", arguments: "" } }] }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
      choice({}, "tool_calls"),
      {
        ...head,
        choices: [],
        usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70, prompt_tokens_details: { cached_tokens: 32 }, completion_tokens_details: { reasoning_tokens: 5 } },
      },
      "[DONE]",
    ]);
  });

  test("leaves the usage chunk out when the client did not ask for it", () => {
    const out = encodeAll(openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: false }), toolTurn);
    const parsed = chunks(out);
    expect(parsed.some((chunk) => typeof chunk === "object" && chunk !== null && "usage" in chunk)).toBe(false);
    expect(parsed.at(-1)).toBe("[DONE]");
  });

  test("puts role on the first chunk even when the first thing sent is a tool call", () => {
    const out = encodeAll(openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: false }), toolTurn.slice(3));
    expect(chunks(out)[0]).toMatchObject({ choices: [{ delta: { role: "assistant", tool_calls: [{ index: 0, id: "toolu_01A" }] } }] });
  });

  test("renders an error part as an OpenAI error frame followed by [DONE], and nothing after it", () => {
    const encoder = openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: true });
    let out = encoder.push({ type: "text_delta", text: "Hel" });
    out += encoder.push({ type: "error", error: irError("upstream_timeout", "upstream timed out after 60s") });
    out += encoder.push({ type: "text_delta", text: "lo" });
    out += encoder.end();
    expect(out.endsWith('data: {"error":{"message":"upstream timed out after 60s","type":"upstream_error","code":"upstream_timeout"}}\n\ndata: [DONE]\n\n')).toBe(true);
    expect(chunks(out)).toHaveLength(3);
  });

  test("still terminates with a finish chunk and [DONE] when no finish part arrived", () => {
    const encoder = openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: false });
    const out = encoder.push({ type: "text_delta", text: "hi" }) + encoder.end();
    expect(chunks(out).slice(-2)).toEqual([expect.objectContaining({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }), "[DONE]"]);
  });

  test("round-trips: encoder output decodes back to the same parts", () => {
    const out = encodeAll(openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: true }), toolTurn);
    const decoded = decodePieces(openaiChatCodec.createStreamDecoder(), [out]);
    expect(decoded).toEqual([
      { type: "start", id: "req_01HZX3K9Q4", model: "openai/gpt-4.1-mini" },
      { type: "reasoning_delta", text: "Need weather." },
      { type: "text_delta", text: "Checking" },
      { type: "tool_call_start", index: 0, id: "toolu_01A", name: "get_weather" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '{"city":' },
      { type: "tool_call_delta", index: 0, argumentsDelta: '"Oslo"}' },
      { type: "tool_call_end", index: 0 },
      { type: "finish", finish: { reason: "tool_calls", raw: "tool_calls" } },
      { type: "usage", usage: { ...usage, raw: expect.any(Object) } },
    ]);
  });

  test("re-encodes a recorded upstream stream into a client stream with the same content", () => {
    const upstream = decodePieces(openaiChatCodec.createStreamDecoder(), [readFixture("openai-chat", "stream-parallel-tool-calls.sse")]);
    const out = encodeAll(openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: true }), upstream);
    const again = decodePieces(openaiChatCodec.createStreamDecoder(), [out]);
    const strip = (parts: IrStreamPart[]) => parts.filter((part) => part.type !== "start" && part.type !== "usage");
    expect(strip(again)).toEqual(strip(upstream));
  });
});

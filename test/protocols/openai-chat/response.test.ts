import { describe, expect, test } from "bun:test";
import { IrDecodeError, type IrResponse } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";
import { readJsonFixture, testContext } from "./replay-sse";

const fixture = (name: string) => readJsonFixture("openai-chat", name);

describe("openai-chat decodeResponse", () => {
  test("reads text, the finish reason and usage with cached tokens counted inside prompt tokens", () => {
    const response = openaiChatCodec.decodeResponse(fixture("response-text.json"));
    expect(response.content).toEqual([{ type: "text", text: "The capital of France is Paris." }]);
    expect(response.finish).toEqual({ reason: "stop", raw: "stop" });
    expect(response.model).toBe("gpt-4o-2024-08-06");
    expect(response.usage).toMatchObject({ promptTokens: 1230, completionTokens: 8, cacheReadTokens: 1152, reasoningTokens: 0 });
    expect(response.usage?.raw).toMatchObject({ total_tokens: 1238 });
  });

  test("reads parallel tool calls and reasoning token counts", () => {
    const response = openaiChatCodec.decodeResponse(fixture("response-tool-calls.json"));
    expect(response.content).toEqual([
      { type: "tool_call", id: "call_a1B2c3D4e5F6g7H8i9J0kLmN", name: "get_weather", arguments: '{"location":"Paris, France"}' },
      { type: "tool_call", id: "call_Z9y8X7w6V5u4T3s2R1q0PoNm", name: "get_time", arguments: '{"timezone":"Europe/Paris"}' },
    ]);
    expect(response.finish).toEqual({ reason: "tool_calls", raw: "tool_calls" });
    expect(response.usage).toMatchObject({ promptTokens: 140, completionTokens: 250, reasoningTokens: 192, cacheReadTokens: 0 });
  });

  test("turns a refusal into text that finishes as content_filter, keeping the raw reason", () => {
    const response = openaiChatCodec.decodeResponse(fixture("response-refusal.json"));
    expect(response.content).toEqual([{ type: "text", text: "I'm sorry, I can't assist with that request." }]);
    expect(response.finish).toEqual({ reason: "content_filter", raw: "stop" });
  });

  test("reads DeepSeek reasoning_content as a reasoning part before the text", () => {
    const response = openaiChatCodec.decodeResponse(fixture("response-deepseek-reasoning.json"));
    expect(response.content.map((part) => part.type)).toEqual(["reasoning", "text"]);
    expect(response.usage).toMatchObject({ promptTokens: 18, completionTokens: 96, reasoningTokens: 83, cacheReadTokens: 0 });
  });

  test("maps unknown finish reasons to other and keeps the native string", () => {
    const body = { choices: [{ index: 0, message: { role: "assistant", content: "x" }, finish_reason: "eos" }] };
    expect(openaiChatCodec.decodeResponse(body).finish).toEqual({ reason: "other", raw: "eos" });
  });

  test("a finish reason named by an Object.prototype member is unknown too (other, raw kept)", () => {
    for (const raw of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      const body = { choices: [{ index: 0, message: { role: "assistant", content: "x" }, finish_reason: raw }] };
      expect({ raw, finish: openaiChatCodec.decodeResponse(body).finish }).toEqual({ raw, finish: { reason: "other", raw } });
    }
  });

  test("leaves usage undefined, not zero, when the upstream reports none", () => {
    const body = { choices: [{ index: 0, message: { role: "assistant", content: "x" }, finish_reason: "length" }] };
    const response = openaiChatCodec.decodeResponse(body);
    expect(response.usage).toBeUndefined();
    expect(response.finish.reason).toBe("length");
  });

  test("rejects a body that is not a chat completion", () => {
    expect(() => openaiChatCodec.decodeResponse({ object: "response", output: [] })).toThrow(IrDecodeError);
  });
});

describe("openai-chat encodeResponse", () => {
  const usage = { promptTokens: 100, completionTokens: 40, reasoningTokens: 12, cacheReadTokens: 64 };

  test("renders the client body with the request id, requested model, created time and full usage", () => {
    const response: IrResponse = {
      model: "gpt-4.1-mini-2025-04-14",
      content: [
        { type: "reasoning", text: "Think." },
        { type: "text", text: "Answer." },
      ],
      finish: { reason: "stop" },
      usage,
    };
    expect(openaiChatCodec.encodeResponse(response, testContext()).value).toEqual({
      id: "req_01HZX3K9Q4",
      object: "chat.completion",
      created: 1747150000,
      model: "openai/gpt-4.1-mini",
      choices: [{ index: 0, message: { role: "assistant", content: "Answer.", reasoning_content: "Think." }, finish_reason: "stop" }],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 40,
        total_tokens: 140,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
    });
  });

  test("sends an empty string, never null, as content of a tool-call-only turn and forces finish_reason tool_calls", () => {
    const response: IrResponse = {
      content: [{ type: "tool_call", id: "toolu_01", name: "get_weather", arguments: '{"city":"Oslo"}' }],
      // e.g. a Gemini upstream, which has no tool-call stop reason
      finish: { reason: "stop", raw: "STOP" },
    };
    const body = openaiChatCodec.encodeResponse(response, testContext()).value;
    expect(body.choices).toEqual([
      {
        index: 0,
        message: {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "toolu_01", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
        },
        finish_reason: "tool_calls",
      },
    ]);
    expect(body.usage).toBeUndefined();
  });

  test("maps canonical finish reasons to chat values and passes other raw reasons through", () => {
    const finishOf = (finish: IrResponse["finish"]) => {
      const body = openaiChatCodec.encodeResponse({ content: [{ type: "text", text: "x" }], finish }, testContext()).value;
      return (body.choices as Array<{ finish_reason: string }>)[0]?.finish_reason;
    };
    expect(finishOf({ reason: "length", raw: "max_tokens" })).toBe("length");
    expect(finishOf({ reason: "content_filter", raw: "SAFETY" })).toBe("content_filter");
    expect(finishOf({ reason: "other", raw: "pause_turn" })).toBe("pause_turn");
  });

  test("round-trips a decoded upstream body through encodeResponse", () => {
    const decoded = openaiChatCodec.decodeResponse(fixture("response-tool-calls.json"));
    const again = openaiChatCodec.decodeResponse(openaiChatCodec.encodeResponse(decoded, testContext()).value);
    expect(again.content).toEqual(decoded.content);
    expect(again.finish).toEqual(decoded.finish);
    expect({ ...again.usage, raw: undefined }).toEqual({ ...decoded.usage, raw: undefined });
  });
});

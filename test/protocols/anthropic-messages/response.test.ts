import { describe, expect, test } from "bun:test";
import { IrDecodeError, type IrResponse } from "../../../src/ir";
import { anthropicMessagesCodec as codec } from "../../../src/protocols/anthropic-messages";
import { CONTEXT, readJsonFixture } from "./stream-replay";

describe("anthropic-messages decodeResponse", () => {
  const response = codec.decodeResponse(readJsonFixture("response-thinking-tool-use.json"));

  test("thinking, text and tool_use blocks become IR content in order", () => {
    expect(response.content).toEqual([
      {
        type: "reasoning",
        text: "The user asked for the weather in San Francisco; I need the get_weather tool.",
        signature: "EuYBCkQYAiJAgCs1le6/Pol5Z4/JMomVOouGrWdhYNsH3ukzUECbB6iWrSQtsQuRHJID6lWV0wBAJgWn8ANQOQ7b2zPj6EUkBXVR7g",
        signatureProtocol: "anthropic-messages",
      },
      { type: "text", text: "I'll look up the current weather in San Francisco." },
      { type: "tool_call", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", arguments: '{"location":"San Francisco, CA","unit":"fahrenheit"}' },
    ]);
    expect(response.id).toBe("msg_01Aq9w938a90dw8q");
    expect(response.model).toBe("claude-sonnet-4-5-20250929");
  });

  test("tool_use stop reason is tool_calls with the raw value kept", () => {
    expect(response.finish).toEqual({ reason: "tool_calls", raw: "tool_use" });
  });

  test("input_tokens is cache-exclusive, so the prompt adds cache reads and writes", () => {
    expect(response.usage).toMatchObject({
      promptTokens: 2095 + 1500 + 3000,
      completionTokens: 503,
      cacheReadTokens: 3000,
      cacheWriteTokens: 1500,
      webSearchCount: 2,
    });
    expect(response.usage?.reasoningTokens).toBeUndefined();
    expect(response.usage?.raw).toEqual(readJsonFixture("response-thinking-tool-use.json").usage);
  });

  test("stop reasons map to the IR finish reasons, unknown values to other", () => {
    const finish = (stop_reason: string) =>
      codec.decodeResponse({ type: "message", content: [], stop_reason, usage: { input_tokens: 1, output_tokens: 1 } }).finish;
    expect(finish("end_turn")).toEqual({ reason: "stop", raw: "end_turn" });
    expect(finish("stop_sequence")).toEqual({ reason: "stop", raw: "stop_sequence" });
    expect(finish("max_tokens")).toEqual({ reason: "length", raw: "max_tokens" });
    expect(finish("refusal")).toEqual({ reason: "content_filter", raw: "refusal" });
    expect(finish("pause_turn")).toEqual({ reason: "other", raw: "pause_turn" });
    expect(finish("brand_new_reason")).toEqual({ reason: "other", raw: "brand_new_reason" });
  });

  test("a body that is not an Anthropic message is rejected", () => {
    expect(() => codec.decodeResponse({ choices: [] })).toThrow(IrDecodeError);
  });
});

describe("anthropic-messages encodeResponse", () => {
  const base: IrResponse = {
    content: [
      { type: "reasoning", text: "signed", signature: "sig", signatureProtocol: "anthropic-messages" },
      { type: "reasoning", text: "from openai" },
      { type: "text", text: "" },
      { type: "text", text: "Calling the tool." },
      { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"location":"Paris"}' },
    ],
    // An OpenAI-compatible upstream can say "stop" on a mixed text + tool turn.
    finish: { reason: "stop", raw: "stop" },
    usage: { promptTokens: 1000, completionTokens: 50, cacheReadTokens: 600, cacheWriteTokens: 100 },
  };

  test("renders a Messages body with stable id, signed thinking only, and no empty text", () => {
    expect(codec.encodeResponse(base, CONTEXT).value).toEqual({
      id: "msg_req_7f3a",
      type: "message",
      role: "assistant",
      model: "anthropic/claude-sonnet-4.5",
      content: [
        { type: "thinking", thinking: "signed", signature: "sig" },
        { type: "text", text: "Calling the tool." },
        { type: "tool_use", id: "call_1", name: "get_weather", input: { location: "Paris" } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 300, output_tokens: 50, cache_read_input_tokens: 600, cache_creation_input_tokens: 100 },
    });
  });

  test("a raw Anthropic stop reason with the same meaning is kept for exact round trips", () => {
    const body = codec.encodeResponse({ content: [{ type: "text", text: "x" }], finish: { reason: "stop", raw: "stop_sequence" } }, CONTEXT).value;
    expect(body.stop_reason).toBe("stop_sequence");
    const foreign = codec.encodeResponse({ content: [{ type: "text", text: "x" }], finish: { reason: "length", raw: "MAX_TOKENS" } }, CONTEXT).value;
    expect(foreign.stop_reason).toBe("max_tokens");
    const filtered = codec.encodeResponse({ content: [], finish: { reason: "content_filter", raw: "SAFETY" } }, CONTEXT).value;
    expect(filtered.stop_reason).toBe("refusal");
  });

  test("usage without cache counters renders input_tokens as the whole prompt and omits cache fields", () => {
    const body = codec.encodeResponse({ content: [], finish: { reason: "stop" }, usage: { promptTokens: 42, completionTokens: 7 } }, CONTEXT).value;
    expect(body.usage).toEqual({ input_tokens: 42, output_tokens: 7 });
  });

  test("an Anthropic response survives decode then encode with its signature, usage buckets and search count", () => {
    const fixture = readJsonFixture("response-thinking-tool-use.json");
    const body = codec.encodeResponse(codec.decodeResponse(fixture), CONTEXT).value;
    expect(body.content).toEqual(fixture.content);
    expect(body.stop_reason).toBe("tool_use");
    expect(body.usage).toEqual({ input_tokens: 2095, output_tokens: 503, cache_read_input_tokens: 3000, cache_creation_input_tokens: 1500, server_tool_use: { web_search_requests: 2 } });
  });
});

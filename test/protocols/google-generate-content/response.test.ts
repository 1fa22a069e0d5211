import { describe, expect, test } from "bun:test";
import { IrDecodeError, type IrResponse } from "../../../src/ir";
import { googleGenerateContentCodec as codec } from "../../../src/protocols/google-generate-content";
import { CONTEXT, readJsonFixture } from "./stream-replay";

describe("google-generate-content decodeResponse", () => {
  const response = codec.decodeResponse(readJsonFixture("response-parallel-calls.json"));

  test("thought and functionCall parts become reasoning and tool calls with ids derived from the response id", () => {
    expect(response.content).toEqual([
      { type: "reasoning", text: "The user wants both values; call both functions." },
      {
        type: "tool_call",
        id: "call_mZ5TaKnPLYqsz7IPpqvT8QE_0",
        name: "get_weather",
        arguments: '{"location":"Paris, France"}',
        signature: "CiQB0e2Kb7xF3mQ9vZ2pL8sT4wR6yN1uK5hJ3gD7fA2cE9bX0",
      },
      { type: "tool_call", id: "call_mZ5TaKnPLYqsz7IPpqvT8QE_1", name: "get_time", arguments: '{"timezone":"Europe/Paris"}' },
    ]);
    expect(response.id).toBe("mZ5TaKnPLYqsz7IPpqvT8QE");
    expect(response.model).toBe("gemini-2.5-pro");
  });

  test("STOP with a function call is a tool_calls finish (Gemini has no tool stop reason)", () => {
    expect(response.finish).toEqual({ reason: "tool_calls", raw: "STOP" });
  });

  test("completion adds thoughts to candidates; the cached prompt share is a cache read", () => {
    expect(response.usage).toMatchObject({ promptTokens: 1843, completionTokens: 58 + 112, reasoningTokens: 112, cacheReadTokens: 1024 });
    expect(response.usage?.cacheWriteTokens).toBeUndefined();
  });

  test("a plain text answer finishes with stop and unknown reasoning stays undefined", () => {
    const text = codec.decodeResponse(readJsonFixture("response-text.json"));
    expect(text.content).toEqual([{ type: "text", text: "Paris is 18°C with light rain." }]);
    expect(text.finish).toEqual({ reason: "stop", raw: "STOP" });
    expect(text.usage).toMatchObject({ promptTokens: 2107, completionTokens: 11 });
    expect(text.usage?.reasoningTokens).toBeUndefined();
  });

  test("a blocked prompt without candidates is a content_filter finish", () => {
    const blocked = codec.decodeResponse(readJsonFixture("response-prompt-blocked.json"));
    expect(blocked.content).toEqual([]);
    expect(blocked.finish).toEqual({ reason: "content_filter", raw: "PROHIBITED_CONTENT" });
  });

  test("finish reasons map to the IR finish reasons, unknown values to other with the raw value kept", () => {
    const finish = (finishReason: string) =>
      codec.decodeResponse({ candidates: [{ content: { role: "model", parts: [{ text: "x" }] }, finishReason }] }).finish;
    expect(finish("MAX_TOKENS")).toEqual({ reason: "length", raw: "MAX_TOKENS" });
    expect(finish("SAFETY")).toEqual({ reason: "content_filter", raw: "SAFETY" });
    expect(finish("RECITATION")).toEqual({ reason: "content_filter", raw: "RECITATION" });
    expect(finish("BLOCKLIST")).toEqual({ reason: "content_filter", raw: "BLOCKLIST" });
    expect(finish("MALFORMED_FUNCTION_CALL")).toEqual({ reason: "other", raw: "MALFORMED_FUNCTION_CALL" });
    expect(finish("SOMETHING_NEW")).toEqual({ reason: "other", raw: "SOMETHING_NEW" });
  });

  test("a body that is not a GenerateContentResponse is rejected", () => {
    expect(() => codec.decodeResponse({ type: "message", content: [] })).toThrow(IrDecodeError);
  });
});

describe("google-generate-content encodeResponse", () => {
  test("renders candidates, usageMetadata with candidates excluding thoughts, modelVersion and responseId", () => {
    const response: IrResponse = {
      content: [
        { type: "reasoning", text: "thinking", signature: "anthropic-sig", signatureProtocol: "anthropic-messages" },
        { type: "text", text: "" },
        { type: "text", text: "Checking." },
        { type: "tool_call", id: "toolu_1", name: "get_weather", arguments: '{"location":"Paris"}' },
      ],
      finish: { reason: "tool_calls", raw: "tool_use" },
      usage: { promptTokens: 3544, completionTokens: 156, reasoningTokens: 100, cacheReadTokens: 2048, cacheWriteTokens: 1024 },
    };
    expect(codec.encodeResponse(response, CONTEXT).value).toEqual({
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { text: "thinking", thought: true },
              { text: "Checking." },
              { functionCall: { name: "get_weather", args: { location: "Paris" } } },
            ],
          },
          finishReason: "STOP",
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 3544, candidatesTokenCount: 56, totalTokenCount: 3700, thoughtsTokenCount: 100, cachedContentTokenCount: 2048 },
      modelVersion: "google/gemini-2.5-pro",
      responseId: "req_7f3a",
    });
  });

  test("finish reasons render back, keeping a raw Gemini value with the same meaning", () => {
    const reason = (finish: IrResponse["finish"]) =>
      (codec.encodeResponse({ content: [], finish }, CONTEXT).value.candidates as Array<{ finishReason: string }>)[0]?.finishReason;
    expect(reason({ reason: "length", raw: "max_tokens" })).toBe("MAX_TOKENS");
    expect(reason({ reason: "content_filter", raw: "RECITATION" })).toBe("RECITATION");
    expect(reason({ reason: "content_filter", raw: "refusal" })).toBe("SAFETY");
    expect(reason({ reason: "error" })).toBe("OTHER");
  });

  test("a Gemini response survives decode then encode with its signatures and usage", () => {
    const fixture = readJsonFixture("response-parallel-calls.json");
    const body = codec.encodeResponse(codec.decodeResponse(fixture), CONTEXT).value;
    const candidate = (body.candidates as Array<{ content: unknown; finishReason: string }>)[0];
    expect(candidate?.content).toEqual((fixture.candidates as Array<{ content: unknown }>)[0]?.content);
    expect(candidate?.finishReason).toBe("STOP");
    expect(body.usageMetadata).toEqual({
      promptTokenCount: 1843,
      candidatesTokenCount: 58,
      totalTokenCount: 2013,
      thoughtsTokenCount: 112,
      cachedContentTokenCount: 1024,
    });
  });
});

import { describe, expect, test } from "bun:test";
import { IrDecodeError, type IrResponse } from "../../../src/ir";
import { decodeResponseId, encodeResponseId, openaiResponsesCodec } from "../../../src/protocols/openai-responses";
import { readJsonFixture, testContext } from "../openai-chat/replay-sse";

const fixture = (name: string) => readJsonFixture("openai-responses", name);

describe("openai-responses decodeResponse", () => {
  test("reads a reasoning summary and message text, with usage from input and output token details", () => {
    const response = openaiResponsesCodec.decodeResponse(fixture("response-reasoning-text.json"));
    expect(response.content).toEqual([
      {
        type: "reasoning",
        text: "**Counting letters**\n\nThe word strawberry has three r's.\n\n**Answer**\n\nReply briefly.",
        signature: '{"id":"rs_6823a1f1d9e48191a0b1c2d3e4f5a6b708e2f3a1b4c5d6e7"}',
        signatureProtocol: "openai-responses",
      },
      { type: "text", text: "There are **three** r's in “strawberry”." },
    ]);
    expect(response.finish).toEqual({ reason: "stop", raw: "completed" });
    expect(response.usage).toMatchObject({ promptTokens: 1320, completionTokens: 412, reasoningTokens: 384, cacheReadTokens: 1152 });
  });

  test("reads a function call by its call_id and finishes a completed tool turn as tool_calls", () => {
    const response = openaiResponsesCodec.decodeResponse(fixture("response-function-call.json"));
    expect(response.content[1]).toEqual({ type: "tool_call", id: "call_Hn4bV7cX0zL3kJ6gF9dS2aQw", name: "get_weather", arguments: '{"location":"Oslo, Norway"}' });
    expect(response.content[0]).toMatchObject({ type: "reasoning", signatureProtocol: "openai-responses" });
    expect(response.finish).toEqual({ reason: "tool_calls", raw: "completed" });
  });

  test("turns a refusal content part into text finishing as content_filter", () => {
    const response = openaiResponsesCodec.decodeResponse(fixture("response-refusal.json"));
    expect(response.content).toEqual([{ type: "text", text: "I'm sorry, but I can't help with that." }]);
    expect(response.finish).toEqual({ reason: "content_filter", raw: "completed" });
  });

  test("maps incomplete and failed statuses", () => {
    const base = { object: "response", output: [] };
    expect(openaiResponsesCodec.decodeResponse({ ...base, status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }).finish).toEqual({ reason: "length", raw: "max_output_tokens" });
    expect(openaiResponsesCodec.decodeResponse({ ...base, status: "incomplete", incomplete_details: { reason: "content_filter" } }).finish).toEqual({ reason: "content_filter", raw: "content_filter" });
    expect(openaiResponsesCodec.decodeResponse({ ...base, status: "failed" }).finish).toEqual({ reason: "error", raw: "failed" });
  });

  test("counts web_search_call items for billing", () => {
    const body = { output: [{ type: "web_search_call", id: "ws_1", status: "completed" }], status: "completed", usage: { input_tokens: 1, output_tokens: 1 } };
    expect(openaiResponsesCodec.decodeResponse(body).usage?.webSearchCount).toBe(1);
  });

  test("rejects a body that is not a Responses response", () => {
    expect(() => openaiResponsesCodec.decodeResponse({ choices: [] })).toThrow(IrDecodeError);
  });
});

describe("openai-responses encodeResponse", () => {
  test("renders a brc_ id, output items in order and usage", () => {
    const response: IrResponse = {
      content: [
        { type: "reasoning", text: "Plan." },
        { type: "text", text: "Calling " },
        { type: "text", text: "the tool." },
        { type: "tool_call", id: "toolu_01", name: "get_weather", arguments: '{"city":"Oslo"}' },
      ],
      finish: { reason: "tool_calls", raw: "tool_use" },
      usage: { promptTokens: 10, completionTokens: 5, reasoningTokens: 2, cacheReadTokens: 4 },
    };
    expect(openaiResponsesCodec.encodeResponse(response, testContext()).value).toEqual({
      id: "brc_cmVxXzAxSFpYM0s5UTQ",
      object: "response",
      created_at: 1747150000,
      status: "completed",
      model: "openai/gpt-4.1-mini",
      output: [
        { id: "rs_0", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "Plan." }], status: "completed" },
        { id: "msg_1", type: "message", status: "completed", content: [{ type: "output_text", annotations: [], text: "Calling the tool." }], role: "assistant" },
        { id: "fc_2", type: "function_call", status: "completed", arguments: '{"city":"Oslo"}', call_id: "toolu_01", name: "get_weather" },
      ],
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 2 },
        total_tokens: 15,
      },
    });
  });

  test("omits usage when unknown and marks a length stop as incomplete", () => {
    const body = openaiResponsesCodec.encodeResponse({ content: [{ type: "text", text: "In the" }], finish: { reason: "length", raw: "length" } }, testContext()).value;
    expect(body.status).toBe("incomplete");
    expect(body.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(body).not.toHaveProperty("usage");
  });

  test("reports an errored response as failed", () => {
    const body = openaiResponsesCodec.encodeResponse({ content: [], finish: { reason: "error" } }, testContext()).value;
    expect(body.status).toBe("failed");
    expect(body.error).toMatchObject({ code: "server_error" });
  });

  test("round-trips a decoded upstream response, keeping the reasoning item id and encrypted content", () => {
    const decoded = openaiResponsesCodec.decodeResponse(fixture("response-function-call.json"));
    const body = openaiResponsesCodec.encodeResponse(decoded, testContext()).value;
    expect((body.output as Array<Record<string, unknown>>)[0]).toMatchObject({
      id: "rs_6823a5eac4158191a9f8e7d6c5b4a3f20c3d4e5f60718293",
      encrypted_content: "gAAAAABoI6Xq3vY9k2mN8pQ1rS4tU7wX0zA3bC6dE9fG2hJ5kL8mN1pQ4rS7tU0w",
    });
    const again = openaiResponsesCodec.decodeResponse(body);
    expect(again.content).toEqual(decoded.content);
    expect(again.finish).toEqual(decoded.finish);
  });
});

describe("Responses public id", () => {
  test("is brc_ plus unpadded base64url of the request id and decodes strictly", () => {
    const id = encodeResponseId("5f0c8a2e-9d1b-4c3a-8e7f-6b5a4c3d2e1f");
    expect(id.startsWith("brc_")).toBe(true);
    expect(id).not.toContain("=");
    expect(decodeResponseId(id)).toBe("5f0c8a2e-9d1b-4c3a-8e7f-6b5a4c3d2e1f");
    expect(decodeResponseId("resp_6823a1f0")).toBeUndefined();
    expect(decodeResponseId("brc_a+b/")).toBeUndefined();
    expect(decodeResponseId("brc_")).toBeUndefined();
  });
});

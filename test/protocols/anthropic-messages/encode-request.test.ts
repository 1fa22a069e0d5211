import { describe, expect, test } from "bun:test";
import type { IrRequest } from "../../../src/ir";
import { anthropicMessagesCodec as codec } from "../../../src/protocols/anthropic-messages";
import { readJsonFixture } from "./stream-replay";

const upstream = { providerModelId: "claude-sonnet-4-5-20250929", stream: false };

function request(overrides: Partial<IrRequest>): IrRequest {
  return { model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }], params: {}, stream: false, ...overrides };
}

describe("anthropic-messages encodeRequest", () => {
  test("max_tokens defaults to 4096 because the Messages API requires it", () => {
    const { value } = codec.encodeRequest(request({}), upstream);
    expect(value).toEqual({ model: "claude-sonnet-4-5-20250929", max_tokens: 4096, messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] });
  });

  test("the default max_tokens leaves room above a thinking budget", () => {
    const { value } = codec.encodeRequest(request({ params: { thinkingBudgetTokens: 8000 } }), upstream);
    expect(value.max_tokens).toBe(12096);
    expect(value.thinking).toEqual({ type: "enabled", budget_tokens: 8000 });
  });

  test("the system prompt is a string, or a cached text block when it carries cache_control", () => {
    expect(codec.encodeRequest(request({ system: "Be brief." }), upstream).value.system).toBe("Be brief.");
    const cached = codec.encodeRequest(request({ system: "Be brief.", systemCacheControl: { type: "ephemeral" } }), upstream).value;
    expect(cached.system).toEqual([{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }]);
  });

  test("consecutive tool results merge into one user message of tool_result blocks, ahead of user text", () => {
    const { value } = codec.encodeRequest(
      request({
        messages: [
          { role: "user", content: [{ type: "text", text: "Weather and time?" }] },
          {
            role: "assistant",
            content: [
              { type: "tool_call", id: "call_a", name: "get_weather", arguments: '{"location":"Paris"}' },
              { type: "tool_call", id: "call_b", name: "get_time", arguments: '{"timezone":"Europe/Paris"}' },
            ],
          },
          { role: "tool", content: [{ type: "tool_result", callId: "call_a", output: "18°C" }] },
          { role: "user", content: [{ type: "text", text: "Short please." }] },
          { role: "tool", content: [{ type: "tool_result", callId: "call_b", output: [{ type: "text", text: "down" }], isError: true }] },
        ],
      }),
      upstream,
    );
    expect(value.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather and time?" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_a", name: "get_weather", input: { location: "Paris" } },
          { type: "tool_use", id: "call_b", name: "get_time", input: { timezone: "Europe/Paris" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_a", content: "18°C" },
          { type: "tool_result", tool_use_id: "call_b", content: [{ type: "text", text: "down" }], is_error: true },
          { type: "text", text: "Short please." },
        ],
      },
    ]);
  });

  test("empty and whitespace-only text blocks are never sent", () => {
    const { value } = codec.encodeRequest(
      request({
        messages: [
          { role: "user", content: [{ type: "text", text: "Hi" }] },
          { role: "assistant", content: [{ type: "text", text: "" }, { type: "tool_call", id: "c1", name: "f", arguments: "{}" }] },
          { role: "tool", content: [{ type: "tool_result", callId: "c1", output: "" }] },
          { role: "assistant", content: [{ type: "text", text: "  \n" }] },
          { role: "user", content: [{ type: "text", text: "Next" }] },
        ],
      }),
      upstream,
    );
    const texts = JSON.stringify(value.messages);
    expect(texts).not.toContain('"text":""');
    expect(texts).not.toContain('"text":"  \\n"');
    expect(value.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Hi" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1" }, { type: "text", text: "Next" }] },
    ]);
  });

  test("thinking is replayed only with an Anthropic signature; foreign reasoning is dropped with a warning", () => {
    const { value, warnings } = codec.encodeRequest(
      request({
        messages: [
          { role: "user", content: [{ type: "text", text: "Hi" }] },
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "mine", signature: "sig-a", signatureProtocol: "anthropic-messages" },
              { type: "reasoning", text: "", redactedData: "opaque", signatureProtocol: "anthropic-messages" },
              { type: "reasoning", text: "gemini thought", signature: "sig-g", signatureProtocol: "google-generate-content" },
              { type: "reasoning", text: "openai summary" },
              { type: "text", text: "Hello" },
            ],
          },
        ],
      }),
      upstream,
    );
    expect((value.messages as Array<{ content: unknown[] }>)[1]?.content).toEqual([
      { type: "thinking", thinking: "mine", signature: "sig-a" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Hello" },
    ]);
    expect(warnings.map((warning) => [warning.code, warning.field])).toEqual([
      ["dropped_content", "messages[1].content[2]"],
      ["dropped_content", "messages[1].content[3]"],
    ]);
  });

  test("invalid tool-call arguments are sent as {} with a warning", () => {
    const { value, warnings } = codec.encodeRequest(
      request({ messages: [{ role: "assistant", content: [{ type: "tool_call", id: "c1", name: "f", arguments: '{"a":' }] }] }),
      upstream,
    );
    expect(value.messages).toEqual([{ role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: {} }] }]);
    expect(warnings).toEqual([{ code: "invalid_tool_arguments", field: "messages[0].content[0]", message: expect.any(String) }]);
  });

  test("tools, tool_choice, parallel flag, stop sequences, top_k, json schema and effort are encoded", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const { value, warnings } = codec.encodeRequest(
      request({
        tools: [{ name: "get_weather", description: "Weather", parameters: { type: "object", properties: { location: { type: "string" } } } }],
        toolChoice: { type: "tool", name: "get_weather" },
        parallelToolCalls: false,
        responseFormat: { type: "json_schema", name: "city", schema },
        params: { maxTokens: 500, temperature: 0.2, topP: 0.9, topK: 5, stop: ["END"], reasoningEffort: "medium" },
      }),
      { providerModelId: "claude-opus-4-1", stream: true },
    );
    expect(value).toMatchObject({
      model: "claude-opus-4-1",
      max_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ["END"],
      stream: true,
      tools: [{ name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { location: { type: "string" } } } }],
      tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      output_config: { effort: "medium", format: { type: "json_schema", schema } },
    });
    expect(warnings).toEqual([]);
  });

  test("required and none tool choices map to any and none", () => {
    const tools = [{ name: "f", parameters: { type: "object" } }];
    expect(codec.encodeRequest(request({ tools, toolChoice: { type: "required" } }), upstream).value.tool_choice).toEqual({ type: "any" });
    expect(codec.encodeRequest(request({ tools, toolChoice: { type: "none" } }), upstream).value.tool_choice).toEqual({ type: "none" });
  });

  test("seed and penalties have no place on Anthropic and are dropped with unsupported_field warnings", () => {
    const { value, warnings } = codec.encodeRequest(request({ params: { seed: 7, presencePenalty: 0.5, frequencyPenalty: 0.1 } }), upstream);
    expect(value).not.toHaveProperty("seed");
    expect(warnings.map((warning) => [warning.code, warning.field])).toEqual([
      ["unsupported_field", "seed"],
      ["unsupported_field", "presence_penalty"],
      ["unsupported_field", "frequency_penalty"],
    ]);
  });

  test("same-protocol extras are copied back verbatim, server tools appended after client tools", () => {
    const decoded = codec.decodeRequest(readJsonFixture("request-agent-turn.json")).value;
    const { value, warnings } = codec.encodeRequest(decoded, { providerModelId: "claude-sonnet-4-5-20250929", stream: true });
    expect(value.metadata).toEqual({ user_id: "user_7d3f" });
    expect(value.service_tier).toBe("auto");
    expect((value.tools as Array<{ name: string }>).map((tool) => tool.name)).toEqual(["get_weather", "get_time", "web_search"]);
    expect(warnings).toEqual([]);
  });

  test("foreign extras are ignored with one warning per field", () => {
    const { value, warnings } = codec.encodeRequest(
      request({ extras: { protocol: "openai-chat", fields: { logit_bias: { "50256": -100 }, user: "u1" } } }),
      upstream,
    );
    expect(value).not.toHaveProperty("logit_bias");
    expect(warnings.map((warning) => warning.field)).toEqual(["logit_bias", "user"]);
  });

  test("a decoded Anthropic request survives the round trip with signatures, system and tool results intact", () => {
    const original = readJsonFixture("request-agent-turn.json");
    const { value } = codec.encodeRequest(codec.decodeRequest(original).value, { providerModelId: "claude-sonnet-4-5-20250929", stream: true });
    expect(value.system).toEqual([
      { type: "text", text: "You are a careful travel assistant.\nAlways state units.", cache_control: { type: "ephemeral" } },
    ]);
    const messages = value.messages as Array<{ role: string; content: unknown[] }>;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "system"]);
    expect(messages[1]?.content.slice(0, 2)).toEqual([
      { type: "thinking", thinking: "Two independent lookups.", signature: "EqQBCkYIBxgCKkBd7pX0mHnq3vG2FzWk" },
      { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4a" },
    ]);
    expect(messages[2]?.content).toEqual((original.messages as Array<{ content: unknown[] }>)[2]?.content);
    expect(value.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(value.thinking).toEqual({ type: "enabled", budget_tokens: 8000 });
  });

  test("images without a media type get one sniffed from the bytes, and text files become text documents", () => {
    const { value } = codec.encodeRequest(
      request({
        messages: [
          {
            role: "user",
            content: [
              { type: "image", data: "/9j/4AAQSkZJRg" },
              { type: "image", url: "data:image/webp;base64,UklGRiQAAABXRUJQ" },
              { type: "file", mediaType: "text/plain", data: Buffer.from("notes").toString("base64"), filename: "notes.txt" },
            ],
          },
        ],
      }),
      upstream,
    );
    expect((value.messages as Array<{ content: unknown[] }>)[0]?.content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/4AAQSkZJRg" } },
      { type: "image", source: { type: "base64", media_type: "image/webp", data: "UklGRiQAAABXRUJQ" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "notes" }, title: "notes.txt" },
    ]);
  });
});

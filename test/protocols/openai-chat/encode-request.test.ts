import { describe, expect, test } from "bun:test";
import type { IrRequest } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";

const encode = (request: IrRequest, stream = false) =>
  openaiChatCodec.encodeRequest(request, { providerModelId: "gpt-4.1-mini-2025-04-14", stream });

const minimal: IrRequest = { model: "openai/gpt-4.1-mini", messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }], params: {}, stream: false };

describe("openai-chat encodeRequest", () => {
  test("uses the provider model id and puts the system prompt in a leading system message", () => {
    const { value, warnings } = encode({ ...minimal, system: "Be brief." });
    expect(value).toEqual({
      model: "gpt-4.1-mini-2025-04-14",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
    });
    expect(warnings).toEqual([]);
  });

  test("always asks a streaming upstream for usage, whatever the client asked", () => {
    const { value } = encode({ ...minimal, stream: true, streamIncludeUsage: false }, true);
    expect(value.stream).toBe(true);
    expect(value.stream_options).toEqual({ include_usage: true });
  });

  test("renders tool calls, tool results and images in chat form", () => {
    const { value } = encode({
      ...minimal,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Look" },
            { type: "image", mediaType: "image/jpeg", data: "/9j/4AAQ", detail: "low" },
            { type: "image", url: "https://example.com/a.png" },
          ],
        },
        { role: "assistant", content: [{ type: "tool_call", id: "call_9", name: "lookup", arguments: '{"q":"x"}' }] },
        { role: "tool", content: [{ type: "tool_result", callId: "call_9", toolName: "lookup", output: "found" }] },
      ],
    });
    expect(value.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ", detail: "low" } },
          { type: "image_url", image_url: { url: "https://example.com/a.png" } },
        ],
      },
      { role: "assistant", tool_calls: [{ id: "call_9", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }] },
      { role: "tool", tool_call_id: "call_9", content: "found" },
    ]);
  });

  test("drops assistant reasoning with a warning rather than sending reasoning_content to OpenAI", () => {
    const { value, warnings } = encode({
      ...minimal,
      messages: [{ role: "assistant", content: [{ type: "reasoning", text: "hmm", signature: "sig", signatureProtocol: "anthropic-messages" }, { type: "text", text: "Done." }] }],
    });
    expect(value.messages).toEqual([{ role: "assistant", content: "Done." }]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: "dropped_content", field: "messages[0].content[0]" });
  });

  test("maps tools, tool choice, response format and params, and sends the limit as max_completion_tokens", () => {
    const { value } = encode({
      ...minimal,
      tools: [{ name: "get_weather", description: "Weather", parameters: { type: "object" }, strict: true }],
      toolChoice: { type: "tool", name: "get_weather" },
      parallelToolCalls: false,
      responseFormat: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true },
      params: { maxTokens: 100, temperature: 0.3, topP: 0.8, stop: ["\n\n"], seed: 1, presencePenalty: 0.1, frequencyPenalty: 0.2, reasoningEffort: "high" },
    });
    expect(value).toMatchObject({
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object" }, strict: true } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
      max_completion_tokens: 100,
      temperature: 0.3,
      top_p: 0.8,
      stop: ["\n\n"],
      seed: 1,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      reasoning_effort: "high",
    });
    expect(value.max_tokens).toBeUndefined();
    expect(encode({ ...minimal, toolChoice: { type: "required" } }).value.tool_choice).toBe("required");
  });

  test("drops top_k and the Anthropic thinking budget with unsupported_field warnings", () => {
    const { value, warnings } = encode({ ...minimal, params: { topK: 40, thinkingBudgetTokens: 2048 } });
    expect(value.top_k).toBeUndefined();
    expect(warnings.map((warning) => [warning.code, warning.field])).toEqual([
      ["unsupported_field", "top_k"],
      ["unsupported_field", "thinking.budget_tokens"],
    ]);
  });

  test("sends reasoning effort max as xhigh and says so", () => {
    const { value, warnings } = encode({ ...minimal, params: { reasoningEffort: "max" } });
    expect(value.reasoning_effort).toBe("xhigh");
    expect(warnings[0]?.field).toBe("reasoning_effort");
  });

  test("copies same-protocol extras back verbatim, merging hosted tools and stream options", () => {
    const custom = { type: "custom", custom: { name: "grammar" } };
    const { value, warnings } = encode(
      {
        ...minimal,
        tools: [{ name: "f", parameters: {} }],
        extras: { protocol: "openai-chat", fields: { n: 2, user: "u-1", tools: [custom], stream_options: { include_obfuscation: false } } },
      },
      true,
    );
    expect(value.n).toBe(2);
    expect(value.user).toBe("u-1");
    expect(value.tools).toEqual([{ type: "function", function: { name: "f", parameters: {} } }, custom]);
    expect(value.stream_options).toEqual({ include_obfuscation: false, include_usage: true });
    expect(warnings).toEqual([]);
  });

  test("ignores extras from another protocol with one warning per field", () => {
    const { value, warnings } = encode({
      ...minimal,
      extras: { protocol: "anthropic-messages", fields: { metadata: { user_id: "u" }, top_k: 5 } },
    });
    expect(value.metadata).toBeUndefined();
    expect(warnings.map((warning) => warning.field)).toEqual(["metadata", "top_k"]);
  });

  test("re-encodes a decoded client body to an equivalent upstream body", () => {
    const client = {
      model: "openai/gpt-4.1-mini",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather?" },
        { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "sunny" },
      ],
      temperature: 0.5,
      logprobs: true,
      session_id: "s",
    };
    const ir = openaiChatCodec.decodeRequest(client).value;
    const { value } = encode(ir);
    expect(value).toEqual({
      model: "gpt-4.1-mini-2025-04-14",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather?" },
        { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "sunny" },
      ],
      temperature: 0.5,
      logprobs: true,
    });
  });

  test("warns about an error flag on a tool result, which chat cannot carry", () => {
    const { warnings } = encode({
      ...minimal,
      messages: [{ role: "tool", content: [{ type: "tool_result", callId: "c", output: "boom", isError: true }] }],
    });
    expect(warnings[0]?.field).toBe("messages[0].content[0].isError");
  });
});

import { describe, expect, test } from "bun:test";
import { IrDecodeError } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";

const decode = (body: unknown) => openaiChatCodec.decodeRequest(body);
const base = { model: "openai/gpt-4.1-mini", messages: [{ role: "user", content: "Hi" }] };

function decodeError(body: unknown): string {
  try {
    decode(body);
  } catch (error) {
    expect(error).toBeInstanceOf(IrDecodeError);
    return (error as Error).message;
  }
  throw new Error("expected an IrDecodeError");
}

describe("openai-chat decodeRequest: validation", () => {
  test("rejects a body that is not an object", () => {
    expect(decodeError([base])).toContain("JSON object");
    expect(decodeError("hello")).toContain("JSON object");
  });

  test("rejects a missing, empty or non-string model", () => {
    expect(decodeError({ messages: base.messages })).toContain("model");
    expect(decodeError({ ...base, model: "" })).toContain("model");
    expect(decodeError({ ...base, model: 42 })).toContain("model");
  });

  test("rejects missing, non-array and empty messages", () => {
    expect(decodeError({ model: "m" })).toContain("messages");
    expect(decodeError({ model: "m", messages: "Hi" })).toContain("messages");
    expect(decodeError({ model: "m", messages: [] })).toContain("at least one");
  });

  test("rejects an unknown role and names the offending message", () => {
    expect(decodeError({ model: "m", messages: [{ role: "narrator", content: "x" }] })).toContain('messages[0].role "narrator"');
  });

  test("rejects a tool message without tool_call_id", () => {
    expect(decodeError({ model: "m", messages: [{ role: "tool", content: "42" }] })).toContain("tool_call_id");
  });

  test("rejects max_tokens and max_completion_tokens that differ, and accepts them when equal", () => {
    expect(decodeError({ ...base, max_tokens: 10, max_completion_tokens: 20 })).toContain("max_tokens and max_completion_tokens");
    expect(decode({ ...base, max_tokens: 10, max_completion_tokens: 10 }).value.params.maxTokens).toBe(10);
  });

  test("rejects parameters of the wrong type", () => {
    expect(decodeError({ ...base, temperature: "hot" })).toContain("temperature");
    expect(decodeError({ ...base, stream: "yes" })).toContain("stream");
    expect(decodeError({ ...base, max_tokens: 1.5 })).toContain("max_tokens");
    expect(decodeError({ ...base, stop: [1, 2] })).toContain("stop");
    expect(decodeError({ ...base, reasoning_effort: "extreme" })).toContain("reasoning_effort");
    expect(decodeError({ ...base, parallel_tool_calls: 1 })).toContain("parallel_tool_calls");
    expect(decodeError({ ...base, response_format: { type: "yaml" } })).toContain("response_format");
  });

  test("rejects more than 8 fallback models and non-string entries", () => {
    expect(decodeError({ ...base, models: Array.from({ length: 9 }, (_, i) => `p/m${i}`) })).toContain("at most 8");
    expect(decodeError({ ...base, models: ["p/a", ""] })).toContain("models[1]");
    expect(decode({ ...base, models: ["p/a", "p/b"] }).value.models).toEqual(["p/a", "p/b"]);
  });

  test("rejects a tool call without an id in assistant history", () => {
    const body = { model: "m", messages: [{ role: "assistant", tool_calls: [{ type: "function", function: { name: "f", arguments: "{}" } }] }] };
    expect(decodeError(body)).toContain("tool_calls[0].id");
  });
});

describe("openai-chat decodeRequest: mapping", () => {
  test("joins system and developer messages with a newline into the system prompt", () => {
    const { value } = decode({
      model: "m",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
        { role: "user", content: "Hi" },
      ],
    });
    expect(value.system).toBe("You are terse.\nAnswer in French.");
    expect(value.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
  });

  test("splits data-URL images into base64 and media type and keeps remote URLs", () => {
    const { value } = decode({
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
            { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
            { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
          ],
        },
      ],
    });
    expect(value.messages[0]?.content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=", detail: "high" },
      { type: "image", url: "https://example.com/cat.jpg" },
      { type: "file", mediaType: "audio/wav", data: "UklGRg==" },
      { type: "file", mediaType: "application/pdf", data: "JVBERi0=", filename: "a.pdf" },
    ]);
  });

  test("maps an assistant turn with reasoning, text and tool calls, and names the following tool result", () => {
    const { value } = decode({
      model: "m",
      messages: [
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: "Checking.",
          reasoning_content: "Need the weather tool.",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"temp":18}' },
      ],
    });
    expect(value.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "Need the weather tool." },
        { type: "text", text: "Checking." },
        { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      ],
    });
    expect(value.messages[2]).toEqual({
      role: "tool",
      content: [{ type: "tool_result", callId: "call_1", toolName: "get_weather", output: '{"temp":18}' }],
    });
  });

  test("maps tools, tool_choice, parallel_tool_calls and a json_schema response format", () => {
    const { value } = decode({
      ...base,
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object" }, strict: true } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
    });
    expect(value.tools).toEqual([{ name: "get_weather", description: "Weather", parameters: { type: "object" }, strict: true }]);
    expect(value.toolChoice).toEqual({ type: "tool", name: "get_weather" });
    expect(value.parallelToolCalls).toBe(false);
    expect(value.responseFormat).toEqual({ type: "json_schema", name: "answer", schema: { type: "object" }, strict: true });
  });

  test("maps the string tool choices and the simple response formats", () => {
    expect(decode({ ...base, tool_choice: "required" }).value.toolChoice).toEqual({ type: "required" });
    expect(decode({ ...base, tool_choice: "none" }).value.toolChoice).toEqual({ type: "none" });
    expect(decode({ ...base, response_format: { type: "json_object" } }).value.responseFormat).toEqual({ type: "json_object" });
  });

  test("maps generation params, stop as a string, and the stream flags", () => {
    const { value } = decode({
      ...base,
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 256,
      stop: "END",
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      reasoning_effort: "low",
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(value.params).toEqual({
      temperature: 0.2,
      topP: 0.9,
      maxTokens: 256,
      stop: ["END"],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      reasoningEffort: "low",
    });
    expect(value.stream).toBe(true);
    expect(value.streamIncludeUsage).toBe(true);
  });

  test("keeps unknown top-level fields as openai-chat extras and strips session_id", () => {
    const { value } = decode({ ...base, n: 2, logit_bias: { "50256": -100 }, user: "u-1", store: true, service_tier: "flex", session_id: "s-9" });
    expect(value.extras).toEqual({
      protocol: "openai-chat",
      fields: { n: 2, logit_bias: { "50256": -100 }, user: "u-1", service_tier: "flex" },
    });
    // store is mapped into the IR, not an extra.
    expect(value.store).toBe(true);
  });

  test("keeps non-function tools and unmappable tool choices in extras", () => {
    const custom = { type: "custom", custom: { name: "grammar" } };
    const choice = { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [] } };
    const { value } = decode({ ...base, tools: [custom], tool_choice: choice });
    expect(value.tools).toBeUndefined();
    expect(value.toolChoice).toBeUndefined();
    expect(value.extras?.fields).toEqual({ tools: [custom], tool_choice: choice });
  });

  test("warns about content parts it cannot carry instead of dropping them silently", () => {
    const { value, warnings } = decode({
      model: "m",
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "file", file: { file_id: "file-abc" } }] }],
    });
    expect(value.messages[0]?.content).toEqual([{ type: "text", text: "hi" }]);
    expect(warnings.map((warning) => warning.field)).toEqual(["messages[0].content[1].file.file_id"]);
  });

  test("treats a refusal in assistant history as text", () => {
    const { value } = decode({ model: "m", messages: [{ role: "assistant", content: null, refusal: "I can't." }] });
    expect(value.messages[0]?.content).toEqual([{ type: "text", text: "I can't." }]);
  });
});

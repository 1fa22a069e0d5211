import { describe, expect, test } from "bun:test";
import { IrDecodeError } from "../../../src/ir";
import { openaiResponsesCodec } from "../../../src/protocols/openai-responses";

const decode = (body: unknown) => openaiResponsesCodec.decodeRequest(body);

function decodeError(body: unknown): string {
  try {
    decode(body);
  } catch (error) {
    expect(error).toBeInstanceOf(IrDecodeError);
    return (error as Error).message;
  }
  throw new Error("expected an IrDecodeError");
}

describe("openai-responses decodeRequest: validation", () => {
  test("rejects a non-object body, a missing model and a missing input", () => {
    expect(decodeError(null)).toContain("JSON object");
    expect(decodeError({ input: "hi" })).toContain("model");
    expect(decodeError({ model: "m" })).toContain("input");
  });

  test("rejects an unknown role, a function_call_output without call_id and wrongly typed params", () => {
    expect(decodeError({ model: "m", input: [{ role: "robot", content: "x" }] })).toContain('input[0].role "robot"');
    expect(decodeError({ model: "m", input: [{ type: "function_call_output", output: "x" }] })).toContain("call_id");
    expect(decodeError({ model: "m", input: "x", max_output_tokens: "many" })).toContain("max_output_tokens");
    expect(decodeError({ model: "m", input: "x", reasoning: { effort: "huge" } })).toContain("reasoning.effort");
    expect(decodeError({ model: "m", input: "x", text: { format: { type: "json_schema", schema: {} } } })).toContain("text.format.name");
  });

  test("rejects more than 8 fallback models", () => {
    expect(decodeError({ model: "m", input: "x", models: Array.from({ length: 9 }, () => "p/m") })).toContain("at most 8");
  });
});

describe("openai-responses decodeRequest: mapping", () => {
  test("reads a string input as one user message and instructions as the system prompt", () => {
    const { value } = decode({ model: "openai/gpt-4.1", input: "Tell me a joke", instructions: "Be funny." });
    expect(value).toMatchObject({
      model: "openai/gpt-4.1",
      system: "Be funny.",
      messages: [{ role: "user", content: [{ type: "text", text: "Tell me a joke" }] }],
      stream: false,
    });
  });

  test("joins instructions with system and developer items", () => {
    const { value } = decode({
      model: "m",
      instructions: "A",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "B" }] },
        { role: "system", content: "C" },
        { role: "user", content: "hi" },
      ],
    });
    expect(value.system).toBe("A\nB\nC");
    expect(value.messages).toHaveLength(1);
  });

  test("groups reasoning, message and function_call items into one assistant turn and names tool outputs", () => {
    const { value } = decode({
      model: "m",
      input: [
        { role: "user", content: [{ type: "input_text", text: "Weather in Oslo?" }, { type: "input_image", image_url: "data:image/webp;base64,UklGR", detail: "auto" }] },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Plan." }, { type: "summary_text", text: "Call tool." }], encrypted_content: "gAAA" },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking.", annotations: [] }] },
        { type: "function_call", id: "fc_1", call_id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
        { type: "function_call_output", call_id: "call_1", output: '{"temp":3}' },
      ],
    });
    expect(value.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in Oslo?" },
          { type: "image", mediaType: "image/webp", data: "UklGR", detail: "auto" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Plan.\n\nCall tool.", signature: '{"id":"rs_1","encrypted_content":"gAAA"}', signatureProtocol: "openai-responses" },
          { type: "text", text: "Checking." },
          { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
        ],
      },
      { role: "tool", content: [{ type: "tool_result", callId: "call_1", toolName: "get_weather", output: '{"temp":3}' }] },
    ]);
  });

  test("reads input_file data URLs and file URLs", () => {
    const { value } = decode({
      model: "m",
      input: [
        {
          role: "user",
          content: [
            { type: "input_file", filename: "r.pdf", file_data: "data:application/pdf;base64,JVBER" },
            { type: "input_file", file_url: "https://example.com/r.pdf" },
          ],
        },
      ],
    });
    expect(value.messages[0]?.content).toEqual([
      { type: "file", mediaType: "application/pdf", data: "JVBER", filename: "r.pdf" },
      { type: "file", url: "https://example.com/r.pdf" },
    ]);
  });

  test("skips unknown input item types with a warning", () => {
    const { value, warnings } = decode({
      model: "m",
      input: [
        { role: "user", content: "search" },
        { type: "web_search_call", id: "ws_1", status: "completed" },
      ],
    });
    expect(value.messages).toHaveLength(1);
    expect(warnings).toEqual([expect.objectContaining({ code: "dropped_content", field: "input[1]" })]);
  });

  test("maps flat function tools and keeps hosted tools in extras", () => {
    const { value } = decode({
      model: "m",
      input: "x",
      tools: [
        { type: "function", name: "get_weather", description: "Weather", parameters: { type: "object" }, strict: true },
        { type: "web_search_preview", search_context_size: "low" },
      ],
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: true,
    });
    expect(value.tools).toEqual([{ name: "get_weather", description: "Weather", parameters: { type: "object" }, strict: true }]);
    expect(value.toolChoice).toEqual({ type: "tool", name: "get_weather" });
    expect(value.parallelToolCalls).toBe(true);
    expect(value.extras?.fields.tools).toEqual([{ type: "web_search_preview", search_context_size: "low" }]);
  });

  test("maps text.format, reasoning.effort and params, keeping the rest of text and reasoning in extras", () => {
    const { value } = decode({
      model: "m",
      input: "x",
      text: { format: { type: "json_schema", name: "event", schema: { type: "object" }, strict: true }, verbosity: "low" },
      reasoning: { effort: "minimal", summary: "auto" },
      max_output_tokens: 500,
      temperature: 0.7,
      top_p: 0.95,
      stream: true,
      models: ["anthropic/claude-sonnet-4-5"],
    });
    expect(value.responseFormat).toEqual({ type: "json_schema", name: "event", schema: { type: "object" }, strict: true });
    expect(value.params).toEqual({ reasoningEffort: "minimal", maxTokens: 500, temperature: 0.7, topP: 0.95 });
    expect(value.stream).toBe(true);
    expect(value.models).toEqual(["anthropic/claude-sonnet-4-5"]);
    expect(value.extras?.fields).toEqual({ text: { verbosity: "low" }, reasoning: { summary: "auto" } });
  });

  test("keeps pass-through fields as openai-responses extras and strips session_id", () => {
    const { value } = decode({
      model: "m",
      input: "x",
      metadata: { team: "a" },
      include: ["reasoning.encrypted_content"],
      previous_response_id: "resp_123",
      store: false,
      session_id: "s",
    });
    expect(value.extras).toEqual({
      protocol: "openai-responses",
      fields: { metadata: { team: "a" }, include: ["reasoning.encrypted_content"], previous_response_id: "resp_123" },
    });
  });
});

import { describe, expect, test } from "bun:test";
import type { IrRequest } from "../../../src/ir";
import { openaiResponsesCodec } from "../../../src/protocols/openai-responses";

const encode = (request: IrRequest, stream = false) =>
  openaiResponsesCodec.encodeRequest(request, { providerModelId: "gpt-4.1-2025-04-14", stream });

const conversation: IrRequest = {
  model: "openai/gpt-4.1",
  system: "Be brief.",
  messages: [
    { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image", url: "https://example.com/sky.jpg" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Checking." },
        { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
      ],
    },
    { role: "tool", content: [{ type: "tool_result", callId: "call_1", output: "3C" }] },
  ],
  params: { maxTokens: 300, temperature: 0.2, topP: 0.9, reasoningEffort: "medium" },
  tools: [{ name: "get_weather", parameters: { type: "object" } }],
  toolChoice: { type: "tool", name: "get_weather" },
  responseFormat: { type: "json_schema", name: "w", schema: { type: "object" }, strict: true },
  stream: true,
};

describe("openai-responses encodeRequest", () => {
  test("renders system as instructions and the conversation as input items", () => {
    const { value, warnings } = encode(conversation, true);
    expect(value).toEqual({
      model: "gpt-4.1-2025-04-14",
      instructions: "Be brief.",
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "Weather?" },
            { type: "input_image", image_url: "https://example.com/sky.jpg", detail: "auto" },
          ],
        },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking.", annotations: [] }] },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
        { type: "function_call_output", call_id: "call_1", output: "3C" },
      ],
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }],
      tool_choice: { type: "function", name: "get_weather" },
      text: { format: { type: "json_schema", name: "w", schema: { type: "object" }, strict: true } },
      max_output_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: "medium" },
      stream: true,
    });
    expect(warnings).toEqual([]);
  });

  test("drops stop, seed, penalties and top_k with one warning each", () => {
    const { value, warnings } = encode({
      ...conversation,
      params: { stop: ["x"], seed: 1, presencePenalty: 0.1, frequencyPenalty: 0.1, topK: 3 },
    });
    expect(value).not.toHaveProperty("stop");
    expect(value).not.toHaveProperty("seed");
    expect(warnings.map((warning) => warning.field)).toEqual(["stop", "seed", "presence_penalty", "frequency_penalty", "top_k"]);
  });

  test("replays reasoning from a Responses upstream as a reasoning item and drops foreign reasoning with a warning", () => {
    const { value, warnings } = encode({
      ...conversation,
      messages: [
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "Plan.", signature: '{"id":"rs_1","encrypted_content":"gAAA"}', signatureProtocol: "openai-responses" },
            { type: "reasoning", text: "Hmm.", signature: "EqQBCkgI", signatureProtocol: "anthropic-messages" },
            { type: "text", text: "Done." },
          ],
        },
      ],
    });
    expect(value.input).toEqual([
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Plan." }], encrypted_content: "gAAA" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done.", annotations: [] }] },
    ]);
    expect(warnings).toEqual([expect.objectContaining({ code: "dropped_content", field: "messages[0].content[1]" })]);
  });

  test("copies same-protocol extras back, merging hosted tools, text and reasoning options", () => {
    const { value } = encode({
      ...conversation,
      extras: {
        protocol: "openai-responses",
        fields: {
          tools: [{ type: "web_search_preview" }],
          text: { verbosity: "low" },
          reasoning: { summary: "auto" },
          previous_response_id: "resp_1",
          store: false,
        },
      },
    });
    expect(value.tools).toEqual([{ type: "function", name: "get_weather", parameters: { type: "object" } }, { type: "web_search_preview" }]);
    expect(value.text).toEqual({ verbosity: "low", format: { type: "json_schema", name: "w", schema: { type: "object" }, strict: true } });
    expect(value.reasoning).toEqual({ summary: "auto", effort: "medium" });
    expect(value.previous_response_id).toBe("resp_1");
    expect(value.store).toBe(false);
  });

  test("warns once per field for hosted tools and other extras that came from another protocol", () => {
    const { value, warnings } = openaiResponsesCodec.encodeRequest(
      { ...conversation, extras: { protocol: "openai-chat", fields: { n: 2, tools: [{ type: "custom" }] } } },
      { providerModelId: "gpt-4.1", stream: false },
    );
    expect(value.n).toBeUndefined();
    expect(warnings.map((warning) => [warning.code, warning.field])).toEqual([
      ["unsupported_field", "n"],
      ["unsupported_tool", "tools"],
    ]);
  });

  test("sends tool results with images as input parts", () => {
    const { value } = encode({
      ...conversation,
      messages: [
        {
          role: "tool",
          content: [{ type: "tool_result", callId: "c", output: [{ type: "text", text: "chart:" }, { type: "image", mediaType: "image/png", data: "iVBO" }] }],
        },
      ],
    });
    expect(value.input).toEqual([
      {
        type: "function_call_output",
        call_id: "c",
        output: [
          { type: "input_text", text: "chart:" },
          { type: "input_image", image_url: "data:image/png;base64,iVBO", detail: "auto" },
        ],
      },
    ]);
  });
});

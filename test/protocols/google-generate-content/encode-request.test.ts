import { describe, expect, test } from "bun:test";
import type { IrRequest } from "../../../src/ir";
import { googleGenerateContentCodec as codec } from "../../../src/protocols/google-generate-content";
import { readJsonFixture } from "./stream-replay";

const upstream = { providerModelId: "gemini-2.5-pro", stream: true };

function request(overrides: Partial<IrRequest>): IrRequest {
  return { model: "google/gemini-2.5-pro", messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }], params: {}, stream: true, ...overrides };
}

describe("google-generate-content encodeRequest", () => {
  test("a minimal request has only contents: model and stream live in the URL", () => {
    expect(codec.encodeRequest(request({}), upstream).value).toEqual({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
  });

  test("assistant turns become model contents and tool results user functionResponse parts merged into one content", () => {
    const { value } = codec.encodeRequest(
      request({
        system: "Be brief.",
        messages: [
          { role: "user", content: [{ type: "text", text: "Weather and time?" }] },
          {
            role: "assistant",
            content: [
              { type: "text", text: "" },
              { type: "tool_call", id: "toolu_a", name: "get_weather", arguments: '{"location":"Paris"}' },
              { type: "tool_call", id: "toolu_b", name: "get_time", arguments: '{"timezone":"Europe/Paris"}' },
            ],
          },
          { role: "tool", content: [{ type: "tool_result", callId: "toolu_a", toolName: "get_weather", output: '{"temperature":18}' }] },
          { role: "tool", content: [{ type: "tool_result", callId: "toolu_b", output: "14:05" }] },
          { role: "tool", content: [{ type: "tool_result", callId: "toolu_c", toolName: "f", output: "boom", isError: true }] },
        ],
      }),
      upstream,
    );
    expect(value).toEqual({
      systemInstruction: { parts: [{ text: "Be brief." }] },
      contents: [
        { role: "user", parts: [{ text: "Weather and time?" }] },
        {
          role: "model",
          parts: [
            { functionCall: { name: "get_weather", args: { location: "Paris" } } },
            { functionCall: { name: "get_time", args: { timezone: "Europe/Paris" } } },
          ],
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_weather", response: { temperature: 18 } } },
            { functionResponse: { name: "toolu_b", response: { result: "14:05" } } },
            { functionResponse: { name: "f", response: { error: "boom" } } },
          ],
        },
      ],
    });
  });

  test("thought signatures are replayed only when they are Gemini's own", () => {
    const { value, warnings } = codec.encodeRequest(
      request({
        messages: [
          { role: "user", content: [{ type: "text", text: "Hi" }] },
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "gemini thought", signature: "g-sig", signatureProtocol: "google-generate-content" },
              { type: "reasoning", text: "claude thought", signature: "a-sig", signatureProtocol: "anthropic-messages" },
              { type: "reasoning", text: "", signature: "g-text-sig", signatureProtocol: "google-generate-content" },
              { type: "text", text: "Answer" },
              { type: "tool_call", id: "c", name: "f", arguments: "{}", signature: "g-call-sig" },
            ],
          },
        ],
      }),
      upstream,
    );
    expect((value.contents as Array<{ parts: unknown[] }>)[1]?.parts).toEqual([
      { text: "gemini thought", thought: true, thoughtSignature: "g-sig" },
      { text: "Answer", thoughtSignature: "g-text-sig" },
      { functionCall: { name: "f", args: {} }, thoughtSignature: "g-call-sig" },
    ]);
    expect(warnings.map((warning) => [warning.code, warning.field])).toEqual([["dropped_content", "messages[1].content[1]"]]);
  });

  test("function parameter schemas are sanitised for Gemini", () => {
    const { value } = codec.encodeRequest(
      request({
        tools: [
          {
            name: "search",
            description: "Search",
            strict: true,
            parameters: {
              $schema: "http://json-schema.org/draft-07/schema#",
              type: "object",
              additionalProperties: false,
              properties: {
                query: { type: "string", minLength: 1 },
                limit: { type: ["integer", "null"], exclusiveMinimum: 0 },
                filter: { $ref: "#/$defs/Filter" },
                additionalProperties: { type: "string" },
              },
              required: ["query", "ghost"],
              $defs: { Filter: { type: "object", additionalProperties: false, properties: { tag: { const: "news" } } } },
            },
          },
          { name: "ping", parameters: { type: "object", properties: {} } },
        ],
      }),
      upstream,
    );
    expect(value.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: "search",
            description: "Search",
            parameters: {
              type: "object",
              properties: {
                query: { type: "string", minLength: 1 },
                limit: { type: "integer", nullable: true },
                filter: { type: "object", properties: { tag: { enum: ["news"] } } },
                additionalProperties: { type: "string" },
              },
              // Declared order, which Gemini would otherwise replace with alphabetical order.
              propertyOrdering: ["query", "limit", "filter", "additionalProperties"],
              required: ["query"],
            },
          },
          // Gemini rejects OBJECT schemas with no properties, so a parameterless function has none.
          { name: "ping" },
        ],
      },
    ]);
  });

  test("properties and $defs named by Object.prototype members are kept as properties, and an unknown $ref is an object", () => {
    // As parsed from a client's JSON: "__proto__" is an own key there, not the prototype.
    const parameters = JSON.parse(`{
      "type": "object",
      "properties": {
        "__proto__": { "type": "string" },
        "constructor": { "$ref": "#/$defs/constructor" },
        "toString": { "$ref": "#/$defs/valueOf" },
        "hasOwnProperty": { "$ref": "#/definitions/__proto__" }
      },
      "required": ["__proto__", "constructor"],
      "$defs": { "constructor": { "type": "integer" } }
    }`);
    const { value } = codec.encodeRequest(request({ tools: [{ name: "f", parameters }] }), upstream);
    const encoded = JSON.parse(JSON.stringify(value.tools)) as Array<{ functionDeclarations: Array<{ parameters: Record<string, unknown> }> }>;
    expect(encoded[0]!.functionDeclarations[0]!.parameters).toEqual(
      JSON.parse(`{
        "type": "object",
        "properties": {
          "__proto__": { "type": "string" },
          "constructor": { "type": "integer" },
          "toString": { "type": "object" },
          "hasOwnProperty": { "type": "object" }
        },
        "propertyOrdering": ["__proto__", "constructor", "toString", "hasOwnProperty"],
        "required": ["__proto__", "constructor"]
      }`),
    );
  });

  test("tool choices map to functionCallingConfig modes", () => {
    const config = (toolChoice: IrRequest["toolChoice"]) => codec.encodeRequest(request({ toolChoice }), upstream).value.toolConfig;
    expect(config({ type: "auto" })).toEqual({ functionCallingConfig: { mode: "AUTO" } });
    expect(config({ type: "required" })).toEqual({ functionCallingConfig: { mode: "ANY" } });
    expect(config({ type: "none" })).toEqual({ functionCallingConfig: { mode: "NONE" } });
    expect(config({ type: "tool", name: "f" })).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["f"] } });
  });

  test("generation params, JSON schema output and reasoning effort go into generationConfig", () => {
    const schema = { type: "object", additionalProperties: false, properties: { city: { type: "string" } } };
    const { value, warnings } = codec.encodeRequest(
      request({
        responseFormat: { type: "json_schema", name: "city", schema, strict: true },
        params: { maxTokens: 100, temperature: 0.3, topP: 0.8, topK: 20, seed: 9, stop: ["X"], presencePenalty: 0.5, frequencyPenalty: 0.6, reasoningEffort: "xhigh" },
      }),
      upstream,
    );
    expect(value.generationConfig).toEqual({
      maxOutputTokens: 100,
      temperature: 0.3,
      topP: 0.8,
      topK: 20,
      seed: 9,
      stopSequences: ["X"],
      presencePenalty: 0.5,
      frequencyPenalty: 0.6,
      responseMimeType: "application/json",
      responseSchema: { type: "object", properties: { city: { type: "string" } } },
      thinkingConfig: { thinkingLevel: "high", includeThoughts: true },
    });
    expect(warnings.map((warning) => [warning.code, warning.field])).toEqual([["unsupported_value", "reasoning_effort"]]);
  });

  test("a thinking budget is sent as thinkingBudget, never together with a level", () => {
    const { value, warnings } = codec.encodeRequest(request({ params: { thinkingBudgetTokens: 2048, reasoningEffort: "low" } }), upstream);
    expect(value.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } });
    expect(warnings.map((warning) => warning.field)).toEqual(["reasoning_effort"]);
  });

  test("same-protocol extras come back: server tools appended, generationConfig merged, pass-through fields copied", () => {
    const decoded = codec.decodeRequest(readJsonFixture("request-agent-turn.json")).value;
    const { value, warnings } = codec.encodeRequest(decoded, upstream);
    expect(value.tools).toEqual([
      {
        functionDeclarations: [
          { name: "get_weather", description: "Current weather for a location", parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] } },
          { name: "get_time", description: "Local time in a timezone", parameters: { type: "object", properties: { timezone: { type: "string" } }, required: ["timezone"] } },
        ],
      },
      { googleSearch: {} },
    ]);
    expect(value.generationConfig).toMatchObject({ responseModalities: ["TEXT"], thinkingConfig: { thinkingBudget: 1024, includeThoughts: true }, seed: 42 });
    expect(value.safetySettings).toEqual([{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", threshold: "BLOCK_ONLY_HIGH" }]);
    expect(value.cachedContent).toBe("cachedContents/8n3x0c2kq9");
    expect(value.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } });
    expect(warnings).toEqual([]);
  });

  test("a decoded Gemini request re-encodes its history with every part, signature and response intact", () => {
    const original = readJsonFixture("request-agent-turn.json");
    const { value } = codec.encodeRequest(codec.decodeRequest(original).value, upstream);
    const [first, second, third, fourth] = original.contents as Array<{ role?: string; parts: unknown[] }>;
    // The trailing role-less user content merges into the user content before it (same role).
    expect(value.contents).toEqual([first, second, { role: "user", parts: [...(third?.parts ?? []), ...(fourth?.parts ?? [])] }]);
    expect(value.systemInstruction).toEqual({ parts: [{ text: "You are a careful travel assistant.\nAlways state units." }] });
  });

  test("foreign extras, a disabled parallel flag and mid-conversation system messages are reported", () => {
    const { value, warnings } = codec.encodeRequest(
      request({
        parallelToolCalls: false,
        messages: [
          { role: "user", content: [{ type: "text", text: "Hi" }] },
          { role: "system", content: [{ type: "text", text: "Use metric." }] },
        ],
        extras: { protocol: "anthropic-messages", fields: { metadata: { user_id: "u" } } },
      }),
      upstream,
    );
    expect(value).not.toHaveProperty("metadata");
    expect(value.systemInstruction).toEqual({ parts: [{ text: "Use metric." }] });
    expect(warnings.map((warning) => [warning.code, warning.field])).toEqual([
      ["moved_content", "messages[1]"],
      ["unsupported_field", "parallel_tool_calls"],
      ["unsupported_field", "metadata"],
    ]);
  });

  test("invalid tool-call arguments are sent as {} with a warning", () => {
    const { value, warnings } = codec.encodeRequest(
      request({ messages: [{ role: "assistant", content: [{ type: "tool_call", id: "c1", name: "f", arguments: "[1,2]" }] }] }),
      upstream,
    );
    expect(value.contents).toEqual([{ role: "model", parts: [{ functionCall: { name: "f", args: {} } }] }]);
    expect(warnings[0]?.code).toBe("invalid_tool_arguments");
  });
});

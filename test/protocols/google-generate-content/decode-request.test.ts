import { describe, expect, test } from "bun:test";
import { IrDecodeError } from "../../../src/ir";
import { googleGenerateContentCodec as codec } from "../../../src/protocols/google-generate-content";
import { readJsonFixture } from "./stream-replay";

const minimal = { model: "google/gemini-2.5-flash", stream: false, contents: [{ role: "user", parts: [{ text: "Hi" }] }] };

function decodeError(body: unknown): string {
  try {
    codec.decodeRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(IrDecodeError);
    return (error as Error).message;
  }
  throw new Error("expected an IrDecodeError");
}

describe("google-generate-content decodeRequest validation", () => {
  test("a body that is not an object is rejected", () => {
    expect(decodeError("hi")).toBe("request body must be a JSON object");
  });

  test("a missing injected model is rejected", () => {
    expect(decodeError({ contents: [] })).toBe("model is required and must be a string");
  });

  test("contents that are not an array are rejected", () => {
    expect(decodeError({ model: "m", contents: { parts: [] } })).toBe("contents must be an array");
  });

  test("an unknown role is rejected with its position", () => {
    expect(decodeError({ model: "m", contents: [{ role: "assistant", parts: [] }] })).toBe(
      'contents[0].role must be "user", "model", "function" or "tool"',
    );
  });

  test("wrongly typed generation parameters are rejected by name", () => {
    expect(decodeError({ ...minimal, generationConfig: { temperature: "warm" } })).toBe("generationConfig.temperature must be a number");
    expect(decodeError({ ...minimal, generationConfig: { maxOutputTokens: 10.5 } })).toBe("generationConfig.maxOutputTokens must be an integer");
    expect(decodeError({ ...minimal, generationConfig: { stopSequences: "END" } })).toBe("generationConfig.stopSequences must be an array of strings");
  });

  test("thinkingLevel and thinkingBudget together are rejected", () => {
    expect(decodeError({ ...minimal, generationConfig: { thinkingConfig: { thinkingLevel: "low", thinkingBudget: 100 } } })).toBe(
      "generationConfig.thinkingConfig accepts thinkingLevel or thinkingBudget, not both",
    );
  });

  test("models must be an array of at most 8 strings", () => {
    expect(decodeError({ ...minimal, models: [1] })).toBe("models must be an array of strings");
    expect(decodeError({ ...minimal, models: Array.from({ length: 9 }, () => "m") })).toBe("models must list at most 8 model ids");
  });

  test("an unknown function calling mode is rejected", () => {
    expect(decodeError({ ...minimal, toolConfig: { functionCallingConfig: { mode: "SOMETIMES" } } })).toContain("functionCallingConfig.mode");
  });
});

describe("google-generate-content decodeRequest mapping", () => {
  const { value: ir, warnings } = codec.decodeRequest(readJsonFixture("request-agent-turn.json"));

  test("systemInstruction parts are joined with a newline", () => {
    expect(ir.system).toBe("You are a careful travel assistant.\nAlways state units.");
  });

  test("user parts map text, inlineData images and fileData files", () => {
    expect(ir.messages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Weather and time in Paris? My photo:" },
        { type: "image", mediaType: "image/jpeg", data: "/9j/4AAQSkZJRgABAQAAAQABAAD" },
        { type: "file", mediaType: "application/pdf", url: "https://generativelanguage.googleapis.com/v1beta/files/abc123" },
      ],
    });
  });

  test("model thoughts keep their signature and function calls get stable positional ids", () => {
    expect(ir.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "Two independent lookups.", signature: "CiQB0e2Kb7xF3mQ9vZ2p", signatureProtocol: "google-generate-content" },
        { type: "tool_call", id: "call_1_1", name: "get_weather", arguments: '{"location":"Paris, France"}', signature: "CiQB0e2Kb7xF3mQ9vZ2pL8sT" },
        { type: "tool_call", id: "call_1_2", name: "get_time", arguments: '{"timezone":"Europe/Paris"}' },
      ],
    });
    expect(codec.decodeRequest(readJsonFixture("request-agent-turn.json")).value.messages[1]).toEqual(ir.messages[1]);
  });

  test("functionResponse parts become tool messages pointing at the matching synthesised call id", () => {
    expect(ir.messages.slice(2, 4)).toEqual([
      {
        role: "tool",
        content: [{ type: "tool_result", callId: "call_1_1", toolName: "get_weather", output: '{"temperature":18,"unit":"celsius","conditions":"light rain"}' }],
      },
      { role: "tool", content: [{ type: "tool_result", callId: "call_1_2", toolName: "get_time", output: "14:05" }] },
    ]);
  });

  test("a content without a role is a user message", () => {
    expect(ir.messages[4]).toEqual({ role: "user", content: [{ type: "text", text: "Keep it short." }] });
  });

  test("a functionResponse without a matching call uses its explicit id, else its name, as the call id", () => {
    const { value } = codec.decodeRequest({
      model: "m",
      contents: [
        { role: "function", parts: [{ functionResponse: { name: "lookup", response: { error: "not found" } } }] },
        { role: "tool", parts: [{ functionResponse: { id: "fc_9", name: "lookup", response: { output: "ok" } } }] },
      ],
    });
    expect(value.messages).toEqual([
      { role: "tool", content: [{ type: "tool_result", callId: "lookup", toolName: "lookup", output: "not found", isError: true }] },
      { role: "tool", content: [{ type: "tool_result", callId: "fc_9", toolName: "lookup", output: "ok" }] },
    ]);
  });

  test("functionDeclarations become tools; googleSearch rides in extras with safetySettings and cachedContent", () => {
    expect(ir.tools?.map((tool) => tool.name)).toEqual(["get_weather", "get_time"]);
    expect(ir.extras?.protocol).toBe("google-generate-content");
    expect(ir.extras?.fields).toEqual({
      tools: [{ googleSearch: {} }],
      generationConfig: { responseModalities: ["TEXT"], thinkingConfig: { includeThoughts: true } },
      safetySettings: [{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", threshold: "BLOCK_ONLY_HIGH" }],
      cachedContent: "cachedContents/8n3x0c2kq9",
    });
  });

  test("ANY with a single allowed function is a forced tool", () => {
    expect(ir.toolChoice).toEqual({ type: "tool", name: "get_weather" });
  });

  test("generationConfig maps every sampling parameter and the thinking budget", () => {
    expect(ir.params).toEqual({
      temperature: 0.7,
      topP: 0.95,
      topK: 40,
      maxTokens: 2048,
      seed: 42,
      stop: ["END"],
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      thinkingBudgetTokens: 1024,
    });
    expect(ir.stream).toBe(true);
    expect(warnings).toEqual([]);
  });

  test("function calling modes AUTO, NONE and ANY map to auto, none and required", () => {
    const choice = (functionCallingConfig: unknown) => codec.decodeRequest({ ...minimal, toolConfig: { functionCallingConfig } }).value.toolChoice;
    expect(choice({ mode: "AUTO" })).toEqual({ type: "auto" });
    expect(choice({ mode: "NONE" })).toEqual({ type: "none" });
    expect(choice({ mode: "ANY" })).toEqual({ type: "required" });
  });

  test("ANY with several allowed functions is required, with a warning that the subset was lost", () => {
    const { value, warnings: lost } = codec.decodeRequest({ ...minimal, toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["a", "b"] } } });
    expect(value.toolChoice).toEqual({ type: "required" });
    expect(lost.map((warning) => warning.field)).toEqual(["toolConfig.functionCallingConfig.allowedFunctionNames"]);
  });

  test("responseMimeType JSON with a schema is a json_schema format named response", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const withSchema = codec.decodeRequest({ ...minimal, generationConfig: { responseMimeType: "application/json", responseSchema: schema } }).value;
    expect(withSchema.responseFormat).toEqual({ type: "json_schema", name: "response", schema });
    const bare = codec.decodeRequest({ ...minimal, generationConfig: { responseMimeType: "application/json" } }).value;
    expect(bare.responseFormat).toEqual({ type: "json_object" });
  });

  test("thinkingLevel maps to reasoningEffort and a zero budget to none", () => {
    const level = codec.decodeRequest({ ...minimal, generationConfig: { thinkingConfig: { thinkingLevel: "HIGH" } } }).value;
    expect(level.params.reasoningEffort).toBe("high");
    const off = codec.decodeRequest({ ...minimal, generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }).value;
    expect(off.params).toEqual({ reasoningEffort: "none" });
  });

  test("unsupported parts are skipped with a warning", () => {
    const { value, warnings: skipped } = codec.decodeRequest({
      model: "m",
      contents: [{ role: "model", parts: [{ executableCode: { language: "PYTHON", code: "print(1)" } }, { text: "1" }] }],
    });
    expect(value.messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "1" }] }]);
    expect(skipped).toEqual([{ code: "dropped_content", field: "contents[0].parts[0]", message: expect.any(String) }]);
  });

  test("a signature on an ordinary text part is kept in an empty signed reasoning part before it", () => {
    const { value } = codec.decodeRequest({ model: "m", contents: [{ role: "model", parts: [{ text: "Answer", thoughtSignature: "sigT" }] }] });
    expect(value.messages[0]?.content).toEqual([
      { type: "reasoning", text: "", signature: "sigT", signatureProtocol: "google-generate-content" },
      { type: "text", text: "Answer" },
    ]);
  });
});

import { IrDecodeError, type EncodeRequestContext, type Encoded, type IrReasoningEffort, type IrRequest, type IrWarning } from "../../ir";
import { encodeGeminiContents } from "./encode-content";
import { isRecord, ownField, setOwn, type JsonObject } from "../shared/json-fields";
import { sanitizeGeminiSchema } from "./sanitize-schema";

/** IR effort -> Gemini `thinkingLevel` (https://ai.google.dev/gemini-api/docs/thinking#thinking-levels). */
const THINKING_LEVEL: Record<IrReasoningEffort, string> = {
  none: "minimal",
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

function encodeToolConfig(request: IrRequest): JsonObject | undefined {
  const choice = request.toolChoice;
  if (choice === undefined) return undefined;
  if (choice.type === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice.type === "required") return { functionCallingConfig: { mode: "ANY" } };
  if (choice.type === "none") return { functionCallingConfig: { mode: "NONE" } };
  return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.name] } };
}

function encodeThinkingConfig(request: IrRequest, warnings: IrWarning[]): JsonObject | undefined {
  const { reasoningEffort, thinkingBudgetTokens } = request.params;
  if (thinkingBudgetTokens !== undefined) {
    // Gemini rejects thinkingLevel together with thinkingBudget; the explicit budget is the more precise of the two.
    if (reasoningEffort !== undefined) {
      warnings.push({ code: "unsupported_field", field: "reasoning_effort", message: "Gemini takes a thinking budget or a level, not both; the budget was sent" });
    }
    return { thinkingBudget: thinkingBudgetTokens, includeThoughts: true };
  }
  if (reasoningEffort === undefined) return undefined;
  const level = THINKING_LEVEL[reasoningEffort];
  if (level !== reasoningEffort) {
    warnings.push({ code: "unsupported_value", field: "reasoning_effort", message: `reasoning effort "${reasoningEffort}" is sent to Gemini as "${level}"` });
  }
  // Thought summaries are only returned with includeThoughts; a client asking for reasoning wants to see it.
  return { thinkingLevel: level, includeThoughts: reasoningEffort !== "none" };
}

function encodeGenerationConfig(request: IrRequest, warnings: IrWarning[]): JsonObject {
  const params = request.params;
  const config: JsonObject = {};
  if (params.maxTokens !== undefined) config.maxOutputTokens = params.maxTokens;
  if (params.temperature !== undefined) config.temperature = params.temperature;
  if (params.topP !== undefined) config.topP = params.topP;
  if (params.topK !== undefined) config.topK = params.topK;
  if (params.seed !== undefined) config.seed = params.seed;
  if (params.stop !== undefined && params.stop.length > 0) config.stopSequences = params.stop;
  if (params.presencePenalty !== undefined) config.presencePenalty = params.presencePenalty;
  if (params.frequencyPenalty !== undefined) config.frequencyPenalty = params.frequencyPenalty;
  const format = request.responseFormat;
  if (format?.type === "json_object") config.responseMimeType = "application/json";
  if (format?.type === "json_schema") {
    config.responseMimeType = "application/json";
    const schema = sanitizeGeminiSchema(format.schema);
    if (schema !== undefined) config.responseSchema = schema;
  }
  const thinking = encodeThinkingConfig(request, warnings);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  return config;
}

/** Copies same-protocol extras back; generationConfig and toolConfig merge one level deep, tools append. */
function applyExtras(body: JsonObject, fields: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(fields)) {
    const current = ownField(body, key);
    if (key === "tools" && Array.isArray(value)) body.tools = [...(Array.isArray(current) ? current : []), ...value];
    else if ((key === "generationConfig" || key === "toolConfig") && isRecord(value)) {
      const merged: JsonObject = { ...value, ...(isRecord(current) ? current : {}) };
      if (isRecord(value.thinkingConfig) && isRecord(merged.thinkingConfig) && merged.thinkingConfig !== value.thinkingConfig) {
        merged.thinkingConfig = { ...value.thinkingConfig, ...merged.thinkingConfig };
      }
      body[key] = merged;
    } else if (current === undefined) setOwn(body, key, value);
  }
}

/**
 * IR -> Gemini generateContent upstream body. `model` and streaming live in the URL
 * (`models/{id}:streamGenerateContent?alt=sse`), so neither is written into the body:
 * Gemini rejects unknown fields.
 */
export function encodeGeminiRequest(request: IrRequest, _context: EncodeRequestContext): Encoded<JsonObject> {
  // generateContent has no stored responses; `store: true` cannot be honoured.
  if (request.store === true) throw new IrDecodeError("store: true is not supported by a Google generateContent upstream");
  const warnings: IrWarning[] = [];
  const { system, contents } = encodeGeminiContents(request.messages, warnings);
  const body: JsonObject = { contents };
  const systemText = (request.system === undefined ? system : [request.system, ...system]).join("\n");
  if (systemText !== "") body.systemInstruction = { parts: [{ text: systemText }] };

  if (request.tools !== undefined && request.tools.length > 0) {
    const functionDeclarations = request.tools.map((tool) => {
      const declaration: JsonObject = { name: tool.name };
      if (tool.description !== undefined) declaration.description = tool.description;
      const parameters = sanitizeGeminiSchema(tool.parameters);
      if (parameters !== undefined) declaration.parameters = parameters;
      return declaration;
    });
    body.tools = [{ functionDeclarations }];
  }
  const toolConfig = encodeToolConfig(request);
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  if (request.parallelToolCalls === false) {
    warnings.push({ code: "unsupported_field", field: "parallel_tool_calls", message: "Gemini cannot disable parallel function calls" });
  }
  const generationConfig = encodeGenerationConfig(request, warnings);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;

  const extras = request.extras;
  if (extras?.protocol === "google-generate-content") applyExtras(body, extras.fields);
  else if (extras !== undefined) {
    for (const key of Object.keys(extras.fields)) {
      warnings.push({ code: "unsupported_field", field: key, message: `${extras.protocol} field ${key} cannot be sent to Gemini` });
    }
  }
  return { value: body, warnings };
}

import { decodeRequestHead, finishRequest } from "../shared/decode-request-head";
import {
  IrDecodeError,
  type Encoded,
  type IrReasoningEffort,
  type IrRequest,
  type IrTool,
  type IrWarning,
} from "../../ir";
import { setParam } from "../shared/set-param";
import { decodeGeminiContents } from "./decode-content";
import { decodeGeminiSchema } from "./decode-schema";
import { isRecord, readInteger, readTokenCount, readNumber, readObject, readString, requireString, readStringArray, setOwn, type JsonObject } from "../shared/json-fields";

/** Top-level fields mapped into the IR; the rest (safetySettings, cachedContent, labels, …) rides in extras. */
const MAPPED_FIELDS = new Set(["model", "models", "stream", "contents", "systemInstruction", "tools", "toolConfig", "generationConfig"]);

/** Gemini 3 `thinkingLevel` values (https://ai.google.dev/gemini-api/docs/thinking#thinking-levels). */
const THINKING_LEVELS = new Set(["minimal", "low", "medium", "high"]);

function decodeSystemInstruction(value: unknown, request: IrRequest, warnings: IrWarning[]): void {
  if (value === undefined || value === null) return;
  if (typeof value === "string") {
    request.system = value;
    return;
  }
  if (!isRecord(value) || !Array.isArray(value.parts)) throw new IrDecodeError("systemInstruction must be a content with parts");
  const texts: string[] = [];
  value.parts.forEach((part, index) => {
    if (isRecord(part) && typeof part.text === "string") texts.push(part.text);
    else warnings.push({ code: "dropped_content", field: `systemInstruction.parts[${index}]`, message: "only text parts are kept in the system prompt" });
  });
  request.system = texts.join("\n");
}

/** A declaration's arguments schema as JSON Schema: `parameters` is a Gemini Schema, `parametersJsonSchema` already JSON Schema. */
function declarationParameters(declaration: JsonObject, path: string, warnings: IrWarning[]): JsonObject {
  // Gemini refuses both at once; so does this decoder, rather than pick one.
  if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
    throw new IrDecodeError(`${path} accepts parameters or parametersJsonSchema, not both`);
  }
  const parameters = readObject(declaration, "parameters", `${path}.parameters`);
  if (parameters !== undefined) return decodeGeminiSchema(parameters, `${path}.parameters`, warnings);
  return readObject(declaration, "parametersJsonSchema", `${path}.parametersJsonSchema`) ?? { type: "object", properties: {} };
}

/** functionDeclarations become IrTools; googleSearch, codeExecution, urlContext, … only exist on this wire. */
function decodeTools(value: unknown, serverTools: JsonObject[], warnings: IrWarning[]): IrTool[] {
  if (!Array.isArray(value)) throw new IrDecodeError("tools must be an array");
  const tools: IrTool[] = [];
  value.forEach((tool, index) => {
    const path = `tools[${index}]`;
    if (!isRecord(tool)) throw new IrDecodeError(`${path} must be an object`);
    const { functionDeclarations, ...others } = tool;
    if (Object.keys(others).length > 0) serverTools.push(others);
    if (functionDeclarations === undefined) return;
    if (!Array.isArray(functionDeclarations)) throw new IrDecodeError(`${path}.functionDeclarations must be an array`);
    functionDeclarations.forEach((declaration, declarationIndex) => {
      const declarationPath = `${path}.functionDeclarations[${declarationIndex}]`;
      if (!isRecord(declaration)) throw new IrDecodeError(`${declarationPath} must be an object`);
      const name = requireString(declaration, "name", `${declarationPath}.name`);
      const parameters = declarationParameters(declaration, declarationPath, warnings);
      for (const key of ["response", "responseJsonSchema"]) {
        if (declaration[key] === undefined) continue;
        warnings.push({ code: "unsupported_field", field: `${declarationPath}.${key}`, message: "a function's response schema has no place in the translated request" });
      }
      const irTool: IrTool = { name, parameters };
      const description = readString(declaration, "description", `${declarationPath}.description`);
      if (description !== undefined) irTool.description = description;
      tools.push(irTool);
    });
  });
  return tools;
}

/** functionCallingConfig (https://ai.google.dev/api/caching#FunctionCallingConfig) -> tool choice. */
function decodeToolConfig(toolConfig: JsonObject, request: IrRequest, warnings: IrWarning[], extras: JsonObject): void {
  const { functionCallingConfig, ...rest } = toolConfig;
  if (Object.keys(rest).length > 0) extras.toolConfig = rest;
  if (functionCallingConfig === undefined) return;
  if (!isRecord(functionCallingConfig)) throw new IrDecodeError("toolConfig.functionCallingConfig must be an object");
  const mode = readString(functionCallingConfig, "mode", "toolConfig.functionCallingConfig.mode") ?? "AUTO";
  const allowed = readStringArray(functionCallingConfig, "allowedFunctionNames", "toolConfig.functionCallingConfig.allowedFunctionNames");
  const [onlyName] = allowed ?? [];
  if (mode === "ANY" && allowed?.length === 1 && onlyName !== undefined) request.toolChoice = { type: "tool", name: onlyName };
  else if (mode === "ANY") request.toolChoice = { type: "required" };
  else if (mode === "NONE") request.toolChoice = { type: "none" };
  else if (mode === "AUTO" || mode === "VALIDATED" || mode === "MODE_UNSPECIFIED") request.toolChoice = { type: "auto" };
  else throw new IrDecodeError('toolConfig.functionCallingConfig.mode must be "AUTO", "ANY", "NONE" or "VALIDATED"');
  if (mode === "VALIDATED") warnings.push({ code: "unsupported_value", field: "toolConfig.functionCallingConfig.mode", message: "VALIDATED is treated as AUTO" });
  if (allowed !== undefined && allowed.length > 0 && request.toolChoice.type !== "tool") {
    warnings.push({ code: "unsupported_field", field: "toolConfig.functionCallingConfig.allowedFunctionNames", message: "only a single allowed function can be carried (as a forced tool)" });
  }
}

/** generationConfig keys mapped into IR params; the rest (responseModalities, candidateCount, …) rides in extras. */
const GENERATION_FIELDS = new Set([
  "temperature", "topP", "topK", "maxOutputTokens", "seed", "stopSequences", "presencePenalty", "frequencyPenalty",
  "responseMimeType", "responseSchema", "responseJsonSchema", "thinkingConfig",
]);

function decodeThinkingConfig(thinkingConfig: JsonObject, request: IrRequest, rest: JsonObject): void {
  const path = "generationConfig.thinkingConfig";
  const { thinkingLevel, thinkingBudget, ...thinkingRest } = thinkingConfig;
  if (thinkingLevel !== undefined && thinkingBudget !== undefined) {
    throw new IrDecodeError(`${path} accepts thinkingLevel or thinkingBudget, not both`);
  }
  const level = readString(thinkingConfig, "thinkingLevel", `${path}.thinkingLevel`)?.toLowerCase();
  if (level !== undefined) {
    if (!THINKING_LEVELS.has(level)) throw new IrDecodeError(`${path}.thinkingLevel must be "minimal", "low", "medium" or "high"`);
    request.params.reasoningEffort = level as IrReasoningEffort;
  }
  const budget = readTokenCount(thinkingConfig, "thinkingBudget", `${path}.thinkingBudget`, -1);
  // 0 turns thinking off; -1 asks for a dynamic budget, which has no IR form (kept for Gemini).
  if (budget !== undefined && budget > 0) request.params.thinkingBudgetTokens = budget;
  else if (budget === 0) request.params.reasoningEffort = "none";
  else if (budget !== undefined) thinkingRest.thinkingBudget = budget;
  if (Object.keys(thinkingRest).length > 0) rest.thinkingConfig = thinkingRest;
}

function decodeGenerationConfig(config: JsonObject, request: IrRequest, extras: JsonObject, warnings: IrWarning[]): void {
  const path = (key: string) => `generationConfig.${key}`;
  const params = request.params;
  const rest: JsonObject = {};
  for (const [key, value] of Object.entries(config)) if (!GENERATION_FIELDS.has(key)) setOwn(rest, key, value);

  setParam(params, "temperature", readNumber(config, "temperature", path("temperature")));
  setParam(params, "topP", readNumber(config, "topP", path("topP")));
  setParam(params, "topK", readTokenCount(config, "topK", path("topK"), 0));
  setParam(params, "maxTokens", readTokenCount(config, "maxOutputTokens", path("maxOutputTokens")));
  setParam(params, "seed", readInteger(config, "seed", path("seed")));
  setParam(params, "presencePenalty", readNumber(config, "presencePenalty", path("presencePenalty")));
  setParam(params, "frequencyPenalty", readNumber(config, "frequencyPenalty", path("frequencyPenalty")));
  setParam(params, "stop", readStringArray(config, "stopSequences", path("stopSequences")));

  const mimeType = readString(config, "responseMimeType", path("responseMimeType"));
  if (mimeType === "application/json") {
    // responseSchema is a Gemini Schema, responseJsonSchema already JSON Schema; Gemini refuses both at once.
    if (config.responseSchema !== undefined && config.responseJsonSchema !== undefined) {
      throw new IrDecodeError("generationConfig accepts responseSchema or responseJsonSchema, not both");
    }
    const geminiSchema = readObject(config, "responseSchema", path("responseSchema"));
    const schema =
      geminiSchema === undefined
        ? readObject(config, "responseJsonSchema", path("responseJsonSchema"))
        : decodeGeminiSchema(geminiSchema, path("responseSchema"), warnings);
    // Gemini schemas are unnamed; "response" is the name OpenAI wires require.
    request.responseFormat = schema === undefined ? { type: "json_object" } : { type: "json_schema", name: "response", schema };
  } else if (mimeType !== undefined && mimeType !== "text/plain") {
    // text/x.enum and other Gemini-only output modes stay same-protocol.
    for (const key of ["responseMimeType", "responseSchema", "responseJsonSchema"]) if (config[key] !== undefined) rest[key] = config[key];
  }

  const thinkingConfig = readObject(config, "thinkingConfig", path("thinkingConfig"));
  if (thinkingConfig !== undefined) decodeThinkingConfig(thinkingConfig, request, rest);
  if (Object.keys(rest).length > 0) extras.generationConfig = rest;
}

/** Gemini generateContent body (`model` and `stream` injected by the HTTP layer) -> IR. */
export function decodeGeminiRequest(value: unknown): Encoded<IrRequest> {
  const { body, request, warnings } = decodeRequestHead(value, "contents", (turns, warnings) =>
    decodeGeminiContents(turns, { warnings, openCalls: new Map() }),
  );
  decodeSystemInstruction(body.systemInstruction, request, warnings);

  const extras: JsonObject = {};
  const serverTools: JsonObject[] = [];
  if (body.tools !== undefined && body.tools !== null) {
    const tools = decodeTools(body.tools, serverTools, warnings);
    if (tools.length > 0) request.tools = tools;
  }
  if (serverTools.length > 0) extras.tools = serverTools;
  const toolConfig = readObject(body, "toolConfig");
  if (toolConfig !== undefined) decodeToolConfig(toolConfig, request, warnings, extras);
  const generationConfig = readObject(body, "generationConfig");
  if (generationConfig !== undefined) decodeGenerationConfig(generationConfig, request, extras, warnings);

  return finishRequest(body, MAPPED_FIELDS, extras, { request, warnings, protocol: "google-generate-content" });
}

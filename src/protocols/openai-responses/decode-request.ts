import { readFallbackModels } from "../shared/fallback-models";
import { IrDecodeError, type Encoded, type IrGenerationParams, type IrRequest, type IrWarning } from "../../ir";
import { collectUnmapped } from "../openai-shared/extras";
import {
  isRecord,
  optionalBoolean,
  optionalNumber,
  optionalReasoningEffort,
  optionalString,
  optionalTokenLimit,
  readModel,
  type JsonObject,
} from "../openai-shared/read-fields";
import { decodeResponsesInput } from "./decode-input-items";
import { decodeResponsesFormat, decodeResponsesToolChoice, decodeResponsesTools } from "./decode-tools";

const MAPPED = new Set([
  "model",
  "models",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "text",
  "reasoning",
  "max_output_tokens",
  "temperature",
  "top_p",
  "parallel_tool_calls",
  "store",
  "stream",
]);

/** Switchyard-only fields that never reach an upstream (see the chat decoder). */
const STRIPPED = new Set(["session_id", "provider"]);

/**
 * Responses client body -> IR. `instructions` and system/developer input
 * items are joined with "\n" into the system prompt. Everything not mapped — `metadata`,
 * `include`, `previous_response_id`, `store`, `truncation`, hosted tools, `text.verbosity`,
 * `reasoning.summary` — rides in extras for a Responses upstream.
 */
export function decodeResponsesRequest(body: unknown): Encoded<IrRequest> {
  if (!isRecord(body)) throw new IrDecodeError("request body must be a JSON object");
  const warnings: IrWarning[] = [];
  const model = readModel(body);
  const { systemTexts, messages } = decodeResponsesInput(body.input, warnings);
  const instructions = optionalString(body.instructions, "instructions");
  const system = [...(instructions !== undefined && instructions !== "" ? [instructions] : []), ...systemTexts];

  const extraFields = collectUnmapped(body, MAPPED, STRIPPED);
  if (body.provider !== undefined) {
    warnings.push({ code: "unsupported_field", field: "provider", message: "provider routing preferences are not supported yet; ignored" });
  }
  const request: IrRequest = {
    model,
    messages,
    params: decodeParams(body, extraFields),
    stream: optionalBoolean(body.stream, "stream") ?? false,
  };
  const models = readFallbackModels(body.models);
  if (models !== undefined) request.models = models;
  if (system.length > 0) request.system = system.join("\n");

  if (body.tools !== undefined && body.tools !== null) {
    const { tools, hosted } = decodeResponsesTools(body.tools);
    if (tools.length > 0) request.tools = tools;
    // Hosted tools reach only a Responses upstream; other encoders warn that they were dropped.
    if (hosted.length > 0) extraFields.tools = hosted;
  }
  if (body.tool_choice !== undefined && body.tool_choice !== null) {
    const toolChoice = decodeResponsesToolChoice(body.tool_choice);
    if (toolChoice !== undefined) request.toolChoice = toolChoice;
    else extraFields.tool_choice = body.tool_choice;
  }
  const parallelToolCalls = optionalBoolean(body.parallel_tool_calls, "parallel_tool_calls");
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;
  const store = optionalBoolean(body.store, "store");
  if (store !== undefined) request.store = store;

  if (body.text !== undefined && body.text !== null) {
    if (!isRecord(body.text)) throw new IrDecodeError("text must be an object");
    const { format, ...otherText } = body.text;
    if (format !== undefined && format !== null) request.responseFormat = decodeResponsesFormat(format);
    if (Object.keys(otherText).length > 0) extraFields.text = otherText;
  }

  if (Object.keys(extraFields).length > 0) request.extras = { protocol: "openai-responses", fields: extraFields };
  return { value: request, warnings };
}

function decodeParams(body: JsonObject, extraFields: JsonObject): IrGenerationParams {
  const params: IrGenerationParams = {};
  const maxTokens = optionalTokenLimit(body.max_output_tokens, "max_output_tokens");
  if (maxTokens !== undefined) params.maxTokens = maxTokens;
  const temperature = optionalNumber(body.temperature, "temperature");
  if (temperature !== undefined) params.temperature = temperature;
  const topP = optionalNumber(body.top_p, "top_p");
  if (topP !== undefined) params.topP = topP;
  if (body.reasoning !== undefined && body.reasoning !== null) {
    if (!isRecord(body.reasoning)) throw new IrDecodeError("reasoning must be an object");
    const { effort, ...otherReasoning } = body.reasoning;
    const reasoningEffort = optionalReasoningEffort(effort, "reasoning.effort");
    if (reasoningEffort !== undefined) params.reasoningEffort = reasoningEffort;
    if (Object.keys(otherReasoning).length > 0) extraFields.reasoning = otherReasoning;
  }
  return params;
}

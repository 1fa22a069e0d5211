import { readFallbackModels } from "../shared/fallback-models";
import { IrDecodeError, type Encoded, type IrGenerationParams, type IrRequest, type IrWarning } from "../../ir";
import { decodeResponseFormat } from "../openai-shared/decode-definitions";
import { decodeToolFields } from "../openai-shared/decode-tool-fields";
import { collectUnmapped, readPartlyMapped } from "../openai-shared/extras";
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
import { setParam } from "../shared/set-param";
import { decodeResponsesInput } from "./decode-input-items";

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

  const extraFields = collectUnmapped(body, MAPPED, warnings);
  const request: IrRequest = {
    model,
    messages,
    params: decodeParams(body, extraFields),
    stream: optionalBoolean(body.stream, "stream") ?? false,
  };
  const models = readFallbackModels(body.models);
  if (models !== undefined) request.models = models;
  if (system.length > 0) request.system = system.join("\n");

  decodeToolFields(body, request, extraFields, "flat");
  const format = readPartlyMapped(body, "text", "format", extraFields);
  if (format !== undefined && format !== null) request.responseFormat = decodeResponseFormat(format, "text.format", "flat");

  if (Object.keys(extraFields).length > 0) request.extras = { protocol: "openai-responses", fields: extraFields };
  return { value: request, warnings };
}

function decodeParams(body: JsonObject, extraFields: JsonObject): IrGenerationParams {
  const params: IrGenerationParams = {};
  setParam(params, "maxTokens", optionalTokenLimit(body.max_output_tokens, "max_output_tokens"));
  setParam(params, "temperature", optionalNumber(body.temperature, "temperature"));
  setParam(params, "topP", optionalNumber(body.top_p, "top_p"));
  setParam(params, "reasoningEffort", optionalReasoningEffort(readPartlyMapped(body, "reasoning", "effort", extraFields), "reasoning.effort"));
  return params;
}

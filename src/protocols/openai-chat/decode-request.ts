import { readFallbackModels } from "../shared/fallback-models";
import { IrDecodeError, type IrGenerationParams, type IrRequest, type IrWarning, type Encoded } from "../../ir";
import { decodeResponseFormat } from "../openai-shared/decode-definitions";
import { decodeToolFields } from "../openai-shared/decode-tool-fields";
import { collectUnmapped, readPartlyMapped } from "../openai-shared/extras";
import {
  isRecord,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalReasoningEffort,
  optionalStopSequences,
  optionalTokenLimit,
  readModel,
  type JsonObject,
} from "../openai-shared/read-fields";
import { setParam } from "../shared/set-param";
import { decodeChatMessages } from "./decode-messages";

/** Top-level fields this decoder maps into the IR; every other field rides in extras. */
const MAPPED = new Set([
  "model",
  "models",
  "messages",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "store",
  "response_format",
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "reasoning_effort",
  "stream",
  "stream_options",
]);

/** Chat completions client body -> IR. */
export function decodeChatRequest(body: unknown): Encoded<IrRequest> {
  if (!isRecord(body)) throw new IrDecodeError("request body must be a JSON object");
  const warnings: IrWarning[] = [];
  const model = readModel(body);
  const { system, messages } = decodeChatMessages(body.messages, warnings);

  const request: IrRequest = { model, messages, params: decodeParams(body), stream: false };
  const models = readFallbackModels(body.models);
  if (models !== undefined) request.models = models;
  if (system !== undefined) request.system = system;

  const extraFields = collectUnmapped(body, MAPPED, warnings);
  decodeToolFields(body, request, extraFields, "nested");
  if (body.response_format !== undefined && body.response_format !== null) {
    request.responseFormat = decodeResponseFormat(body.response_format, "response_format", "nested");
  }

  request.stream = optionalBoolean(body.stream, "stream") ?? false;
  const includeUsage = optionalBoolean(readPartlyMapped(body, "stream_options", "include_usage", extraFields), "stream_options.include_usage");
  if (includeUsage !== undefined) request.streamIncludeUsage = includeUsage;

  if (Object.keys(extraFields).length > 0) request.extras = { protocol: "openai-chat", fields: extraFields };
  return { value: request, warnings };
}

function decodeParams(body: JsonObject): IrGenerationParams {
  const params: IrGenerationParams = {};
  const maxTokens = optionalTokenLimit(body.max_tokens, "max_tokens");
  const maxCompletionTokens = optionalTokenLimit(body.max_completion_tokens, "max_completion_tokens");
  if (maxTokens !== undefined && maxCompletionTokens !== undefined && maxTokens !== maxCompletionTokens) {
    throw new IrDecodeError("max_tokens and max_completion_tokens are both set but differ; send one of them");
  }
  setParam(params, "maxTokens", maxCompletionTokens ?? maxTokens);
  setParam(params, "temperature", optionalNumber(body.temperature, "temperature"));
  setParam(params, "topP", optionalNumber(body.top_p, "top_p"));
  setParam(params, "stop", optionalStopSequences(body.stop, "stop"));
  setParam(params, "seed", optionalInteger(body.seed, "seed"));
  setParam(params, "presencePenalty", optionalNumber(body.presence_penalty, "presence_penalty"));
  setParam(params, "frequencyPenalty", optionalNumber(body.frequency_penalty, "frequency_penalty"));
  setParam(params, "reasoningEffort", optionalReasoningEffort(body.reasoning_effort, "reasoning_effort"));
  return params;
}

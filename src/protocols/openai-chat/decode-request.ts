import { readFallbackModels } from "../shared/fallback-models";
import { IrDecodeError, type IrGenerationParams, type IrRequest, type IrWarning, type Encoded } from "../../ir";
import { collectUnmapped } from "../openai-shared/extras";
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
import { decodeChatMessages } from "./decode-messages";
import { decodeChatResponseFormat, decodeChatToolChoice, decodeChatTools } from "./decode-tools";

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

/**
 * Switchyard-only fields that must never reach an upstream: `session_id` is a client
 * session tag and `provider` carries routing preferences that are
 * documented but not active yet.
 */
const STRIPPED = new Set(["session_id", "provider"]);

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

  const extraFields = collectUnmapped(body, MAPPED, STRIPPED);
  if (body.provider !== undefined) {
    warnings.push({ code: "unsupported_field", field: "provider", message: "provider routing preferences are not supported yet; ignored" });
  }

  if (body.tools !== undefined && body.tools !== null) {
    const { tools, foreign } = decodeChatTools(body.tools);
    if (tools.length > 0) request.tools = tools;
    if (foreign.length > 0) extraFields.tools = foreign;
  }
  if (body.tool_choice !== undefined && body.tool_choice !== null) {
    const toolChoice = decodeChatToolChoice(body.tool_choice);
    if (toolChoice !== undefined) request.toolChoice = toolChoice;
    else extraFields.tool_choice = body.tool_choice;
  }
  const parallelToolCalls = optionalBoolean(body.parallel_tool_calls, "parallel_tool_calls");
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;
  const store = optionalBoolean(body.store, "store");
  if (store !== undefined) request.store = store;
  if (body.response_format !== undefined && body.response_format !== null) {
    request.responseFormat = decodeChatResponseFormat(body.response_format);
  }

  request.stream = optionalBoolean(body.stream, "stream") ?? false;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!isRecord(body.stream_options)) throw new IrDecodeError("stream_options must be an object");
    const { include_usage: includeUsage, ...otherOptions } = body.stream_options;
    const streamIncludeUsage = optionalBoolean(includeUsage, "stream_options.include_usage");
    if (streamIncludeUsage !== undefined) request.streamIncludeUsage = streamIncludeUsage;
    if (Object.keys(otherOptions).length > 0) extraFields.stream_options = otherOptions;
  }

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
  const limit = maxCompletionTokens ?? maxTokens;
  if (limit !== undefined) params.maxTokens = limit;
  assign(params, "temperature", optionalNumber(body.temperature, "temperature"));
  assign(params, "topP", optionalNumber(body.top_p, "top_p"));
  assign(params, "stop", optionalStopSequences(body.stop, "stop"));
  assign(params, "seed", optionalInteger(body.seed, "seed"));
  assign(params, "presencePenalty", optionalNumber(body.presence_penalty, "presence_penalty"));
  assign(params, "frequencyPenalty", optionalNumber(body.frequency_penalty, "frequency_penalty"));
  assign(params, "reasoningEffort", optionalReasoningEffort(body.reasoning_effort, "reasoning_effort"));
  return params;
}

function assign<K extends keyof IrGenerationParams>(params: IrGenerationParams, key: K, value: IrGenerationParams[K] | undefined): void {
  if (value !== undefined) params[key] = value;
}

import { IrDecodeError, type EncodeRequestContext, type Encoded, type IrReasoningEffort, type IrRequest, type IrWarning } from "../../ir";
import { encodeAnthropicMessages } from "./encode-content";
import { setOwn, type JsonObject } from "../shared/json-fields";

/** `max_tokens` is required by the Messages API; 4096 is the default when the client set none. */
const DEFAULT_MAX_TOKENS = 4096;

/** Effort levels the Messages API accepts in `output_config.effort`. */
const ANTHROPIC_EFFORT: Record<IrReasoningEffort, string | undefined> = {
  none: undefined,
  minimal: "low",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
  max: "max",
};

function encodeToolChoice(request: IrRequest): JsonObject | undefined {
  const choice = request.toolChoice;
  let encoded: JsonObject | undefined;
  if (choice?.type === "auto") encoded = { type: "auto" };
  else if (choice?.type === "required") encoded = { type: "any" };
  else if (choice?.type === "none") return { type: "none" }; // tool_choice none takes no parallel flag
  else if (choice?.type === "tool") encoded = { type: "tool", name: choice.name };
  // parallel_tool_calls is the inverse of disable_parallel_tool_use.
  if (request.parallelToolCalls === false) encoded = { ...(encoded ?? { type: "auto" }), disable_parallel_tool_use: true };
  return encoded;
}

function unsupported(warnings: IrWarning[], field: string): void {
  warnings.push({ code: "unsupported_field", field, message: `${field} has no equivalent in the Anthropic Messages API and was dropped` });
}

/** IR -> Anthropic Messages upstream body. */
export function encodeAnthropicRequest(request: IrRequest, context: EncodeRequestContext): Encoded<JsonObject> {
  // Messages has no stored responses; `store: true` cannot be honoured.
  if (request.store === true) throw new IrDecodeError("store: true is not supported by an Anthropic Messages upstream");
  const warnings: IrWarning[] = [];
  const { leadingSystem, messages } = encodeAnthropicMessages(request.messages, warnings);
  const params = request.params;
  const budget = params.thinkingBudgetTokens;
  // The thinking budget must be below max_tokens, so the default leaves room for the answer.
  const maxTokens = params.maxTokens ?? (budget !== undefined ? budget + DEFAULT_MAX_TOKENS : DEFAULT_MAX_TOKENS);
  const body: JsonObject = { model: context.providerModelId, max_tokens: maxTokens };

  const systemTexts = request.system === undefined ? leadingSystem : [request.system, ...leadingSystem];
  const system = systemTexts.join("\n");
  if (system !== "") {
    body.system =
      request.systemCacheControl === undefined ? system : [{ type: "text", text: system, cache_control: request.systemCacheControl }];
  }
  body.messages = messages;

  if (params.temperature !== undefined) body.temperature = params.temperature;
  if (params.topP !== undefined) body.top_p = params.topP;
  if (params.topK !== undefined) body.top_k = params.topK;
  if (params.stop !== undefined && params.stop.length > 0) body.stop_sequences = params.stop;
  if (params.seed !== undefined) unsupported(warnings, "seed");
  if (params.presencePenalty !== undefined) unsupported(warnings, "presence_penalty");
  if (params.frequencyPenalty !== undefined) unsupported(warnings, "frequency_penalty");
  if (budget !== undefined) body.thinking = { type: "enabled", budget_tokens: budget };

  const outputConfig: JsonObject = {};
  if (params.reasoningEffort !== undefined) {
    const effort = ANTHROPIC_EFFORT[params.reasoningEffort];
    if (effort === undefined || effort !== params.reasoningEffort) {
      warnings.push({
        code: "unsupported_value",
        field: "reasoning_effort",
        message: `reasoning effort "${params.reasoningEffort}" is ${effort === undefined ? "dropped" : `sent as "${effort}"`} on Anthropic`,
      });
    }
    if (effort !== undefined) outputConfig.effort = effort;
  }
  const format = request.responseFormat;
  if (format?.type === "json_schema") outputConfig.format = { type: "json_schema", schema: format.schema };
  else if (format?.type === "json_object") unsupported(warnings, "response_format");
  if (Object.keys(outputConfig).length > 0) body.output_config = outputConfig;

  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => {
      const encoded: JsonObject = {
        name: tool.name,
        input_schema: { type: "object", ...tool.parameters },
      };
      if (tool.description !== undefined) encoded.description = tool.description;
      if (tool.strict !== undefined) encoded.strict = tool.strict;
      return encoded;
    });
  }

  const extras = request.extras;
  if (extras?.protocol === "anthropic-messages") {
    for (const [key, value] of Object.entries(extras.fields)) {
      // Server tools come back next to the client tools; other extras never override mapped fields.
      if (key === "tools" && Array.isArray(value)) body.tools = [...(Array.isArray(body.tools) ? body.tools : []), ...value];
      else if (!Object.hasOwn(body, key)) setOwn(body, key, value);
    }
  } else if (extras !== undefined) {
    for (const key of Object.keys(extras.fields)) {
      warnings.push({ code: "unsupported_field", field: key, message: `${extras.protocol} field ${key} cannot be sent to Anthropic` });
    }
  }

  const toolChoice = encodeToolChoice(request);
  if (toolChoice !== undefined && body.tools !== undefined) body.tool_choice = toolChoice;
  if (context.stream) body.stream = true;
  return { value: body, warnings };
}

import type { EncodeRequestContext, Encoded, IrRequest, IrResponseFormat, IrToolChoice, IrWarning } from "../../ir";
import { cacheControlWarning } from "../openai-shared/cache-control";
import { applyExtras, unsupported } from "../openai-shared/extras";
import { toOpenAiEffort } from "../openai-shared/reasoning-effort";
import { encodeChatMessages } from "./encode-messages";

/**
 * IR -> chat completions upstream body. The token limit is sent
 * as `max_completion_tokens`: `max_tokens` is deprecated and rejected by OpenAI's
 * reasoning models (chat/create#max_tokens).
 */
export function encodeChatRequest(request: IrRequest, context: EncodeRequestContext): Encoded<Record<string, unknown>> {
  const warnings: IrWarning[] = [];
  const body: Record<string, unknown> = {
    model: context.providerModelId,
    messages: encodeChatMessages(request, warnings),
  };

  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => {
      const fn: Record<string, unknown> = { name: tool.name };
      if (tool.description !== undefined) fn.description = tool.description;
      fn.parameters = tool.parameters;
      if (tool.strict !== undefined) fn.strict = tool.strict;
      return { type: "function", function: fn };
    });
  }
  if (request.toolChoice !== undefined) body.tool_choice = encodeToolChoice(request.toolChoice);
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.store !== undefined) body.store = request.store;
  if (request.responseFormat !== undefined) body.response_format = encodeResponseFormat(request.responseFormat);

  const params = request.params;
  if (params.maxTokens !== undefined) body.max_completion_tokens = params.maxTokens;
  if (params.temperature !== undefined) body.temperature = params.temperature;
  if (params.topP !== undefined) body.top_p = params.topP;
  if (params.stop !== undefined && params.stop.length > 0) body.stop = params.stop;
  if (params.seed !== undefined) body.seed = params.seed;
  if (params.presencePenalty !== undefined) body.presence_penalty = params.presencePenalty;
  if (params.frequencyPenalty !== undefined) body.frequency_penalty = params.frequencyPenalty;
  if (params.reasoningEffort !== undefined) {
    body.reasoning_effort = toOpenAiEffort(params.reasoningEffort, "reasoning_effort", "openai-chat", warnings);
  }
  if (params.topK !== undefined) warnings.push(unsupported("top_k", "openai-chat"));
  if (params.thinkingBudgetTokens !== undefined) {
    warnings.push(unsupported("thinking.budget_tokens", "openai-chat", "has no equivalent (use reasoning_effort)"));
  }
  const cacheWarning = cacheControlWarning(request, "openai-chat");
  if (cacheWarning !== undefined) warnings.push(cacheWarning);

  if (context.stream) {
    body.stream = true;
    // Upstream chat streams carry usage only when asked; always ask, or the bill rests on an estimate.
    body.stream_options = { include_usage: true };
  }
  applyExtras(body, request, "openai-chat", warnings);
  return { value: body, warnings };
}

/** Canonical -> Chat `tool_choice`; a named function is `{type: "function", function: {name}}`. */
function encodeToolChoice(choice: IrToolChoice): unknown {
  if (choice.type === "tool") return { type: "function", function: { name: choice.name } };
  return choice.type;
}

function encodeResponseFormat(format: IrResponseFormat): Record<string, unknown> {
  if (format.type !== "json_schema") return { type: format.type };
  const spec: Record<string, unknown> = { name: format.name };
  if (format.description !== undefined) spec.description = format.description;
  spec.schema = format.schema;
  if (format.strict !== undefined) spec.strict = format.strict;
  return { type: "json_schema", json_schema: spec };
}

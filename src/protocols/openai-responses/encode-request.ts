import type { EncodeRequestContext, Encoded, IrRequest, IrResponseFormat, IrToolChoice, IrWarning } from "../../ir";
import { cacheControlWarning } from "../openai-shared/cache-control";
import { applyExtras, unsupported } from "../openai-shared/extras";
import { toOpenAiEffort } from "../openai-shared/reasoning-effort";
import { encodeResponsesInput } from "./encode-input-items";

/**
 * IR -> Responses upstream body: system -> `instructions`, token
 * limit -> `max_output_tokens`, JSON schema -> `text.format`, effort -> `reasoning.effort`.
 * Responses has no `stop`, `seed`, penalties or `top_k`; those are dropped with warnings.
 */
export function encodeResponsesRequest(request: IrRequest, context: EncodeRequestContext): Encoded<Record<string, unknown>> {
  const warnings: IrWarning[] = [];
  const body: Record<string, unknown> = { model: context.providerModelId };
  if (request.system !== undefined && request.system !== "") body.instructions = request.system;
  body.input = encodeResponsesInput(request, warnings);

  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => {
      const wire: Record<string, unknown> = { type: "function", name: tool.name };
      if (tool.description !== undefined) wire.description = tool.description;
      wire.parameters = tool.parameters;
      if (tool.strict !== undefined) wire.strict = tool.strict;
      return wire;
    });
  }
  if (request.toolChoice !== undefined) body.tool_choice = encodeToolChoice(request.toolChoice);
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.store !== undefined) body.store = request.store;
  if (request.responseFormat !== undefined) body.text = { format: encodeFormat(request.responseFormat) };

  const params = request.params;
  if (params.maxTokens !== undefined) body.max_output_tokens = params.maxTokens;
  if (params.temperature !== undefined) body.temperature = params.temperature;
  if (params.topP !== undefined) body.top_p = params.topP;
  if (params.reasoningEffort !== undefined) {
    body.reasoning = { effort: toOpenAiEffort(params.reasoningEffort, "reasoning.effort", "openai-responses", warnings) };
  }
  if (params.stop !== undefined && params.stop.length > 0) warnings.push(unsupported("stop", "openai-responses"));
  if (params.seed !== undefined) warnings.push(unsupported("seed", "openai-responses"));
  if (params.presencePenalty !== undefined) warnings.push(unsupported("presence_penalty", "openai-responses"));
  if (params.frequencyPenalty !== undefined) warnings.push(unsupported("frequency_penalty", "openai-responses"));
  if (params.topK !== undefined) warnings.push(unsupported("top_k", "openai-responses"));
  if (params.thinkingBudgetTokens !== undefined) {
    warnings.push(unsupported("thinking.budget_tokens", "openai-responses", "has no equivalent (use reasoning.effort)"));
  }
  const cacheWarning = cacheControlWarning(request, "openai-responses");
  if (cacheWarning !== undefined) warnings.push(cacheWarning);

  if (context.stream) body.stream = true;
  applyExtras(body, request, "openai-responses", warnings);
  return { value: body, warnings };
}

/** Canonical -> Responses `tool_choice`: the function form is flat, `{type, name}`. */
function encodeToolChoice(choice: IrToolChoice): unknown {
  return choice.type === "tool" ? { type: "function", name: choice.name } : choice.type;
}

function encodeFormat(format: IrResponseFormat): Record<string, unknown> {
  if (format.type !== "json_schema") return { type: format.type };
  const wire: Record<string, unknown> = { type: "json_schema", name: format.name };
  if (format.description !== undefined) wire.description = format.description;
  wire.schema = format.schema;
  if (format.strict !== undefined) wire.strict = format.strict;
  return wire;
}

/**
 * The Responses API output items and response object, shared by the non-streaming body
 * and the stream's `output_item.done` / `response.completed` payloads.
 * https://platform.openai.com/docs/api-reference/responses/object
 */
import { openaiEchoedModel } from "./echoed-model";
import { mockIds } from "./mock-ids";
import type { JsonObject, MockCall } from "./mock-protocol";
import type { ResolvedScenario, ResolvedUsage } from "./resolve-scenario";

export type ResponsesItem =
  | { type: "reasoning"; id: string; summary: string }
  | { type: "message"; id: string; text: string }
  | { type: "function_call"; id: string; callId: string; name: string; arguments: string };

/** Items in output order: reasoning, message, function calls. */
export function responsesItems(scenario: ResolvedScenario): ResponsesItem[] {
  const items: ResponsesItem[] = [];
  if (scenario.reasoningText !== "") {
    items.push({ type: "reasoning", id: mockIds.responseReasoning(), summary: scenario.reasoningText });
  }
  if (scenario.text !== "") items.push({ type: "message", id: mockIds.responseMessage(), text: scenario.text });
  for (const toolCall of scenario.toolCalls) {
    items.push({
      type: "function_call",
      id: mockIds.responseFunctionCall(),
      callId: mockIds.openaiToolCall(),
      name: toolCall.name,
      arguments: toolCall.argsJson,
    });
  }
  return items;
}

export function outputTextPart(text: string): JsonObject {
  return { type: "output_text", annotations: [], logprobs: [], text };
}

/** An item as `output_item.done` and the final `output` array show it. */
export function completedItem(item: ResponsesItem): JsonObject {
  switch (item.type) {
    case "reasoning":
      return { id: item.id, type: "reasoning", summary: [{ type: "summary_text", text: item.summary }] };
    case "message":
      return { id: item.id, type: "message", status: "completed", content: [outputTextPart(item.text)], role: "assistant" };
    case "function_call":
      return {
        id: item.id,
        type: "function_call",
        status: "completed",
        arguments: item.arguments,
        call_id: item.callId,
        name: item.name,
      };
  }
}

/** `input_tokens` INCLUDES cached tokens, `output_tokens` INCLUDES reasoning tokens. */
export function responsesUsage(usage: ResolvedUsage): JsonObject {
  return {
    input_tokens: usage.prompt,
    input_tokens_details: { cached_tokens: usage.cacheRead },
    output_tokens: usage.completion,
    output_tokens_details: { reasoning_tokens: usage.reasoning },
    total_tokens: usage.prompt + usage.completion,
  };
}

export interface ResponseEnvelope {
  id: string;
  createdAt: number;
}

/** The response object; request parameters are echoed as the API does. */
export function responseObject(
  envelope: ResponseEnvelope,
  call: MockCall,
  state: { status: string; output: JsonObject[]; usage: JsonObject | null; incompleteReason?: string },
): JsonObject {
  const body = call.body;
  const reasoning = body.reasoning;
  return {
    id: envelope.id,
    object: "response",
    created_at: envelope.createdAt,
    status: state.status,
    background: false,
    error: null,
    incomplete_details: state.incompleteReason === undefined ? null : { reason: state.incompleteReason },
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: openaiEchoedModel(call.model),
    output: state.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: typeof reasoning === "object" && reasoning !== null ? { summary: null, ...reasoning } : { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: "disabled",
    usage: state.usage,
    user: null,
    metadata: body.metadata ?? {},
  };
}

/** "completed", or "incomplete" with reason "max_output_tokens" when the limit cut the turn. */
export function responseStatus(scenario: ResolvedScenario): { status: string; incompleteReason?: string } {
  return scenario.finish === "length"
    ? { status: "incomplete", incompleteReason: "max_output_tokens" }
    : { status: "completed" };
}

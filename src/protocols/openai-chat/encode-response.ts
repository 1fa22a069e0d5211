import type { CodecContext, IrResponse } from "../../ir";
import { encodeChatUsage } from "./convert-usage";
import { encodeChatFinishReason } from "./map-finish-reason";

/**
 * IrResponse -> client `chat.completion`. `content` is never null (some
 * clients crash on it), `id` is Switchyard's request id and `model` echoes the model the
 * client asked for, not the upstream that served it.
 */
export function encodeChatResponse(response: IrResponse, context: CodecContext): Record<string, unknown> {
  let text = "";
  let reasoning = "";
  const toolCalls: Array<Record<string, unknown>> = [];
  for (const part of response.content) {
    if (part.type === "text") text += part.text;
    else if (part.type === "reasoning") reasoning += part.text;
    else if (part.type === "tool_call") {
      toolCalls.push({ id: part.id, type: "function", function: { name: part.name, arguments: part.arguments } });
    }
  }
  const message: Record<string, unknown> = { role: "assistant", content: text };
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;

  const body: Record<string, unknown> = {
    id: context.requestId,
    object: "chat.completion",
    created: context.created,
    model: context.model,
    choices: [{ index: 0, message, finish_reason: encodeChatFinishReason(response.finish, toolCalls.length > 0) }],
  };
  if (response.usage !== undefined) body.usage = encodeChatUsage(response.usage);
  return body;
}

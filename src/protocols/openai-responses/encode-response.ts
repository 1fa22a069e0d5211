import type { CodecContext, IrResponse } from "../../ir";
import { encodeResponsesUsage } from "./convert-usage";
import { encodeResponsesStatus } from "./map-finish-reason";
import { functionCallItem, messageItem, reasoningItem, type OutputItem } from "./output-items";
import { unpackReasoningRef } from "./reasoning-item-ref";
import { encodeResponseId } from "./response-id";

/**
 * IrResponse -> client `response` object. Consecutive text parts form one
 * message item; `usage` is omitted, not zero-filled, when unknown. `context.newId(prefix)`
 * supplies the item ids (`msg`, `rs`, `fc`).
 */
export function encodeResponsesResponse(response: IrResponse, context: CodecContext): Record<string, unknown> {
  const output: OutputItem[] = [];
  let text: string | undefined;
  const flushText = (): void => {
    if (text !== undefined) output.push(messageItem(context.newId("msg"), text, "completed"));
    text = undefined;
  };
  for (const part of response.content) {
    if (part.type === "text") {
      text = (text ?? "") + part.text;
      continue;
    }
    if (part.type === "reasoning") {
      flushText();
      const ref = unpackReasoningRef(part);
      output.push(reasoningItem(ref?.id ?? context.newId("rs"), part.text, "completed", ref?.encryptedContent));
    } else if (part.type === "tool_call") {
      flushText();
      output.push(functionCallItem(context.newId("fc"), part.id, part.name, part.arguments, "completed"));
    }
  }
  flushText();

  const { status, incompleteReason } = encodeResponsesStatus(response.finish);
  const body: Record<string, unknown> = {
    id: encodeResponseId(context.requestId),
    object: "response",
    created_at: context.created,
    status,
    model: context.model,
    output,
  };
  if (incompleteReason !== undefined) body.incomplete_details = { reason: incompleteReason };
  if (status === "failed") body.error = { code: "server_error", message: "the upstream failed to complete the response" };
  if (response.usage !== undefined) body.usage = encodeResponsesUsage(response.usage);
  return body;
}

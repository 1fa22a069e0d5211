/**
 * Output item shapes shared by the non-stream response and the stream encoder, whose
 * terminal event repeats every completed item
 * (platform.openai.com/docs/api-reference/responses/object#output).
 */
export type OutputItem = Record<string, unknown>;
export type ItemStatus = "in_progress" | "completed";

export function outputTextPart(text: string): Record<string, unknown> {
  return { type: "output_text", annotations: [], text };
}

export function messageItem(id: string, text: string | undefined, status: ItemStatus): OutputItem {
  return { id, type: "message", status, content: text === undefined ? [] : [outputTextPart(text)], role: "assistant" };
}

/** Reasoning is rendered as `reasoning_text` content, with an empty summary. */
export function reasoningItem(id: string, text: string | undefined, status: ItemStatus, encryptedContent?: string): OutputItem {
  const item: OutputItem = { id, type: "reasoning", summary: [] };
  if (text !== undefined) item.content = [{ type: "reasoning_text", text }];
  if (encryptedContent !== undefined) item.encrypted_content = encryptedContent;
  item.status = status;
  return item;
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status: ItemStatus): OutputItem {
  return { id, type: "function_call", status, arguments: args, call_id: callId, name };
}

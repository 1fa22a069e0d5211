import type { CodecContext, IrResponse } from "../../ir";
import { toAnthropicUsage } from "./convert-usage";
import { toAnthropicStopReason } from "./map-stop-reason";
import { parseArgumentsObject } from "../shared/json-fields";
import type { AnthropicContentBlock } from "./wire-types";

/** Anthropic message ids look like `msg_…`; ours derive from the request id so they are stable. */
export function anthropicMessageId(context: CodecContext): string {
  return `msg_${context.requestId}`;
}

/** IR -> Anthropic Messages client response. */
export function encodeAnthropicResponse(response: IrResponse, context: CodecContext): Record<string, unknown> {
  const content: AnthropicContentBlock[] = [];
  let hasToolCalls = false;
  for (const part of response.content) {
    if (part.type === "text") {
      if (part.text !== "") content.push({ type: "text", text: part.text });
    } else if (part.type === "reasoning" && part.signatureProtocol === "anthropic-messages") {
      // Only Anthropic-signed thinking: the client will replay it, and Anthropic rejects foreign signatures.
      if (part.redactedData !== undefined) content.push({ type: "redacted_thinking", data: part.redactedData });
      else if (part.signature !== undefined) content.push({ type: "thinking", thinking: part.text, signature: part.signature });
    } else if (part.type === "tool_call") {
      hasToolCalls = true;
      content.push({ type: "tool_use", id: part.id, name: part.name, input: parseArgumentsObject(part.arguments) ?? {} });
    }
  }
  return {
    id: anthropicMessageId(context),
    type: "message",
    role: "assistant",
    model: context.model,
    content,
    stop_reason: toAnthropicStopReason(response.finish, hasToolCalls),
    stop_sequence: null,
    usage: toAnthropicUsage(response.usage),
  };
}

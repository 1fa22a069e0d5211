import { IrDecodeError, type IrContentPart, type IrResponse } from "../../ir";
import { convertAnthropicUsage } from "./convert-usage";
import { mapAnthropicStopReason } from "./map-stop-reason";
import { isRecord, type JsonObject } from "../shared/json-fields";

function decodeResponseBlock(block: JsonObject): IrContentPart | undefined {
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? { type: "text", text: block.text } : undefined;
    case "thinking":
      if (typeof block.thinking !== "string") return undefined;
      return typeof block.signature === "string" && block.signature !== ""
        ? { type: "reasoning", text: block.thinking, signature: block.signature, signatureProtocol: "anthropic-messages" }
        : { type: "reasoning", text: block.thinking };
    case "redacted_thinking":
      return typeof block.data === "string"
        ? { type: "reasoning", text: "", redactedData: block.data, signatureProtocol: "anthropic-messages" }
        : undefined;
    case "tool_use":
      if (typeof block.id !== "string" || typeof block.name !== "string") return undefined;
      return { type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) };
    default:
      // server_tool_use / web_search_tool_result and other server blocks were executed by
      // Anthropic; they have no client-side meaning in another protocol.
      return undefined;
  }
}

/** Anthropic Messages response -> IR. */
export function decodeAnthropicResponse(body: unknown): IrResponse {
  if (!isRecord(body) || body.type !== "message" || !Array.isArray(body.content)) {
    throw new IrDecodeError("upstream response is not an Anthropic message");
  }
  const content: IrContentPart[] = [];
  for (const block of body.content) {
    if (!isRecord(block)) continue;
    const part = decodeResponseBlock(block);
    if (part !== undefined) content.push(part);
  }
  const response: IrResponse = { content, finish: mapAnthropicStopReason(body.stop_reason) };
  if (typeof body.id === "string") response.id = body.id;
  if (typeof body.model === "string") response.model = body.model;
  if (isRecord(body.usage)) response.usage = convertAnthropicUsage(body.usage);
  return response;
}

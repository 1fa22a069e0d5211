import { IrDecodeError, type IrContentPart, type IrResponse, type IrWarning } from "../../ir";
import { convertAnthropicUsage } from "./convert-usage";
import { mapAnthropicStopReason } from "./map-stop-reason";
import { isRecord, type JsonObject } from "../shared/json-fields";
import { warnDroppedUpstream } from "../shared/output-warnings";

/**
 * One content block -> IR content. What the IR has no place for is named in `warnings`:
 * a text block's `citations`, and every block Anthropic produced by running a tool itself
 * (`server_tool_use`, `web_search_tool_result`, `web_fetch_tool_result`, the code execution
 * results, `mcp_tool_use` / `mcp_tool_result`, `tool_search_tool_result`) or any other block
 * type (`compaction`, …): https://docs.anthropic.com/en/api/messages#response-content.
 */
function decodeResponseBlock(block: JsonObject, warnings: IrWarning[]): IrContentPart | undefined {
  switch (block.type) {
    case "text":
      if (Array.isArray(block.citations) && block.citations.length > 0) warnDroppedUpstream(warnings, "citations", "on a text block");
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
      warnDroppedUpstream(warnings, block.type, "content block");
      return undefined;
  }
}

/** Anthropic Messages response -> IR. */
export function decodeAnthropicResponse(body: unknown): IrResponse {
  if (!isRecord(body) || body.type !== "message" || !Array.isArray(body.content)) {
    throw new IrDecodeError("upstream response is not an Anthropic message");
  }
  const content: IrContentPart[] = [];
  const warnings: IrWarning[] = [];
  for (const block of body.content) {
    if (!isRecord(block)) continue;
    const part = decodeResponseBlock(block, warnings);
    if (part !== undefined) content.push(part);
  }
  const response: IrResponse = { content, finish: mapAnthropicStopReason(body.stop_reason) };
  if (typeof body.id === "string") response.id = body.id;
  if (typeof body.model === "string") response.model = body.model;
  if (isRecord(body.usage)) response.usage = convertAnthropicUsage(body.usage);
  if (warnings.length > 0) response.warnings = warnings;
  return response;
}

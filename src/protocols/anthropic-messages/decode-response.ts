import { IrDecodeError, type IrContentPart, type IrResponse, type IrWarning, type IrWebSearchPart } from "../../ir";
import { readAnthropicCitations, webSearchOfToolUse, withWebSearchResult } from "./decode-citations";
import { convertAnthropicUsage } from "./convert-usage";
import { mapAnthropicStopReason } from "./map-stop-reason";
import { isRecord, type JsonObject } from "../shared/json-fields";
import { warnDroppedUpstream } from "../shared/output-warnings";

/**
 * One content block -> IR content. A text block keeps its `citations`; the web search tool's
 * `server_tool_use` is a web search part, with the results of its `web_search_tool_result`
 * block (`searches`, by tool use id). What the IR has no place for is named in `warnings`:
 * every other block Anthropic produced by running a tool itself (`server_tool_use` of another
 * tool, `web_fetch_tool_result`, the code execution results, `mcp_tool_use` /
 * `mcp_tool_result`, `tool_search_tool_result`) or any other block type (`compaction`, …):
 * https://docs.anthropic.com/en/api/messages#response-content.
 */
/** The web searches of a message by tool use id, each with its results where the message has them. */
function collectWebSearches(blocks: readonly unknown[]): Map<string, IrWebSearchPart> {
  const searches = new Map<string, IrWebSearchPart>();
  for (const block of blocks) {
    if (!isRecord(block) || block.type !== "server_tool_use") continue;
    const search = webSearchOfToolUse(block);
    if (search !== undefined) searches.set(search.id, search);
  }
  for (const block of blocks) {
    if (!isRecord(block) || block.type !== "web_search_tool_result" || typeof block.tool_use_id !== "string") continue;
    const search = searches.get(block.tool_use_id);
    if (search !== undefined) searches.set(search.id, withWebSearchResult(search, block));
  }
  return searches;
}

function decodeResponseBlock(block: JsonObject, searches: ReadonlyMap<string, IrWebSearchPart>, warnings: IrWarning[]): IrContentPart | undefined {
  switch (block.type) {
    case "text": {
      if (typeof block.text !== "string") {
        if (Array.isArray(block.citations) && block.citations.length > 0) warnDroppedUpstream(warnings, "citations", "on a text block");
        return undefined;
      }
      const citations = readAnthropicCitations(block.citations, warnings);
      return citations.length > 0 ? { type: "text", text: block.text, citations } : { type: "text", text: block.text };
    }
    case "server_tool_use": {
      const search = typeof block.id === "string" ? searches.get(block.id) : undefined;
      if (search === undefined) warnDroppedUpstream(warnings, block.type, "content block");
      return search;
    }
    case "web_search_tool_result":
      // Carried by the search it answers; a result with no such search has nowhere to go.
      if (typeof block.tool_use_id !== "string" || !searches.has(block.tool_use_id)) warnDroppedUpstream(warnings, block.type, "content block");
      return undefined;
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
  const searches = collectWebSearches(body.content);
  for (const block of body.content) {
    if (!isRecord(block)) continue;
    const part = decodeResponseBlock(block, searches, warnings);
    if (part !== undefined) content.push(part);
  }
  const response: IrResponse = { content, finish: mapAnthropicStopReason(body.stop_reason) };
  if (typeof body.id === "string") response.id = body.id;
  if (typeof body.model === "string") response.model = body.model;
  if (isRecord(body.usage)) response.usage = convertAnthropicUsage(body.usage);
  if (warnings.length > 0) response.warnings = warnings;
  return response;
}

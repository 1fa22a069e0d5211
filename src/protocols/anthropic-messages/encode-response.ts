import type { CodecContext, Encoded, IrResponse, IrWarning } from "../../ir";
import { toAnthropicUsage } from "./convert-usage";
import { toAnthropicStopReason } from "./map-stop-reason";
import { parseArgumentsObject } from "../shared/json-fields";
import { CITATION_WITHOUT_TEXT } from "../shared/citations";
import { droppedOutput, invalidToolArguments, warnOnce } from "../shared/output-warnings";
import { citedTextBlocks } from "./encode-citations";
import { webSearchBlocks } from "./encode-web-search";
import type { AnthropicContentBlock } from "./wire-types";

/** Anthropic message ids look like `msg_…`; ours derive from the request id so they are stable. */
export function anthropicMessageId(context: CodecContext): string {
  return `msg_${context.requestId}`;
}

/** What a Messages client does with thinking it cannot replay: it never sees it. */
export const UNSIGNED_THINKING_MESSAGE =
  "reasoning without an Anthropic signature is not sent to Messages clients: they replay thinking blocks, and Anthropic refuses unsigned ones";

/**
 * IR -> Anthropic Messages client response. Cited text is split into blocks at the cited
 * spans (encode-citations.ts); a web search is a server_tool_use block and its
 * web_search_tool_result (encode-web-search.ts). Messages answers carry no images or files.
 */
export function encodeAnthropicResponse(response: IrResponse, context: CodecContext): Encoded<Record<string, unknown>> {
  const content: AnthropicContentBlock[] = [];
  const warnings: IrWarning[] = [];
  let hasToolCalls = false;
  for (const part of response.content) {
    if (part.type === "text") {
      if (part.text !== "") content.push(...citedTextBlocks(part, warnings));
      else if (part.citations !== undefined && part.citations.length > 0) warnOnce(warnings, CITATION_WITHOUT_TEXT);
    } else if (part.type === "reasoning") {
      // Only Anthropic-signed thinking: the client will replay it, and Anthropic rejects foreign signatures.
      if (part.signatureProtocol === "anthropic-messages" && part.redactedData !== undefined) content.push({ type: "redacted_thinking", data: part.redactedData });
      else if (part.signatureProtocol === "anthropic-messages" && part.signature !== undefined) content.push({ type: "thinking", thinking: part.text, signature: part.signature });
      // An empty part only carries another vendor's signature: nothing the client would read.
      else if (part.text !== "" || part.redactedData !== undefined) warnOnce(warnings, droppedOutput("reasoning", UNSIGNED_THINKING_MESSAGE));
    } else if (part.type === "tool_call") {
      hasToolCalls = true;
      let input = parseArgumentsObject(part.arguments);
      if (input === undefined) {
        warnOnce(warnings, invalidToolArguments(part.id));
        input = {};
      }
      content.push({ type: "tool_use", id: part.id, name: part.name, input });
    } else if (part.type === "web_search") {
      content.push(...webSearchBlocks(part));
    } else if (part.type === "image" || part.type === "file") {
      warnOnce(warnings, droppedOutput(part.type, `Messages answers carry no ${part.type === "image" ? "images" : "files"}`));
    }
  }
  const body = {
    id: anthropicMessageId(context),
    type: "message",
    role: "assistant",
    model: context.model,
    content,
    stop_reason: toAnthropicStopReason(response.finish, hasToolCalls),
    stop_sequence: null,
    usage: toAnthropicUsage(response.usage),
  };
  return { value: body, warnings };
}

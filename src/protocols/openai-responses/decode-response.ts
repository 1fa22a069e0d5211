import { IrDecodeError, type IrContentPart, type IrResponse, type IrTextPart, type IrWarning } from "../../ir";
import { argumentsText, isRecord } from "../openai-shared/read-fields";
import { decodeResponsesUsage } from "./convert-usage";
import { decodeResponsesStatus } from "./map-finish-reason";
import { reasoningPart, reasoningTextOf } from "./reasoning-item-ref";
import { CLIENT_ACTION_ITEMS, PendingApprovals } from "./client-actions";
import { warnDroppedUpstream } from "../shared/output-warnings";
import { readOutputTextCitations, warnDroppedItem } from "./dropped-output";
import { placeCitation } from "../openai-shared/url-citation";
import { readWebSearchCall } from "./web-search-call";

/**
 * Upstream `response` object -> IrResponse (platform.openai.com/docs/api-reference/responses/object).
 * Output items in order: `reasoning` (summary, else raw reasoning text), `message`
 * (`output_text`, `refusal` -> text + content_filter), `function_call` (`call_id` is the id
 * tool results refer to), `web_search_call` (a web search part, in answer order, and counted
 * for billing). An output text's `url_citation` annotations become its citations. Other
 * hosted tool items the provider ran (`file_search_call`, `code_interpreter_call`, …) and
 * other annotations have no place in the IR: each kind is named in `warnings`
 * (dropped-output.ts).
 */
export function decodeResponsesResponse(body: unknown): IrResponse {
  if (!isRecord(body) || !Array.isArray(body.output)) {
    throw new IrDecodeError("upstream body is not a Responses response (no output array)");
  }
  const content: IrContentPart[] = [];
  let refusal = false;
  let webSearches = 0;
  let clientAction: string | undefined;
  const approvals = new PendingApprovals();
  const warnings: IrWarning[] = [];
  for (const [index, item] of body.output.entries()) {
    if (!isRecord(item)) continue;
    approvals.onItem(item);
    switch (item.type) {
      case "reasoning":
        content.push(reasoningPart(reasoningTextOf(item), item.id, item.encrypted_content));
        break;
      case "message":
        if (!Array.isArray(item.content)) break;
        for (const part of item.content) {
          if (!isRecord(part)) continue;
          if (part.type === "output_text") {
            const citations = readOutputTextCitations(part, warnings);
            if (typeof part.text !== "string") {
              if (citations.length > 0) warnDroppedUpstream(warnings, "annotations", "on output text");
              continue;
            }
            const text: IrTextPart = { type: "text", text: part.text };
            if (citations.length > 0) text.citations = citations.map((citation) => placeCitation(citation, 0, text.text.length));
            content.push(text);
          } else if (part.type === "refusal") {
            if (typeof part.refusal !== "string") continue;
            refusal = true;
            content.push({ type: "text", text: part.refusal });
          } else warnDroppedUpstream(warnings, part.type, "message content part");
        }
        break;
      case "function_call":
        if (typeof item.call_id === "string" && typeof item.name === "string") {
          content.push({ type: "tool_call", id: item.call_id, name: item.name, arguments: argumentsText(item.arguments) });
        }
        break;
      case "web_search_call":
        webSearches++;
        content.push(readWebSearchCall(item, `ws_${index}`));
        break;
      default:
        if (typeof item.type === "string" && CLIENT_ACTION_ITEMS.has(item.type)) clientAction ??= item.type;
        else warnDroppedItem(warnings, item.type);
        break;
    }
  }
  const incomplete = isRecord(body.incomplete_details) ? body.incomplete_details.reason : undefined;
  const response: IrResponse = {
    content,
    finish: decodeResponsesStatus(body.status, incomplete, {
      hasToolCalls: content.some((part) => part.type === "tool_call"),
      refusal,
    }),
  };
  clientAction ??= approvals.unanswered();
  if (clientAction !== undefined) response.clientAction = clientAction;
  if (typeof body.id === "string") response.id = body.id;
  if (typeof body.model === "string") response.model = body.model;
  const usage = decodeResponsesUsage(body.usage);
  if (usage !== undefined) {
    if (webSearches > 0) usage.webSearchCount = webSearches;
    response.usage = usage;
  }
  if (warnings.length > 0) response.warnings = warnings;
  return response;
}

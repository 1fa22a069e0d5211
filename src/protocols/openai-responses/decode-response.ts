import { IrDecodeError, type IrContentPart, type IrResponse } from "../../ir";
import { argumentsText, isRecord } from "../openai-shared/read-fields";
import { decodeResponsesUsage } from "./convert-usage";
import { decodeResponsesStatus } from "./map-finish-reason";
import { reasoningPart, reasoningTextOf } from "./reasoning-item-ref";
import { CLIENT_ACTION_ITEMS, PendingApprovals } from "./client-actions";

/**
 * Upstream `response` object -> IrResponse (platform.openai.com/docs/api-reference/responses/object).
 * Output items in order: `reasoning` (summary, else raw reasoning text), `message`
 * (`output_text`, `refusal` -> text + content_filter), `function_call` (`call_id` is the id
 * tool results refer to). Hosted tool items are not content; `web_search_call` items are
 * counted for billing.
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
  for (const item of body.output) {
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
          if (part.type === "output_text" && typeof part.text === "string") content.push({ type: "text", text: part.text });
          else if (part.type === "refusal" && typeof part.refusal === "string") {
            refusal = true;
            content.push({ type: "text", text: part.refusal });
          }
        }
        break;
      case "function_call":
        if (typeof item.call_id === "string" && typeof item.name === "string") {
          content.push({ type: "tool_call", id: item.call_id, name: item.name, arguments: argumentsText(item.arguments) });
        }
        break;
      case "web_search_call":
        webSearches++;
        break;
      default:
        if (typeof item.type === "string" && CLIENT_ACTION_ITEMS.has(item.type)) clientAction ??= item.type;
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
  return response;
}

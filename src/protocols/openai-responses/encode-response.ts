import type { CodecContext, Encoded, IrResponse, IrWarning } from "../../ir";
import { placeCitations } from "../shared/citations";
import { droppedOutput, warnOnce } from "../shared/output-warnings";
import { encodeResponsesUsage } from "./convert-usage";
import { encodeResponsesStatus } from "./map-finish-reason";
import { functionCallItem, messageItem, reasoningItem, urlCitation, webSearchItem, type OutputItem } from "./output-items";
import { unpackReasoningRef } from "./reasoning-item-ref";
import { encodeResponseId } from "./response-id";

/**
 * IrResponse -> client `response` object. Consecutive text parts form one
 * message item, whose web citations are its output_text's `url_citation` annotations (spans
 * shifted onto the joined text); a web search is a `web_search_call` item in answer order.
 * `usage` is omitted, not zero-filled, when unknown (searches are counted as items, not in
 * usage). `context.newId(prefix)` supplies the item ids (`msg`, `rs`, `fc`). Output items
 * have no form for images, files, another vendor's redacted reasoning or a document
 * citation: those are dropped with a warning.
 */
export function encodeResponsesResponse(response: IrResponse, context: CodecContext): Encoded<Record<string, unknown>> {
  const output: OutputItem[] = [];
  const warnings: IrWarning[] = [];
  let text: string | undefined;
  let annotations: Array<Record<string, unknown>> = [];
  const flushText = (): void => {
    if (text !== undefined) output.push(messageItem(context.newId("msg"), text, "completed", annotations));
    text = undefined;
    annotations = [];
  };
  for (const part of response.content) {
    if (part.type === "text") {
      for (const citation of placeCitations(part.citations, text?.length ?? 0, part.text, warnings)) annotations.push(urlCitation(citation));
      text = (text ?? "") + part.text;
      continue;
    }
    if (part.type === "reasoning") {
      if (part.redactedData !== undefined) {
        warnOnce(warnings, REDACTED_REASONING);
        continue;
      }
      flushText();
      const ref = unpackReasoningRef(part);
      output.push(reasoningItem(ref?.id ?? context.newId("rs"), part.text, "completed", ref?.encryptedContent));
    } else if (part.type === "tool_call") {
      flushText();
      output.push(functionCallItem(context.newId("fc"), part.id, part.name, part.arguments, "completed"));
    } else if (part.type === "web_search") {
      flushText();
      output.push(webSearchItem(part));
    } else if (part.type === "image" || part.type === "file") {
      warnOnce(warnings, droppedOutput(part.type, `Responses output items carry no ${part.type === "image" ? "images" : "files"}`));
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
  return { value: body, warnings };
}

/** Anthropic's `redacted_thinking` is encrypted for Anthropic; a Responses reasoning item cannot hold it. */
export const REDACTED_REASONING = droppedOutput("redacted_reasoning", "redacted (encrypted) reasoning of another vendor has no Responses form; not sent");

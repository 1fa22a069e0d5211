import type { IrWebSearchPart } from "../../ir";
import type { PlacedCitation } from "../shared/citations";

/**
 * Output item shapes shared by the non-stream response and the stream encoder, whose
 * terminal event repeats every completed item
 * (platform.openai.com/docs/api-reference/responses/object#output).
 */
export type OutputItem = Record<string, unknown>;
export type ItemStatus = "in_progress" | "completed";

/** An output_text `url_citation` annotation (`ResponseOutputText.URLCitation`: every field required). */
export function urlCitation(citation: PlacedCitation): Record<string, unknown> {
  return { type: "url_citation", end_index: citation.end, start_index: citation.start, title: citation.title ?? "", url: citation.url };
}

export function outputTextPart(text: string, annotations: Array<Record<string, unknown>> = []): Record<string, unknown> {
  return { type: "output_text", annotations, text };
}

export function messageItem(id: string, text: string | undefined, status: ItemStatus, annotations: Array<Record<string, unknown>> = []): OutputItem {
  return { id, type: "message", status, content: text === undefined ? [] : [outputTextPart(text, annotations)], role: "assistant" };
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

/** A web search's item id: the provider's own when it is a Responses id, otherwise derived from it (a codec has no randomness). */
export function webSearchItemId(search: IrWebSearchPart): string {
  return search.id.startsWith("ws_") ? search.id : `ws_${search.id}`;
}

/**
 * A finished search as OpenAI writes it (`ResponseFunctionWebSearch`, action `search`): the
 * queries (with the deprecated single `query` OpenAI still sends) and the pages found as
 * `sources`. A failed search has no place for its error code but its status.
 */
export function webSearchItem(search: IrWebSearchPart): OutputItem {
  const action: Record<string, unknown> = { type: "search" };
  if (search.queries[0] !== undefined) action.query = search.queries[0];
  action.queries = search.queries;
  if (search.results.length > 0) action.sources = search.results.map((result) => ({ type: "url", url: result.url }));
  return { id: webSearchItemId(search), type: "web_search_call", status: search.errorCode === undefined ? "completed" : "failed", action };
}

import type { IrCitation, IrWarning, IrWebSearchPart, IrWebSearchResult } from "../../ir";
import { isRecord, type JsonObject } from "../shared/json-fields";
import { warnDroppedUpstream } from "../shared/output-warnings";

/** Citations of a request document: their locations only mean something to Anthropic. */
const DOCUMENT_CITATIONS: ReadonlySet<unknown> = new Set(["char_location", "page_location", "content_block_location", "search_result_location"]);

/**
 * A text block's citation -> IrCitation (docs.anthropic.com/en/docs/build-with-claude/citations,
 * and the web search tool's `web_search_result_location`:
 * docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool). A citation cites its
 * whole block, so it has no span. A web page is kept by its url, title and cited text, and
 * its `encrypted_index` (which only lets Anthropic find the passage again) as sealed; a document location is kept
 * verbatim in `document`, with its cited text and the document's title. Any other type is
 * named in `warnings` as `citations`.
 */
export function readAnthropicCitation(raw: unknown, warnings: IrWarning[]): IrCitation | undefined {
  if (!isRecord(raw)) return undefined;
  let citation: IrCitation;
  if (raw.type === "web_search_result_location" && typeof raw.url === "string") {
    citation = { url: raw.url };
    if (typeof raw.title === "string" && raw.title !== "") citation.title = raw.title;
    if (typeof raw.encrypted_index === "string" && raw.encrypted_index !== "") citation.sealed = { protocol: "anthropic-messages", value: raw.encrypted_index };
  } else if (DOCUMENT_CITATIONS.has(raw.type)) {
    citation = { document: { protocol: "anthropic-messages", raw } };
    if (typeof raw.document_title === "string" && raw.document_title !== "") citation.title = raw.document_title;
    else if (typeof raw.title === "string" && raw.title !== "") citation.title = raw.title; // search_result_location
  } else {
    warnDroppedUpstream(warnings, "citations", "on a text block");
    return undefined;
  }
  if (typeof raw.cited_text === "string" && raw.cited_text !== "") citation.citedText = raw.cited_text;
  return citation;
}

/** A text block's `citations`, read (readAnthropicCitation). */
export function readAnthropicCitations(raw: unknown, warnings: IrWarning[]): IrCitation[] {
  if (!Array.isArray(raw)) return [];
  const citations: IrCitation[] = [];
  for (const item of raw) {
    const citation = readAnthropicCitation(item, warnings);
    if (citation !== undefined) citations.push(citation);
  }
  return citations;
}

/**
 * A `server_tool_use` block of the web search tool (`name: "web_search"`, `input: {query}`),
 * as a web search with no results yet: they come in the `web_search_tool_result` block that
 * names its id (withWebSearchResult). Undefined for any other server tool (web fetch, code
 * execution, tool search), which the IR has no place for.
 */
export function webSearchOfToolUse(block: JsonObject, input: unknown = block.input): IrWebSearchPart | undefined {
  if (block.name !== "web_search" || typeof block.id !== "string") return undefined;
  const query = isRecord(input) ? input.query : undefined;
  return { type: "web_search", id: block.id, queries: typeof query === "string" && query !== "" ? [query] : [], results: [] };
}

/**
 * The search with the pages of its `web_search_tool_result` block: `content` is a list of
 * `web_search_result` (`url`, `title`, `page_age`, and the `encrypted_content` only Anthropic
 * reads, kept sealed), or a `web_search_tool_result_error` with its `error_code`.
 */
export function withWebSearchResult(search: IrWebSearchPart, block: JsonObject): IrWebSearchPart {
  const content = block.content;
  if (isRecord(content)) {
    return typeof content.error_code === "string" ? { ...search, errorCode: content.error_code } : search;
  }
  const results: IrWebSearchResult[] = [];
  if (Array.isArray(content)) {
    for (const item of content) {
      if (!isRecord(item) || typeof item.url !== "string" || item.url === "") continue;
      const result: IrWebSearchResult = { url: item.url };
      if (typeof item.title === "string" && item.title !== "") result.title = item.title;
      if (typeof item.page_age === "string" && item.page_age !== "") result.pageAge = item.page_age;
      if (typeof item.encrypted_content === "string" && item.encrypted_content !== "") result.sealed = { protocol: "anthropic-messages", value: item.encrypted_content };
      results.push(result);
    }
  }
  return { ...search, results };
}

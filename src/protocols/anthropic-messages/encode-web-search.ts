import type { IrWebSearchPart } from "../../ir";
import { anthropicSealed } from "./encode-citations";
import type { AnthropicServerToolUseBlock, AnthropicWebSearchToolResultBlock } from "./wire-types";

/**
 * A web search as Anthropic writes one: a `server_tool_use` block named `web_search` with
 * its query, then its `web_search_tool_result` (the pages found, or the error code). Ids
 * look like Anthropic's `srvtoolu_…` and derive from the IR id (a codec has no randomness).
 * Anthropic runs one query per call, so a search of several queries (Gemini) is one pair per
 * query; the pages, reported for the searches together, go with the first.
 *
 * A result's `encrypted_content` is Anthropic's own, needed only to replay the result to
 * Anthropic: given back as it came, and sent as "" for another vendor's page, from which it
 * cannot be rebuilt (request encoders never replay a search to another upstream).
 */
export function webSearchBlocks(search: IrWebSearchPart): Array<AnthropicServerToolUseBlock | AnthropicWebSearchToolResultBlock> {
  const base = search.id.startsWith("srvtoolu_") ? search.id : `srvtoolu_${search.id}`;
  const queries: Array<string | undefined> = search.queries.length > 0 ? search.queries : [undefined];
  return queries.flatMap((query, index) => {
    const id = (index === 0 ? base : `${base}_${index + 1}`).replace(/[^A-Za-z0-9_-]/g, "_");
    const use: AnthropicServerToolUseBlock = { type: "server_tool_use", id, name: "web_search", input: query === undefined ? {} : { query } };
    const content: AnthropicWebSearchToolResultBlock["content"] =
      search.errorCode !== undefined
        ? { type: "web_search_tool_result_error", error_code: search.errorCode }
        : index > 0
          ? []
          : search.results.map((result) => ({
              type: "web_search_result",
              title: result.title ?? "",
              url: result.url,
              encrypted_content: anthropicSealed(result.sealed),
              page_age: result.pageAge ?? null,
            }));
    return [use, { type: "web_search_tool_result", tool_use_id: id, content }];
  });
}

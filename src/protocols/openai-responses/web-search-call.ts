import type { IrWebSearchPart, IrWebSearchResult } from "../../ir";
import { isRecord, parseArgumentsObject, type JsonObject } from "../shared/json-fields";

/**
 * A `web_search_call` output item -> IrWebSearchPart
 * (platform.openai.com/docs/api-reference/responses/object#output: `{id, status, action}`).
 * A `search` action names its queries (`query`, and `queries` where several ran) and, when
 * the request included `web_search_call.action.sources`, the pages found (`sources`); an
 * `open_page` or `find_in_page` action is still a call of the search tool, on one page, which
 * is its result. xAI writes the query in `arguments`, JSON text as a function call's
 * (docs.x.ai/docs/guides/tools/search-tools). `fallbackId` stands in for a missing item id.
 */
export function readWebSearchCall(item: JsonObject, fallbackId: string): IrWebSearchPart {
  const action = isRecord(item.action) ? item.action : {};
  const search: IrWebSearchPart = {
    type: "web_search",
    id: typeof item.id === "string" && item.id !== "" ? item.id : fallbackId,
    queries: queriesOf(action, item.arguments),
    results: resultsOf(action),
  };
  if (item.status === "failed") search.errorCode = "failed";
  return search;
}

function queriesOf(action: JsonObject, argumentsText: unknown): string[] {
  if (Array.isArray(action.queries)) {
    const queries = action.queries.filter((query): query is string => typeof query === "string" && query !== "");
    if (queries.length > 0) return queries;
  }
  if (typeof action.query === "string" && action.query !== "") return [action.query];
  const parsed = typeof argumentsText === "string" ? parseArgumentsObject(argumentsText) : undefined;
  return typeof parsed?.query === "string" && parsed.query !== "" ? [parsed.query] : [];
}

function resultsOf(action: JsonObject): IrWebSearchResult[] {
  if (Array.isArray(action.sources)) {
    const results: IrWebSearchResult[] = [];
    for (const source of action.sources) {
      if (isRecord(source) && typeof source.url === "string" && source.url !== "") results.push({ url: source.url });
    }
    return results;
  }
  return typeof action.url === "string" && action.url !== "" ? [{ url: action.url }] : [];
}

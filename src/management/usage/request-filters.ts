import { badRequest } from "../../errors/api-error";
import type { RequestHistoryFilters } from "../../db/queries/usage";
import { dateParam, type QueryParams } from "./query-params";

/** Longer than any id, status or model id Switchyard writes: refused rather than compared. */
const MAX_FILTER_LENGTH = 512;

/**
 * Reads the history filters of GET …/requests (docs/api/usage-and-history.md "Request
 * history and usage API"), AND-combined; an absent one does not narrow. A value nobody has (a status
 * or key id that does not exist) matches nothing; a malformed one is a 400 naming it.
 */
export function parseRequestFilters(query: QueryParams): RequestHistoryFilters {
  const filters: RequestHistoryFilters = {};
  const status = textFilter(query, "status");
  if (status !== undefined) filters.status = status;
  const modelId = textFilter(query, "model_id");
  if (modelId !== undefined) filters.modelId = modelId;
  const apiKeyId = textFilter(query, "api_key_id");
  if (apiKeyId !== undefined) filters.apiKeyId = apiKeyId;
  const streamed = query.streamed;
  if (streamed !== undefined) {
    if (streamed !== "true" && streamed !== "false") throw badRequest("streamed must be true or false");
    filters.streamed = streamed === "true";
  }
  const from = dateParam(query, "from");
  if (from !== undefined) filters.from = from;
  const to = dateParam(query, "to");
  if (to !== undefined) filters.to = to;
  if (from !== undefined && to !== undefined && from.getTime() >= to.getTime()) throw badRequest("from must be earlier than to");
  return filters;
}

function textFilter(query: QueryParams, name: string): string | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  if (raw.length === 0) throw badRequest(`${name} must not be empty`);
  if (raw.length > MAX_FILTER_LENGTH) throw badRequest(`${name} is longer than ${MAX_FILTER_LENGTH} characters`);
  // PostgreSQL text cannot hold either, so the database would refuse the comparison itself.
  if (raw.includes("\0") || !raw.isWellFormed()) throw badRequest(`${name} must not contain NUL characters or unpaired surrogates`);
  return raw;
}


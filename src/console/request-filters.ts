import { badRequest } from "../errors/api-error";
import type { QueryFields } from "./management-request";

/** The history filters the requests page keeps in its URL, named as the JSON API names them. */
export const FILTER_NAMES = ["status", "model_id", "api_key_id", "streamed", "from", "to"] as const;

export type RequestFilterFields = Partial<Record<(typeof FILTER_NAMES)[number], string>>;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A UTC day typed in a date field, checked to be a real one. */
function dayField(fields: QueryFields, name: "from" | "to", label: string): string | undefined {
  const value = fields[name];
  if (value === undefined || value === "") return undefined;
  const parsed = DAY.test(value) ? new Date(`${value}T00:00:00Z`) : undefined;
  if (!parsed || Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) throw badRequest(`${label} must be a date, e.g. 2026-11-01.`);
  return value;
}

/**
 * The filters of the page's query string: empty fields are no filter, dates are UTC days
 * (`to` included), `streamed` is `true` or `false`. A malformed value is a 400 page
 * naming the field, as the API answers it.
 */
export function requestFilters(fields: QueryFields): RequestFilterFields {
  const filters: RequestFilterFields = {};
  for (const [name, label] of [
    ["status", "Status"],
    ["model_id", "Model"],
    ["api_key_id", "Key"],
  ] as const) {
    const value = fields[name];
    if (value === undefined || value === "") continue;
    // No id, status or model id holds a control character or half a surrogate pair, and
    // PostgreSQL refuses NUL in text: such a value is a malformed filter, not a search.
    if (!value.isWellFormed() || /[\u0000-\u001f\u007f]/.test(value)) throw badRequest(`${label} is not a valid value.`);
    filters[name] = value;
  }
  const streamed = fields.streamed;
  if (streamed !== undefined && streamed !== "") {
    if (streamed !== "true" && streamed !== "false") throw badRequest("Streamed must be true or false.");
    filters.streamed = streamed;
  }
  const from = dayField(fields, "from", "From");
  const to = dayField(fields, "to", "To");
  if (from !== undefined) filters.from = from;
  if (to !== undefined) filters.to = to;
  if (from !== undefined && to !== undefined && from > to) throw badRequest("From must not be after To.");
  return filters;
}

/** The same filters as the JSON API's query parameters: days become RFC 3339 instants, `to` exclusive (the next day's start). */
export function apiFilterQuery(filters: RequestFilterFields): Record<string, string> {
  const query: Record<string, string> = {};
  for (const name of ["status", "model_id", "api_key_id", "streamed"] as const) if (filters[name] !== undefined) query[name] = filters[name]!;
  if (filters.from !== undefined) query.from = `${filters.from}T00:00:00Z`;
  if (filters.to !== undefined) query.to = new Date(Date.parse(`${filters.to}T00:00:00Z`) + 86_400_000).toISOString();
  return query;
}

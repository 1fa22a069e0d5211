import { badRequest } from "../../errors/api-error";
import type { DailyUsageGrouping } from "../../db/queries/usage";

/** Query strings as Elysia hands them over (the last of repeated keys wins). */
export type QueryParams = Record<string, string | undefined>;

export interface Pagination {
  limit: number;
  offset: number;
}

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
/** The default usage window: the last 30 days ending at `to`. */
export const DEFAULT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

const INTEGER = /^-?[0-9]+$/;

/**
 * `limit` and `offset` of a newest-first listing. limit is an
 * integer clamped to [1, 100], default 25; offset an integer ≥ 0, default 0. Anything
 * that is not an integer (including an empty value) is 400 rather than silently
 * defaulted, so a client bug does not read as "no more rows".
 */
export function parsePagination(query: QueryParams): Pagination {
  const limit = integerParam(query, "limit");
  const offset = integerParam(query, "offset");
  if (offset !== undefined && offset < 0) throw badRequest("offset must be an integer ≥ 0");
  if (offset !== undefined && !Number.isSafeInteger(offset)) throw badRequest("offset is too large");
  return {
    limit: limit === undefined ? DEFAULT_LIMIT : Math.min(MAX_LIMIT, Math.max(1, limit)),
    offset: offset ?? 0,
  };
}

/**
 * The deepest `offset` the request history answers. PostgreSQL reads and drops every
 * record before an offset, so a page at offset 1,000,000 costs a million records; past
 * this bound the history wants `after`, which starts at a record through the index and
 * costs the same at any depth.
 */
export const MAX_HISTORY_OFFSET = 10_000;

/** A page of the request history: the listing's `limit` and `offset`, and `after` (a record id) when given. */
export interface HistoryPage extends Pagination {
  /** The id of the record the page follows (the previous page's `next_after`). */
  after?: string;
}

/** What a record id can be: short printable ASCII (rq_… today; older and loaded records have other forms). */
export const RECORD_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * parsePagination, an offset of at most MAX_HISTORY_OFFSET (past it, a 400 that names
 * `after`), and `after`: a record id, or 400. Whether the record is the namespace's is for
 * the service to find out.
 */
export function parseHistoryPage(query: QueryParams): HistoryPage {
  // Checked before parsePagination, so that an offset too large for a safe integer gets this answer too.
  const offset = integerParam(query, "offset");
  if (offset !== undefined && offset > MAX_HISTORY_OFFSET) {
    throw badRequest(`offset must be at most ${MAX_HISTORY_OFFSET}; to read further, pass after=<next_after of the previous page> instead of an offset`);
  }
  const page = parsePagination(query);
  const after = query.after;
  if (after !== undefined) {
    if (!RECORD_ID.test(after)) throw badRequest("after must be a record id: the next_after (or a record's id) of an earlier page");
    return { ...page, after };
  }
  return page;
}

function integerParam(query: QueryParams, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  if (!INTEGER.test(raw)) throw badRequest(`${name} must be an integer`);
  return Number(raw);
}

/**
 * RFC 3339 date-time (section 5.6): full-date "T" full-time with a mandatory offset.
 * Fractions beyond milliseconds are accepted and truncated.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function parseRfc3339(value: string): Date | undefined {
  const match = RFC3339.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // Reject what Date would silently roll over (2025-02-30, 24:00:00, leap seconds).
  const calendar = new Date(0);
  calendar.setUTCFullYear(year, month - 1, day);
  calendar.setUTCHours(hour, minute, second, 0);
  if (
    calendar.getUTCFullYear() !== year ||
    calendar.getUTCMonth() !== month - 1 ||
    calendar.getUTCDate() !== day ||
    calendar.getUTCHours() !== hour ||
    calendar.getUTCMinutes() !== minute ||
    calendar.getUTCSeconds() !== second
  ) {
    return undefined;
  }
  const offset = match[8]!;
  if (offset !== "Z" && offset !== "z") {
    const [offsetHours, offsetMinutes] = offset.slice(1).split(":").map(Number) as [number, number];
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  }
  const fraction = (match[7] ?? "").slice(0, 4).padEnd(4, "0");
  const normalised = `${match.slice(1, 4).join("-")}T${match.slice(4, 7).join(":")}${fraction === "0000" ? "" : fraction}${offset.toUpperCase()}`;
  const parsed = new Date(normalised);
  // PostgreSQL's timestamptz has no year 0 and the ISO form of year 10000 is not RFC 3339.
  if (Number.isNaN(parsed.getTime()) || parsed.getUTCFullYear() < 1 || parsed.getUTCFullYear() > 9999) return undefined;
  return parsed;
}

export interface UsageWindow {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
}

/**
 * The `from` (inclusive) / `to` (exclusive) window of a usage aggregate. `to`
 * defaults to now and `from` to 30 days before `to`; an unparsable value, or
 * from ≥ to, is 400.
 */
export function parseWindow(query: QueryParams, now = new Date()): UsageWindow {
  const from = dateParam(query, "from");
  const to = dateParam(query, "to") ?? now;
  const window = { from: from ?? new Date(to.getTime() - DEFAULT_WINDOW_MS), to };
  if (window.from.getTime() >= window.to.getTime()) throw badRequest("from must be earlier than to");
  return window;
}

/** The longest window daily usage answers for. */
export const MAX_DAILY_WINDOW_DAYS = 400;

/** parseWindow, and a window longer than MAX_DAILY_WINDOW_DAYS is 400. */
export function parseDailyWindow(query: QueryParams, now = new Date()): UsageWindow {
  const window = parseWindow(query, now);
  if (window.to.getTime() - window.from.getTime() > MAX_DAILY_WINDOW_DAYS * 24 * 60 * 60 * 1000) {
    throw badRequest(`from and to may be at most ${MAX_DAILY_WINDOW_DAYS} days apart`);
  }
  return window;
}

const GROUPINGS: ReadonlySet<string> = new Set(["model", "api_key", "provider"]);

/** `group_by` of daily usage: model, api_key, provider, or absent (null); anything else is 400. */
export function parseGroupBy(query: QueryParams): DailyUsageGrouping {
  const raw = query.group_by;
  if (raw === undefined) return null;
  if (!GROUPINGS.has(raw)) throw badRequest('group_by must be one of "model", "api_key", "provider"');
  return raw as DailyUsageGrouping;
}

/** An optional RFC 3339 query parameter: undefined when absent, a 400 naming it when unparsable. */
export function dateParam(query: QueryParams, name: string): Date | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  const parsed = parseRfc3339(raw);
  if (!parsed) throw badRequest(`${name} must be an RFC 3339 date-time, e.g. 2025-01-31T00:00:00Z`);
  return parsed;
}

import type { Sql } from "../connect-database";
import type { UsageEvidence } from "../usage-evidence-shape";
import type { AttemptSummary } from "../attempt-summary-shape";
import { DAY_MS, splitAtWhole, splitAtWholeDaysAndHours } from "./rollup-window";
import { runQuery, runQueryPlannedPerCall, runQueryRow } from "./run-query";

/** A stored request record as the history lists it: metadata only, no prompt or response. */
export interface RequestRecordRow {
  id: string;
  request_id: string;
  /** The API key that made the request; null for an OAuth token's request and for records older than attribution. */
  api_key_id: string | null;
  /** The OAuth grant whose access token made the request, or null. */
  oauth_token_id: string | null;
  billing_status: string;
  created_at: Date;
  completed_at: Date;
  prompt_tokens: number;
  completion_tokens: number;
  final_charge_micro_usd: number | null;
  finish_reason: string | null;
  first_token_kind: string | null;
  funding_source: string | null;
  generation_duration_ms: number | null;
  request_duration_ms: number | null;
  upstream_duration_ms: number | null;
  ttft_ms: number | null;
  model_id: string | null;
  provider_id: string | null;
  routing_profile: string | null;
  status: string;
  status_code: number;
  streamed: boolean;
  used_capabilities: string[];
  usage_evidence: UsageEvidence;
  /** The `refused_by_policy` warning of a request a policy refused: the policy's id in `field`. */
  refusal: { field?: string; message: string } | null;
  /** The name of the routing preset the request named (its `routing_preset` warning), or null. */
  routing_preset: string | null;
  /** created_at as PostgreSQL's text, microseconds kept: a listing's position (ListingPosition). */
  keyset_created_at?: string;
}

/** A record with what the request detail adds: every warning, every attempt (null on records older than 0028). */
export interface RequestDetailRow extends RequestRecordRow {
  warnings: { code: string; field?: string; message: string }[];
  attempts: AttemptSummary[] | null;
}

export interface NamespaceUsageRow {
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_micro_usd: number;
  billing_anomalies: number;
  capability_request_counts: Record<string, number>;
}

/** One UTC day (and group) of a namespace's usage. */
export interface DailyUsageRow {
  /** YYYY-MM-DD, UTC. */
  date: string;
  group: string | null;
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_micro_usd: number;
}

/** What daily usage is split by; null: nothing (one row per day). */
export type DailyUsageGrouping = "model" | "api_key" | "provider" | null;

export interface AccountUsageRow {
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  billing_anomalies: number;
  /** Signed sums as stored: debits are negative. */
  usage_amount_micro_usd: number;
  usage_count: number;
  pending_debit_recovery_amount_micro_usd: number;
  pending_debit_recovery_count: number;
}

export interface SettlementRow {
  request_id: string;
  billing_status: string;
  model_id: string | null;
  provider_id: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** The billing-audit charge, else the request row's; null when unknown. */
  charge_micro_usd: number | null;
}

/** A half-open time window [from, to). */
export interface TimeWindow {
  from: Date;
  to: Date;
}

/** The history filters, AND-combined; an absent one does not narrow. */
export interface RequestHistoryFilters {
  status?: string;
  modelId?: string;
  apiKeyId?: string;
  streamed?: boolean;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

/** Where the previous page of a listing ended: its last record's exact created_at (keyset_created_at) and id. */
export interface ListingPosition {
  createdAt: string;
  id: string;
}

/** Newest first; `after`: only records older than that position (the offset then counts from it). */
export function listNamespaceRequests(
  sql: Sql,
  accountId: string,
  namespaceId: string,
  limit: number,
  offset: number,
  filters: RequestHistoryFilters = {},
  after?: ListingPosition,
): Promise<RequestRecordRow[]> {
  const params = [
    accountId,
    namespaceId,
    limit,
    offset,
    filters.status ?? null,
    filters.modelId ?? null,
    filters.streamed ?? null,
    filters.from?.toISOString() ?? null,
    filters.to?.toISOString() ?? null,
    after?.createdAt ?? null,
    after?.id ?? null,
  ];
  // Planned on every call: a generic plan cannot see which months the range keeps, and
  // sorts a large namespace whole (src/db/README.md, "The request table's monthly partitions").
  if (filters.apiKeyId === undefined) return runQueryPlannedPerCall<RequestRecordRow>(sql, "listNamespaceRequests", params);
  return runQueryPlannedPerCall<RequestRecordRow>(sql, "listKeyRequests", [...params, filters.apiKeyId]);
}

/** Where the namespace's record `recordId` stands in its history; undefined when the namespace has no such record. */
export function findNamespaceRequestPosition(sql: Sql, accountId: string, namespaceId: string, recordId: string): Promise<ListingPosition | undefined> {
  return runQueryRow<{ created_at: string; id: string }>(sql, "findNamespaceRequestPosition", [accountId, namespaceId, recordId]).then((row) =>
    row === undefined ? undefined : { createdAt: row.created_at, id: row.id },
  );
}

export function findNamespaceRequest(sql: Sql, accountId: string, namespaceId: string, recordId: string): Promise<RequestDetailRow | undefined> {
  return runQueryRow<RequestDetailRow>(sql, "findNamespaceRequest", [accountId, namespaceId, recordId]);
}

/** The window's bounds, then the whole UTC days it reads from the usage rollups (rollup-window.ts). */
function windowParams(window: TimeWindow): [string, string, string, string] {
  const { wholeFrom, wholeTo } = splitAtWhole(window.from, window.to, DAY_MS);
  return [window.from.toISOString(), window.to.toISOString(), wholeFrom.toISOString(), wholeTo.toISOString()];
}

/**
 * The window's bounds, its whole UTC days, then its whole UTC hours (rollup-window.ts): the
 * namespace reads take the partial days at the edges from the hour rollups (migration 0035).
 */
function hourWindowParams(window: TimeWindow): [string, string, string, string, string, string] {
  const { days, hours } = splitAtWholeDaysAndHours(window.from, window.to);
  return [
    window.from.toISOString(), window.to.toISOString(), days.wholeFrom.toISOString(), days.wholeTo.toISOString(),
    hours.wholeFrom.toISOString(), hours.wholeTo.toISOString(),
  ];
}

export async function namespaceUsage(sql: Sql, accountId: string, namespaceId: string, window: TimeWindow): Promise<NamespaceUsageRow> {
  const [row] = await runQuery<NamespaceUsageRow>(sql, "namespaceUsage", [accountId, namespaceId, ...hourWindowParams(window)]);
  return row!;
}

/** Days without requests have no row; ordered by day, then group. */
export function dailyNamespaceUsage(sql: Sql, accountId: string, namespaceId: string, window: TimeWindow, groupBy: DailyUsageGrouping): Promise<DailyUsageRow[]> {
  const [from, to, wholeFrom, wholeTo, hoursFrom, hoursTo] = hourWindowParams(window);
  return runQuery<DailyUsageRow>(sql, "dailyNamespaceUsage", [accountId, namespaceId, from, to, groupBy, wholeFrom, wholeTo, hoursFrom, hoursTo]);
}

/** Refusals of a namespace counted without a record of their own (migration 0036), by API key and status. */
export interface UnrecordedRefusalRow {
  api_key_id: string | null;
  status_code: number;
  count: number;
}

/** A namespace's refusals over the window that have no record, by API key and status. */
export function unrecordedRefusals(sql: Sql, accountId: string, namespaceId: string, window: TimeWindow): Promise<UnrecordedRefusalRow[]> {
  return runQuery<UnrecordedRefusalRow>(sql, "unrecordedRefusals", [accountId, namespaceId, window.from.toISOString(), window.to.toISOString()]);
}

/** `namespaceId` null = the whole account. */
export async function accountUsage(sql: Sql, accountId: string, namespaceId: string | null, window: TimeWindow): Promise<AccountUsageRow> {
  const [row] = await runQuery<AccountUsageRow>(sql, "accountUsage", [accountId, namespaceId, ...windowParams(window)]);
  return row!;
}

/** `namespaceId` null = anywhere in the account. */
export async function findSettlement(sql: Sql, accountId: string, requestId: string, namespaceId: string | null): Promise<SettlementRow | undefined> {
  return runQueryRow<SettlementRow>(sql, "findSettlement", [accountId, requestId, namespaceId]);
}

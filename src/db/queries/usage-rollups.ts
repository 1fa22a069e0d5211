import type { Sql } from "../connect-database";
import { runCommand } from "./run-query";

/**
 * The usage rollups' writes (sql/queries/usage-rollups.sql, migrations 0034 and 0035): deltas the
 * metering writer summed over the rows its transaction inserted, added in that transaction.
 */

/** One (account, namespace, key, model, provider, UTC day) and its sums. */
export interface RequestUsageDay {
  account_id: string;
  namespace_id: string | null;
  api_key_id: string | null;
  model_id: string | null;
  provider_id: string | null;
  /** YYYY-MM-DD, UTC. */
  day: string;
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Known charges only; a null charge counts in unknown_charge_count. */
  spend_micro_usd: number;
  unknown_charge_count: number;
  succeeded_count: number;
  succeeded_prompt_tokens: number;
  succeeded_completion_tokens: number;
  succeeded_reasoning_tokens: number;
}

/** Requests of one (account, namespace, UTC day) that used a capability. */
export interface RequestCapabilityDay {
  account_id: string;
  namespace_id: string | null;
  day: string;
  capability: string;
  request_count: number;
}

/** One (UTC minute, provider, account) of requests with a provider. */
export interface ProviderRequestMinute {
  /** ISO timestamp of the minute's start. */
  minute: string;
  provider_id: string;
  account_id: string;
  request_count: number;
  succeeded_prompt_tokens: number;
  succeeded_cache_read_tokens: number;
}

/**
 * One (account, namespace, key, model, provider, UTC hour) and the sums the namespace and
 * daily reads take from it (migration 0035): the same sums as the day's.
 */
export interface RequestUsageHour {
  account_id: string;
  namespace_id: string | null;
  api_key_id: string | null;
  model_id: string | null;
  provider_id: string | null;
  /** ISO timestamp of the hour's start. */
  hour: string;
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_micro_usd: number;
  unknown_charge_count: number;
}

/** Requests of one (account, namespace, UTC hour) that used a capability. */
export interface RequestCapabilityHour {
  account_id: string;
  namespace_id: string | null;
  hour: string;
  capability: string;
  request_count: number;
}

export interface RequestUsageDeltas {
  days: RequestUsageDay[];
  capabilities: RequestCapabilityDay[];
  minutes: ProviderRequestMinute[];
  hours: RequestUsageHour[];
  capabilityHours: RequestCapabilityHour[];
}

/** Adds the deltas of records just inserted, in the caller's transaction. Rows sorted by key (requestUsageDeltas). */
export async function addRequestUsage(tx: Sql, deltas: RequestUsageDeltas): Promise<void> {
  const { days, capabilities, minutes, hours, capabilityHours } = deltas;
  if (days.length === 0) return;
  const column = <Row, Key extends keyof Row>(rows: readonly Row[], key: Key) => rows.map((row) => row[key]) as never;
  await runCommand(tx, "addRequestUsage", [
    column(days, "account_id"), column(days, "namespace_id"), column(days, "api_key_id"), column(days, "model_id"), column(days, "provider_id"), column(days, "day"),
    column(days, "request_count"), column(days, "prompt_tokens"), column(days, "completion_tokens"), column(days, "reasoning_tokens"),
    column(days, "cache_read_tokens"), column(days, "cache_write_tokens"), column(days, "spend_micro_usd"), column(days, "unknown_charge_count"),
    column(days, "succeeded_count"), column(days, "succeeded_prompt_tokens"), column(days, "succeeded_completion_tokens"), column(days, "succeeded_reasoning_tokens"),
    column(capabilities, "account_id"), column(capabilities, "namespace_id"), column(capabilities, "day"), column(capabilities, "capability"), column(capabilities, "request_count"),
    column(minutes, "minute"), column(minutes, "provider_id"), column(minutes, "account_id"),
    column(minutes, "request_count"), column(minutes, "succeeded_prompt_tokens"), column(minutes, "succeeded_cache_read_tokens"),
    column(hours, "account_id"), column(hours, "namespace_id"), column(hours, "api_key_id"), column(hours, "model_id"), column(hours, "provider_id"), column(hours, "hour"),
    column(hours, "request_count"), column(hours, "prompt_tokens"), column(hours, "completion_tokens"), column(hours, "spend_micro_usd"), column(hours, "unknown_charge_count"),
    column(capabilityHours, "account_id"), column(capabilityHours, "namespace_id"), column(capabilityHours, "hour"), column(capabilityHours, "capability"),
    column(capabilityHours, "request_count"),
  ]);
}

/** `usage` and `pending_debit_recovery` entries of one (account, namespace, kind), summed. */
export interface LedgerUsageTotal {
  account_id: string;
  namespace_id: string | null;
  kind: string;
  amount_micro_usd: number;
  entry_count: number;
}

/** Adds ledger entries just COPYed in the caller's transaction (their day is its now()). */
export async function addLedgerUsage(tx: Sql, totals: readonly LedgerUsageTotal[]): Promise<void> {
  if (totals.length === 0) return;
  await runCommand(tx, "addLedgerUsage", [
    totals.map((total) => total.account_id),
    totals.map((total) => total.namespace_id),
    totals.map((total) => total.kind),
    totals.map((total) => total.amount_micro_usd),
    totals.map((total) => total.entry_count),
  ]);
}

/** Drops provider minutes before `before`; resolves to how many. */
export function pruneProviderRequestMinutes(sql: Sql, before: Date): Promise<number> {
  return runCommand(sql, "pruneProviderRequestMinutes", [before]);
}

import type { Sql } from "../connect-database";
import { columns, runCommand } from "./run-query";

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
  await runCommand(tx, "addRequestUsage", [
    ...columns(days, "account_id", "namespace_id", "api_key_id", "model_id", "provider_id", "day"),
    ...columns(days, "request_count", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens", "spend_micro_usd", "unknown_charge_count"),
    ...columns(days, "succeeded_count", "succeeded_prompt_tokens", "succeeded_completion_tokens", "succeeded_reasoning_tokens"),
    ...columns(capabilities, "account_id", "namespace_id", "day", "capability", "request_count"),
    ...columns(minutes, "minute", "provider_id", "account_id", "request_count", "succeeded_prompt_tokens", "succeeded_cache_read_tokens"),
    ...columns(hours, "account_id", "namespace_id", "api_key_id", "model_id", "provider_id", "hour"),
    ...columns(hours, "request_count", "prompt_tokens", "completion_tokens", "spend_micro_usd", "unknown_charge_count"),
    ...columns(capabilityHours, "account_id", "namespace_id", "hour", "capability", "request_count"),
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
  await runCommand(tx, "addLedgerUsage", columns(totals, "account_id", "namespace_id", "kind", "amount_micro_usd", "entry_count"));
}

/** Drops provider minutes before `before`; resolves to how many. */
export function pruneProviderRequestMinutes(sql: Sql, before: Date): Promise<number> {
  return runCommand(sql, "pruneProviderRequestMinutes", [before]);
}

import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

/**
 * Typed wrappers for sql/queries/admission.sql: the budget and rate-limit counters.
 * Every function that changes a counter runs inside a transaction that has called
 * `lockCounters` on that counter's key first (the lock order of admission.sql).
 */

export interface CounterState {
  counter_key: string;
  reserved_micro_usd: number;
  spent_micro_usd: number;
  window_spent_micro_usd: number;
  window_requests: number;
  window_tokens: number;
  /** The database's time of the judgement, as text (microseconds kept), passed back to apply. */
  judged_at: string;
}

/** Creates missing counters and locks them all, in byte order of the key. */
export async function lockCounters(tx: Sql, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await runQuery(tx, "lockCounters", [sortedUnique(keys)]);
}

export interface BudgetWindowQuery {
  key: string;
  /** The rolling window in seconds; 0 for `total` (the lifetime sum is read instead). */
  windowSecs: number;
}

export interface RateWindowQuery {
  key: string;
  windowSecs: number;
}

export function counterWindowState(tx: Sql, budgets: readonly BudgetWindowQuery[], rates: readonly RateWindowQuery[]): Promise<CounterState[]> {
  return runQuery<CounterState>(tx, "counterWindowState", [
    budgets.map((b) => b.key),
    budgets.map((b) => b.windowSecs),
    rates.map((r) => r.key),
    rates.map((r) => r.windowSecs),
  ]);
}

/** Whole seconds until `requests` admissions and `tokens` tokens have left the window; undefined if never. */
export async function rateLimitRoomAt(tx: Sql, key: string, windowSecs: number, requests: number, tokens: number, judgedAt: string): Promise<number | undefined> {
  const [row] = await runQuery<{ wait_secs: number }>(tx, "rateLimitRoomAt", [key, windowSecs, requests, tokens, judgedAt]);
  return row?.wait_secs;
}

export interface NewHold {
  key: string;
  amountMicroUsd: number;
  bucketSecs: number;
}

export interface NewRateAdmission {
  key: string;
  tokens: number;
}

export async function applyAdmission(
  tx: Sql,
  grantId: string,
  holds: readonly NewHold[],
  admissions: readonly NewRateAdmission[],
  judgedAt: string,
  holdTtlSecs: number,
): Promise<void> {
  await runQuery(tx, "applyAdmission", [
    grantId,
    holds.map((h) => h.key),
    holds.map((h) => h.amountMicroUsd),
    holds.map((h) => h.bucketSecs),
    admissions.map((a) => a.key),
    admissions.map((a) => a.tokens),
    judgedAt,
    holdTtlSecs,
  ]);
}

/** Moves a grant's holds to spend at `chargeMicroUsd` each (null: the whole hold). Idempotent. */
export async function settleHolds(tx: Sql, grantId: string, chargeMicroUsd: number | null): Promise<void> {
  await runQuery(tx, "settleHolds", [grantId, chargeMicroUsd]);
}

/** Returns a grant's holds and withdraws its rate-limit admissions. Idempotent. */
export async function releaseGrant(tx: Sql, grantId: string): Promise<void> {
  await runQuery(tx, "releaseGrant", [grantId]);
}

export async function renewHolds(sql: Sql, grantIds: readonly string[], ttlSecs: number): Promise<void> {
  if (grantIds.length === 0) return;
  await runQuery(sql, "renewHolds", [[...grantIds], ttlSecs]);
}

export async function countersWithExpiredHolds(sql: Sql): Promise<string[]> {
  const rows = await runQuery<{ counter_key: string }>(sql, "countersWithExpiredHolds", []);
  return rows.map((row) => row.counter_key);
}

/** After lockCounters on `keys`: counts their expired holds as spent. Returns how many holds were swept. */
export async function sweepExpiredHolds(tx: Sql, keys: readonly string[]): Promise<number> {
  const rows = await runQuery<{ counter_key: string; holds: number }>(tx, "sweepExpiredHolds", [[...keys]]);
  return rows.reduce((sum, row) => sum + Number(row.holds), 0);
}

export async function pruneBudgetSpend(sql: Sql, olderThanSecs: number): Promise<void> {
  await runQuery(sql, "pruneBudgetSpend", [olderThanSecs]);
}

/** Distinct keys, sorted (lockCounters sorts them again in the counters' "C" collation: the lock order). */
export function sortedUnique(keys: Iterable<string>): string[] {
  return [...new Set(keys)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

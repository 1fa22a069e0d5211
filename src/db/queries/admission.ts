import type { Sql } from "../connect-database";
import { columns, runQuery, type SqlParam } from "./run-query";

/**
 * Typed wrappers for sql/queries/admission.sql: the budget and rate-limit counters.
 * Everything that changes a counter locks its row first, keys in byte order (the lock
 * order of admission.sql): the functions of migration 0024 do it themselves, the sweep
 * calls `lockCounters` in its transaction.
 */

export interface BudgetToAdmit {
  key: string;
  /** The rolling window in seconds; 0 for `total` (the lifetime sum is read instead). */
  windowSecs: number;
  limitMicroUsd: number;
  bucketSecs: number;
}

export interface RateLimitToAdmit {
  key: string;
  windowSecs: number;
  maxRequests: number | null;
  maxTokens: number | null;
}

/**
 * A policy's clauses as admitGrants and takeLease take them: four arrays of budget fields,
 * then four of rate-limit fields, with nulls inside the arrays for "no such limit".
 */
function clauseColumns(budgets: readonly BudgetToAdmit[], rates: readonly RateLimitToAdmit[]): SqlParam[] {
  return [...columns(budgets, "key", "windowSecs", "limitMicroUsd", "bucketSecs"), ...columns(rates, "key", "windowSecs", "maxRequests", "maxTokens")];
}

/** Why admission_admit_batch refused a request: the clause (by its index in the lists passed) and what it saw. */
export type CounterRefusal =
  | { clause: "budget"; index: number; spentMicroUsd: number; reservedMicroUsd: number }
  | { clause: "rate_limit"; index: number; retryAfterSecs: number };

/** One request of a batch: its grant, the cost ceiling it reserves on every budget, the output ceiling it counts on every rate limit. */
export interface GrantToAdmit {
  grantId: string;
  amountMicroUsd: number;
  tokens: number;
}

/** One grant of a batch to settle (null: the charge is unknown, the whole hold counts). */
export interface GrantToEnd {
  grantId: string;
  chargeMicroUsd: number | null;
}

interface RefusalRow {
  request_index: number | null;
  refused_clause: "budget" | "rate_limit" | "window";
  clause_index: number;
  spent_micro_usd: number | null;
  reserved_micro_usd: number | null;
  retry_after_secs: number | null;
  window_requests: string | number | null;
  window_tokens: string | number | null;
  reset_secs: number | null;
}

/** A rate limit's window after a batch: what it counts, and whole seconds until its oldest admission leaves (null: it counts none). */
export interface RateWindow {
  requests: number;
  tokens: number;
  resetSecs: number | null;
}

/** A batch's outcome: per grant, undefined (admitted) or why it was refused; per rate limit (in the order passed), its window after the batch. */
export interface AdmittedBatch {
  refusals: (CounterRefusal | undefined)[];
  windows: (RateWindow | undefined)[];
}

/**
 * Admits `grants`, in order, against every budget (each reserving its amount) and every
 * rate limit (one request of its tokens each); a refused grant takes nothing. One round
 * trip for the batch, which also reads what each rate limit's window counts after it.
 */
export async function admitGrants(
  sql: Sql,
  grants: readonly GrantToAdmit[],
  budgets: readonly BudgetToAdmit[],
  rates: readonly RateLimitToAdmit[],
  holdTtlSecs: number,
): Promise<AdmittedBatch> {
  const rows = await runQuery<RefusalRow>(sql, "admitGrants", [
    ...columns(grants, "grantId", "amountMicroUsd", "tokens"),
    ...clauseColumns(budgets, rates),
    holdTtlSecs,
  ]);
  const results: (CounterRefusal | undefined)[] = grants.map(() => undefined);
  const windows: (RateWindow | undefined)[] = rates.map(() => undefined);
  for (const row of rows) {
    const index = row.clause_index - 1;
    if (row.refused_clause === "window") {
      windows[index] = { requests: Number(row.window_requests), tokens: Number(row.window_tokens), resetSecs: row.reset_secs };
      continue;
    }
    results[row.request_index! - 1] =
      row.refused_clause === "budget"
        ? { clause: "budget", index, spentMicroUsd: Number(row.spent_micro_usd), reservedMicroUsd: Number(row.reserved_micro_usd) }
        : { clause: "rate_limit", index, retryAfterSecs: Number(row.retry_after_secs) };
  }
  return { refusals: results, windows };
}

/** Settles grants (their holds move to spend at their charge, at most the hold) or releases them, all of counter keys `keys`. Idempotent. */
export async function endGrants(sql: Sql, grants: readonly GrantToEnd[], keys: readonly string[], release: boolean): Promise<void> {
  await runQuery(sql, "endGrants", [grants.map((g) => g.grantId), grants.map((g) => g.chargeMicroUsd) as readonly number[], [...keys], release]);
}

/** Creates missing counters and locks them all, in byte order of the key. Inside a transaction. */
export async function lockCounters(tx: Sql, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await runQuery(tx, "lockCounters", [[...new Set(keys)]]);
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

/** A lease's size and the clauses it is taken on (admission_lease_take, migration 0029). */
export interface LeaseToTake {
  leaseId: string;
  /** Reserved on every budget. */
  amountMicroUsd: number;
  /** Requests and tokens counted on every rate limit. */
  requests: number;
  tokens: number;
  budgets: readonly BudgetToAdmit[];
  rates: readonly RateLimitToAdmit[];
  holdTtlSecs: number;
  /** How long the lease admits requests; its rate-limit row is stamped that far ahead. */
  lifeSecs: number;
  /** Granted only while every clause keeps at least this many times the lease free. */
  headroomFactor: number;
}

/** Takes a lease in one round trip: true when granted, false when a clause is too near its limit (nothing taken). */
export async function takeLease(sql: Sql, lease: LeaseToTake): Promise<boolean> {
  const rows = await runQuery<{ granted: boolean }>(sql, "takeLease", [
    lease.leaseId,
    lease.amountMicroUsd,
    lease.requests,
    lease.tokens,
    ...clauseColumns(lease.budgets, lease.rates),
    lease.holdTtlSecs,
    lease.lifeSecs,
    lease.headroomFactor,
  ]);
  return rows[0]?.granted === true;
}

/** What a lease used when it ends: charges by the second their requests started (epoch seconds), and the requests and tokens it admitted. */
export interface LeaseToEnd {
  leaseId: string;
  keys: readonly string[];
  charges: ReadonlyMap<number, number>;
  usedRequests: number;
  usedTokens: number;
}

/** Ends a lease (admission_lease_end). Idempotent. */
export async function endLease(sql: Sql, lease: LeaseToEnd): Promise<void> {
  await runQuery(sql, "endLease", [lease.leaseId, [...lease.keys], [...lease.charges.keys()], [...lease.charges.values()], lease.usedRequests, lease.usedTokens]);
}

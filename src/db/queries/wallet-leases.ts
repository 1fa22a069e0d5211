import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

/** What a grant added to a lease; `per_request`: the wallet is low, the grant is exactly what was needed. */
export interface LeaseGrant {
  amount: number;
  per_request: boolean;
}

export interface LeaseRequest {
  accountId: string;
  leaseId: string;
  /** What the waiting request still needs. */
  needed: number;
  /** The most a grant takes while the balance is not low. */
  chunk: number;
  ttlSeconds: number;
  /** Below this available balance the grant is `needed` alone. */
  lowBalance: number;
}

/** Grants the lease part of its wallet's balance in one statement; undefined when the wallet cannot cover `needed`. */
export async function acquireLease(sql: Sql, request: LeaseRequest): Promise<LeaseGrant | undefined> {
  return runQueryRow<LeaseGrant>(sql, "acquireLease", [request.accountId, request.needed, request.chunk, request.leaseId, request.ttlSeconds, request.lowBalance]);
}

/** Gives `unused` of the lease back to its wallet. After lockWalletsThenLeases on its account, in that transaction. */
export async function returnUnusedLease(tx: Sql, leaseId: string, unused: number): Promise<void> {
  await runQuery(tx, "returnLease", [leaseId, unused]);
}

/** Extends the leases; returns what each one's wallet has available. After lockWalletsThenLeases on the leases. */
export function renewLeases(tx: Sql, leaseIds: readonly string[], ttlSeconds: number): Promise<{ id: string; free: number }[]> {
  return runQuery<{ id: string; free: number }>(tx, "renewLeases", [leaseIds, ttlSeconds]);
}

/** Accounts with any instance's expired lease (read, not locked). */
export async function accountsWithExpiredLeases(sql: Sql): Promise<string[]> {
  return (await runQuery<{ account_id: string }>(sql, "accountsWithExpiredLeases", [])).map((row) => row.account_id);
}

/** Locks the expired leases of the accounts and gives them back to their wallets. After lockWalletsThenLeases on the accounts. */
export async function giveExpiredLeasesBack(tx: Sql, accountIds: readonly string[]): Promise<void> {
  const expired = await runQuery<{ id: string }>(tx, "lockExpiredLeases", [accountIds]);
  if (expired.length > 0) await runQuery(tx, "sweepExpiredLeases", [expired.map((row) => row.id)]);
}

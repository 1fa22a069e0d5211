import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

export interface WalletBalanceRow {
  balance_micro_usd: number;
  reserved_micro_usd: number;
}

export interface LedgerEntryRow {
  id: string;
  kind: "usage" | "pending_debit_recovery" | "credit" | "refund";
  /** Signed: credits positive, debits negative. */
  amount_micro_usd: number;
  /** The client-visible request id of the request the entry settles, if any. */
  request_id: string | null;
  namespace_id: string | null;
  created_at: Date;
}

export async function billingBalance(sql: Sql, accountId: string): Promise<WalletBalanceRow | undefined> {
  return runQueryRow<WalletBalanceRow>(sql, "billingBalance", [accountId]);
}

/** Where a ledger entry stands in listLedgerEntries' order (its three sort keys). */
export interface LedgerPosition {
  createdAt: string;
  settledCreatedAt: string;
  id: string;
}

/** `namespaceId` null = every entry of the account; `after`: only entries that sort after that position. */
export function listLedgerEntries(sql: Sql, accountId: string, namespaceId: string | null, limit: number, offset: number, after?: LedgerPosition): Promise<LedgerEntryRow[]> {
  return runQuery<LedgerEntryRow>(sql, "listLedgerEntries", [accountId, namespaceId, limit, offset, after?.createdAt ?? null, after?.settledCreatedAt ?? null, after?.id ?? null]);
}

/** The position of an entry the caller may list; undefined for a missing one or another tenant's alike. */
export function findLedgerEntryPosition(sql: Sql, accountId: string, namespaceId: string | null, entryId: string): Promise<LedgerPosition | undefined> {
  return runQueryRow<{ created_at: string; settled_created_at: string; id: string }>(sql, "findLedgerEntryPosition", [accountId, namespaceId, entryId]).then((row) =>
    row === undefined ? undefined : { createdAt: row.created_at, settledCreatedAt: row.settled_created_at, id: row.id },
  );
}

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

/** `namespaceId` null = every entry of the account. */
export function listLedgerEntries(sql: Sql, accountId: string, namespaceId: string | null, limit: number, offset: number): Promise<LedgerEntryRow[]> {
  return runQuery<LedgerEntryRow>(sql, "listLedgerEntries", [accountId, namespaceId, limit, offset]);
}

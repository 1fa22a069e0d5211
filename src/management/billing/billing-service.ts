import { billingBalance, findLedgerEntryPosition, listLedgerEntries, type LedgerEntryRow, type LedgerPosition } from "../../db/queries/billing";
import { badRequest, notFound } from "../../errors/api-error";
import type { Principal } from "../../auth/principal";
import type { Services } from "../../services";
import type { HistoryPage } from "../usage/query-params";

/** What the billing service uses: the database (the wallet and its ledger). */
export type BillingServiceDeps = Pick<Services, "db">;

/**
 * The account balance. pending_debits_micro_usd is wallets.reserved_micro_usd: with wallet
 * leases that is every live lease's amount — reservations of requests in flight,
 * charges settled but not yet flushed, and headroom an instance leased for this account
 * and gives back after ~5 s idle. So it is conservative: available never overstates
 * what admission would grant on another instance.
 */
export interface BalanceEnvelope {
  balance_micro_usd: number;
  pending_debits_micro_usd: number;
  /** max(balance − pending, 0). */
  available_micro_usd: number;
  currency: "USD";
}

export async function walletBalance(deps: BillingServiceDeps, accountId: string): Promise<BalanceEnvelope> {
  const row = await billingBalance(deps.db.sql, accountId);
  if (!row) throw notFound("wallet");
  return {
    balance_micro_usd: row.balance_micro_usd,
    pending_debits_micro_usd: row.reserved_micro_usd,
    available_micro_usd: Math.max(row.balance_micro_usd - row.reserved_micro_usd, 0),
    currency: "USD",
  };
}

/**
 * One wallet ledger entry. The shape is Switchyard's own:
 * kind is `credit` (operator top-up), `usage` (a request's debit), `pending_debit_recovery`
 * (a request whose charge was unknown at settlement) or `refund`; amount_micro_usd is
 * signed (+credit, −debit); request_id is the client-visible id of the request an entry
 * settles, null for credits.
 */
export interface TransactionEnvelope {
  id: string;
  kind: LedgerEntryRow["kind"];
  amount_micro_usd: number;
  request_id: string | null;
  namespace_id: string | null;
  created_at: string;
}

export function transactionEnvelope(row: LedgerEntryRow): TransactionEnvelope {
  return {
    id: row.id,
    kind: row.kind,
    amount_micro_usd: row.amount_micro_usd,
    request_id: row.request_id,
    namespace_id: row.namespace_id,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * Ledger entries newest first. An account-wide credential sees the whole account; a
 * namespace-bound one only the entries attributed to its namespace (its requests'
 * debits), never the account's credits or other namespaces' usage.
 */
export async function listTransactions(deps: BillingServiceDeps, principal: Principal, page: HistoryPage) {
  let position: LedgerPosition | undefined;
  if (page.after !== undefined) {
    position = await findLedgerEntryPosition(deps.db.sql, principal.accountId, principal.namespaceId, page.after);
    if (position === undefined) throw badRequest(UNKNOWN_TRANSACTION_AFTER);
  }
  // One entry more than the page: next_after is null exactly when nothing follows.
  const rows = await listLedgerEntries(deps.db.sql, principal.accountId, principal.namespaceId, page.limit + 1, page.offset, position);
  const data = rows.slice(0, page.limit).map(transactionEnvelope);
  return { data, limit: page.limit, offset: page.offset, next_after: rows.length > page.limit ? data.at(-1)!.id : null };
}

/** A missing entry and another account's or namespace's read the same. */
export const UNKNOWN_TRANSACTION_AFTER = "after names no entry of these transactions: pass the next_after of a page you listed";

import { Elysia } from "elysia";
import { authPlugin } from "../../auth/auth-plugin";
import type { Services } from "../../services";
import { parseHistoryPage, type QueryParams } from "../usage/query-params";
import { cursorPaginationDescription, cursorPaginationParameters } from "../usage/usage-routes";
import { listTransactions, walletBalance } from "./billing-service";

/**
 * Account-level billing, scope billing:read:
 *   GET /v1/billing/balance        { balance_micro_usd, pending_debits_micro_usd, available_micro_usd, currency }
 *   GET /v1/billing/transactions   { data: ledger entries newest first, limit, offset, next_after }
 * The wallet belongs to the account, so the balance is the account's for every
 * credential; transactions of a namespace-bound credential are its namespace's.
 */
export function billingRoutes(services: Services) {
  return new Elysia({ name: "billing", normalize: false })
    .use(authPlugin(services))
    .get("/v1/billing/balance", ({ principal }) => walletBalance(services, principal.accountId), {
      scope: "billing:read",
      detail: {
        summary: "Wallet balance, debits pending for in-flight requests, and what is available (max(balance − pending, 0))",
        tags: ["billing"],
        "x-scope": "billing:read",
      },
    })
    .get("/v1/billing/transactions", ({ principal, query }) => listTransactions(services, principal, parseHistoryPage(query as QueryParams)), {
      scope: "billing:read",
      detail: {
        summary: "Wallet ledger entries, newest first: credits, usage debits, pending debit recoveries, refunds (signed micro-USD)",
        tags: ["billing"],
        "x-scope": "billing:read",
        description: `${cursorPaginationDescription("entry", "these transactions", "LedgerEntry")} Items: { id, kind, amount_micro_usd (signed), request_id, namespace_id, created_at }. A namespace-bound credential sees only its namespace's entries.`,
        parameters: cursorPaginationParameters("entry", "these transactions"),
      },
    });
}

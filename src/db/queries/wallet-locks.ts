import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

/**
 * The one lock order for wallets and their leases (sql/queries/wallet-leases.sql):
 * wallet rows first, by account, then lease rows, by id. Call inside the transaction
 * that goes on to change them; the locks hold until it ends. Grants, settlements,
 * returns and sweeps that all follow it wait on each other but never deadlock.
 */
export async function lockWalletsThenLeases(tx: Sql, accountIds: Iterable<string>, leaseIds: Iterable<string> = []): Promise<void> {
  const accounts = [...new Set(accountIds)];
  const leases = [...new Set(leaseIds)];
  if (accounts.length > 0) await runQuery(tx, "lockWallets", [accounts]);
  if (leases.length > 0) await runQuery(tx, "lockLeases", [leases]);
}

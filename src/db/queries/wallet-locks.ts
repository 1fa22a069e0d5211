import type { Sql } from "../connect-database";
import { inSendOrder } from "../in-send-order";
import { runQuery } from "./run-query";

/**
 * The one lock order for wallets and their leases (sql/queries/wallet-leases.sql):
 * wallet rows first, by account, then lease rows, by id. Call inside the transaction
 * that goes on to change them; the locks hold until it ends. Grants, settlements,
 * returns and sweeps that all follow it wait on each other but never deadlock. The two
 * statements go in one round trip; PostgreSQL still takes them in this order.
 */
export async function lockWalletsThenLeases(tx: Sql, accountIds: Iterable<string>, leaseIds: Iterable<string> = []): Promise<void> {
  const accounts = [...new Set(accountIds)];
  const leases = [...new Set(leaseIds)];
  const locks: Promise<unknown>[] = [];
  if (accounts.length > 0) locks.push(runQuery(tx, "lockWallets", [accounts]));
  if (leases.length > 0) locks.push(runQuery(tx, "lockLeases", [leases]));
  await inSendOrder(locks);
}

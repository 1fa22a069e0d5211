import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

export interface AccountRow {
  id: string;
  email: string;
  created_at: Date;
}

export async function insertAccount(sql: Sql, id: string, email: string): Promise<AccountRow> {
  const [row] = await runQuery<AccountRow>(sql, "insertAccount", [id, email]);
  return row!;
}

export async function insertWallet(sql: Sql, accountId: string, balanceMicroUsd: number): Promise<void> {
  await runQuery(sql, "insertWallet", [accountId, balanceMicroUsd]);
}

/** Adds credit and records it; returns the new balance, or undefined for an unknown account. */
/** The most a wallet may hold: every balance stays an exact JS number. */
export const MAX_WALLET_BALANCE_MICRO_USD = Number.MAX_SAFE_INTEGER;

/** The new balance; undefined when there is no such wallet or the credit would take it past MAX_WALLET_BALANCE_MICRO_USD. */
export async function creditWallet(sql: Sql, accountId: string, amountMicroUsd: number): Promise<number | undefined> {
  const [row] = await runQuery<{ balance_micro_usd: number }>(sql, "creditWallet", [accountId, amountMicroUsd, MAX_WALLET_BALANCE_MICRO_USD]);
  return row?.balance_micro_usd;
}

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
export async function creditWallet(sql: Sql, accountId: string, amountMicroUsd: number): Promise<number | undefined> {
  const [row] = await runQuery<{ balance_micro_usd: number }>(sql, "creditWallet", [accountId, amountMicroUsd]);
  return row?.balance_micro_usd;
}

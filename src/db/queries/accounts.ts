import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

export interface AccountRow {
  id: string;
  email: string;
  created_at: Date;
}

/** `passwordHash`: an argon2id PHC string (src/auth/passwords.ts), or null for no password. */
export async function insertAccount(sql: Sql, id: string, email: string, passwordHash: string | null = null): Promise<AccountRow> {
  const [row] = await runQuery<AccountRow>(sql, "insertAccount", [id, email, passwordHash]);
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
  return (await runQueryRow<{ balance_micro_usd: number }>(sql, "creditWallet", [accountId, amountMicroUsd, MAX_WALLET_BALANCE_MICRO_USD]))?.balance_micro_usd;
}

/** Sets or replaces a live account's password hash; false for an unknown or deleted account. */
export async function setAccountPassword(sql: Sql, accountId: string, passwordHash: string): Promise<boolean> {
  return (await runQuery(sql, "setAccountPassword", [accountId, passwordHash])).length > 0;
}

export interface SignInAccountRow {
  id: string;
  password_hash: string | null;
}

/** The live account an email signs in to (case-insensitive), if any. */
export async function findAccountForSignIn(sql: Sql, email: string): Promise<SignInAccountRow | undefined> {
  return runQueryRow<SignInAccountRow>(sql, "findAccountForSignIn", [email]);
}

export interface AccountProfileRow extends AccountRow {
  display_name: string | null;
}

export async function findLiveAccount(sql: Sql, accountId: string): Promise<AccountProfileRow | undefined> {
  return runQueryRow<AccountProfileRow>(sql, "findLiveAccount", [accountId]);
}

export async function updateAccountDisplayName(sql: Sql, accountId: string, displayName: string | null): Promise<AccountProfileRow | undefined> {
  return runQueryRow<AccountProfileRow>(sql, "updateAccountDisplayName", [accountId, displayName]);
}

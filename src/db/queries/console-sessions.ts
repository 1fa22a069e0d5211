import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

export interface ConsoleSessionRow {
  account_id: string;
  csrf_secret: Uint8Array;
  expires_at: Date;
  created_at: Date;
  last_seen_at: Date;
  email: string;
  display_name: string | null;
}

/**
 * Stores a new session, provided the account's password is still `passwordHash` (the
 * one the sign-in verified); false when it changed meanwhile and nothing was stored.
 */
export async function insertConsoleSession(sql: Sql, tokenHash: Uint8Array, accountId: string, csrfSecret: Uint8Array, expiresAt: Date, passwordHash: string): Promise<boolean> {
  await runQuery(sql, "deleteExpiredConsoleSessions", [accountId]);
  return (await runQuery(sql, "insertConsoleSession", [tokenHash, accountId, csrfSecret, expiresAt, passwordHash])).length > 0;
}

/** A live session of a live account, by its token's hash. */
export async function findConsoleSession(sql: Sql, tokenHash: Uint8Array): Promise<ConsoleSessionRow | undefined> {
  return runQueryRow<ConsoleSessionRow>(sql, "findConsoleSession", [tokenHash]);
}

export async function extendConsoleSession(sql: Sql, tokenHash: Uint8Array, expiresAt: Date): Promise<void> {
  await runQuery(sql, "extendConsoleSession", [tokenHash, expiresAt]);
}

export async function deleteConsoleSession(sql: Sql, tokenHash: Uint8Array): Promise<void> {
  await runQuery(sql, "deleteConsoleSession", [tokenHash]);
}

/** Stores a session's one-time message (sealed by the caller), replacing one not yet shown. */
export async function setConsoleFlash(sql: Sql, tokenHash: Uint8Array, sealed: Uint8Array): Promise<void> {
  await runQuery(sql, "setConsoleFlash", [tokenHash, sealed]);
}

/** A session's one-time message, cleared as it is read; undefined when there is none. */
export async function takeConsoleFlash(sql: Sql, tokenHash: Uint8Array): Promise<Uint8Array | undefined> {
  const row = await runQueryRow<{ flash: Uint8Array }>(sql, "takeConsoleFlash", [tokenHash]);
  return row?.flash;
}

/** The server-wide secret for `purpose`, created by whichever instance asks first. */
export async function consoleSigningKey(sql: Sql, purpose: string, candidate: Uint8Array): Promise<Uint8Array> {
  await runQuery(sql, "ensureConsoleSigningKey", [purpose, candidate]);
  const [row] = await runQuery<{ secret: Uint8Array }>(sql, "findConsoleSigningKey", [purpose]);
  return row!.secret;
}

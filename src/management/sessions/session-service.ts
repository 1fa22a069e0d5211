import { findAccountForSignIn } from "../../db/queries/accounts";
import {
  consoleSigningKey,
  deleteConsoleSession,
  extendConsoleSession,
  findConsoleSession,
  insertConsoleSession,
  setConsoleFlash,
  takeConsoleFlash,
  type ConsoleSessionRow,
} from "../../db/queries/console-sessions";
import { verifyPassword } from "../../auth/passwords";
import { addressKey, SIGN_IN_PER_ACCOUNT, SIGN_IN_PER_ADDRESS, type ThrottleKey } from "../../identity/auth-throttle";
import { sha256 } from "../../auth/tokens";
import type { Services } from "../../services";

/** What the session service uses: the database (sessions, signing keys, accounts). */
export type SessionServiceDeps = Pick<Services, "db">;

/** What a sign-in uses: the database and the shared failure counters; `verify` stands in for argon2id in tests. */
export type SignInDeps = Pick<Services, "db" | "throttle"> & { verify?: typeof verifyPassword };

/** `passwordHash`: the hash the password was verified against, for the session to check it is still current. */
export type SignInOutcome = { ok: true; accountId: string; passwordHash: string } | { ok: false };

/**
 * Checks an email and password. Every failure looks the same (unknown email, no password
 * set, wrong password) and takes the same time (a dummy verification stands in when
 * there is no hash to check). Failures count against the email and against the client
 * address. Each attempt is counted before its password is checked (`take`), so a burst
 * of concurrent attempts gets no more verifications than the limit; while either key is
 * locked out the throttle throws 429 and no password is checked, not even a right one.
 * The per-account counter is keyed by the email's hash, not by an account id,
 * so an email with no account locks exactly like one with an account.
 */
export async function signIn(deps: SignInDeps, email: string, password: string, clientAddress: string): Promise<SignInOutcome> {
  const keys: ThrottleKey[] = [
    { rule: SIGN_IN_PER_ACCOUNT, subject: sha256(email.trim().toLowerCase()).toString("hex") },
    addressKey(SIGN_IN_PER_ADDRESS, clientAddress),
  ];
  await deps.throttle.take(keys);
  const account = email.length <= 320 ? await findAccountForSignIn(deps.db.sql, email.trim()) : undefined;
  const passwordHash = account?.password_hash;
  const matches = password.length <= 1024 && (await (deps.verify ?? verifyPassword)(password, passwordHash));
  // A wrong password stays counted as taken.
  if (!account || !passwordHash || !matches) return { ok: false };
  // A correct password clears the account's counter and gives back its attempt on the
  // address's, never more: one good password must not reset an attacker's count against
  // everyone else.
  await deps.throttle.reset([keys[0]!]);
  await deps.throttle.refund([keys[1]!]);
  return { ok: true, accountId: account.id, passwordHash };
}

/**
 * Stores a new session under its token's hash, provided the account's password is still
 * `passwordHash` (the one the sign-in verified); false when it changed meanwhile.
 */
export function startSession(
  deps: SessionServiceDeps,
  session: { tokenHash: Uint8Array; accountId: string; csrfSecret: Uint8Array; expiresAt: Date; passwordHash: string },
): Promise<boolean> {
  return insertConsoleSession(deps.db.sql, session.tokenHash, session.accountId, session.csrfSecret, session.expiresAt, session.passwordHash);
}

/** A stored console session, with the account it signs in. */
export interface StoredSession {
  accountId: string;
  email: string;
  displayName: string | null;
  /** The secret its CSRF tokens are derived from. */
  csrfSecret: Uint8Array;
  createdAt: Date;
  lastSeenAt: Date;
}

function storedSession(row: ConsoleSessionRow): StoredSession {
  return { accountId: row.account_id, email: row.email, displayName: row.display_name, csrfSecret: row.csrf_secret, createdAt: row.created_at, lastSeenAt: row.last_seen_at };
}

/** A live session of a live account, by its token's hash. */
export async function findSession(deps: SessionServiceDeps, tokenHash: Uint8Array): Promise<StoredSession | undefined> {
  const row = await findConsoleSession(deps.db.sql, tokenHash);
  return row === undefined ? undefined : storedSession(row);
}

export function extendSession(deps: SessionServiceDeps, tokenHash: Uint8Array, expiresAt: Date): Promise<void> {
  return extendConsoleSession(deps.db.sql, tokenHash, expiresAt);
}

export function endSession(deps: SessionServiceDeps, tokenHash: Uint8Array): Promise<void> {
  return deleteConsoleSession(deps.db.sql, tokenHash);
}

/** Stores the session's one-time message (already sealed), replacing one not yet shown. */
export function setSessionFlash(deps: SessionServiceDeps, tokenHash: Uint8Array, sealed: Uint8Array): Promise<void> {
  return setConsoleFlash(deps.db.sql, tokenHash, sealed);
}

/** The session's one-time message, cleared as it is read. */
export function takeSessionFlash(deps: SessionServiceDeps, tokenHash: Uint8Array): Promise<Uint8Array | undefined> {
  return takeConsoleFlash(deps.db.sql, tokenHash);
}

/** The deployment's secret for `purpose` (shared by every instance), created by whichever asks first. */
export function signingKey(deps: SessionServiceDeps, purpose: string, candidate: Uint8Array): Promise<Uint8Array> {
  return consoleSigningKey(deps.db.sql, purpose, candidate);
}

import type { Sql } from "../db/connect-database";
import { findAccountForSignIn } from "../db/queries/accounts";
import { verifyPassword } from "../auth/passwords";
import { SIGN_IN_PER_ACCOUNT, SIGN_IN_PER_ADDRESS, type AuthThrottle, type ThrottleKey } from "../auth/auth-throttle";
import { sha256 } from "../auth/tokens";

export type SignInOutcome = { ok: true; accountId: string } | { ok: false };

/**
 * Checks an email and password. Every failure looks the same (unknown email, no password
 * set, wrong password) and takes the same time (a dummy verification stands in when
 * there is no hash to check). Failures count against the email and against the client
 * address; while either is locked out the throttle throws 429 before any password is
 * checked. The per-account counter is keyed by the email's hash, not by an account id,
 * so an email with no account locks exactly like one with an account.
 */
export async function signIn(
  deps: { sql: Sql; throttle: AuthThrottle },
  email: string,
  password: string,
  clientAddress: string,
): Promise<SignInOutcome> {
  const keys: ThrottleKey[] = [
    { rule: SIGN_IN_PER_ACCOUNT, subject: sha256(email.trim().toLowerCase()).toString("hex") },
    { rule: SIGN_IN_PER_ADDRESS, subject: clientAddress },
  ];
  await deps.throttle.assertOpen(keys);
  const account = email.length <= 320 ? await findAccountForSignIn(deps.sql, email.trim()) : undefined;
  const matches = password.length <= 1024 && (await verifyPassword(password, account?.password_hash));
  if (!account || !matches) {
    await deps.throttle.recordFailure(keys);
    return { ok: false };
  }
  // A correct password clears the account's counter, never the address's: one good
  // password must not reset an attacker's count against everyone else.
  await deps.throttle.reset([keys[0]!]);
  return { ok: true, accountId: account.id };
}

import type { Sql } from "../db/connect-database";
import { findAccountForSignIn } from "../db/queries/accounts";
import { verifyPassword } from "../auth/passwords";
import { SIGN_IN_PER_ACCOUNT, SIGN_IN_PER_ADDRESS, type AuthThrottle, type ThrottleKey } from "../auth/auth-throttle";
import { sha256 } from "../auth/tokens";

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
export async function signIn(
  deps: { sql: Sql; throttle: AuthThrottle; verify?: typeof verifyPassword },
  email: string,
  password: string,
  clientAddress: string,
): Promise<SignInOutcome> {
  const keys: ThrottleKey[] = [
    { rule: SIGN_IN_PER_ACCOUNT, subject: sha256(email.trim().toLowerCase()).toString("hex") },
    { rule: SIGN_IN_PER_ADDRESS, subject: clientAddress },
  ];
  await deps.throttle.take(keys);
  const account = email.length <= 320 ? await findAccountForSignIn(deps.sql, email.trim()) : undefined;
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

import type { Sql } from "../db/connect-database";
import { runQuery } from "../db/queries/run-query";
import { ApiError } from "../errors/api-error";

/**
 * How many failures a subject may have in a window before it is locked out, and for
 * how long. Windows are fixed and start at the first failure.
 */
export interface ThrottleRule {
  /** Part of the stored key: `<name>:<subject>`. */
  name: string;
  maxFailures: number;
  windowSecs: number;
  lockSecs: number;
}

/**
 * Wrong passwords for one account, from anywhere. Generous enough that a person who
 * mistypes is never locked, short enough that someone locking a victim out on purpose
 * only delays them by minutes.
 */
export const SIGN_IN_PER_ACCOUNT: ThrottleRule = { name: "sign-in:account", maxFailures: 10, windowSecs: 15 * 60, lockSecs: 5 * 60 };
/** Wrong passwords from one client address, whatever the account (credential stuffing). */
export const SIGN_IN_PER_ADDRESS: ThrottleRule = { name: "sign-in:address", maxFailures: 30, windowSecs: 15 * 60, lockSecs: 15 * 60 };
/**
 * Unknown device user codes entered from one address. A code is 8 letters of 20, so
 * guessing one of the few live codes needs billions of tries; this keeps it that way.
 */
export const USER_CODE_PER_ADDRESS: ThrottleRule = { name: "user-code:address", maxFailures: 10, windowSecs: 10 * 60, lockSecs: 10 * 60 };

/** One counter: a rule applied to a subject (an account id, a client address). */
export interface ThrottleKey {
  rule: ThrottleRule;
  subject: string;
}

function storedKey(key: ThrottleKey): string {
  return `${key.rule.name}:${key.subject}`;
}

/**
 * Failed-attempt counters for sign-in and user-code entry, kept in PostgreSQL so every
 * instance counts the same failures. Call `assertOpen` before checking a secret,
 * `recordFailure` when it was wrong, and `reset` (per account, never per address) when
 * it was right.
 */
export class AuthThrottle {
  private failuresSinceSweep = 0;

  constructor(private readonly sql: Sql) {}

  /** Throws 429 `too_many_requests` with `Retry-After` when any of the keys is locked. */
  async assertOpen(keys: readonly ThrottleKey[]): Promise<void> {
    const locked = await runQuery<{ key: string; locked_until: Date }>(this.sql, "throttleLockedKeys", [keys.map(storedKey)]);
    if (locked.length === 0) return;
    const until = Math.max(...locked.map((row) => row.locked_until.getTime()));
    const retryAfter = Math.max(1, Math.ceil((until - Date.now()) / 1000));
    throw new ApiError("too_many_requests", "too many failed attempts; try again later", { "retry-after": String(retryAfter) });
  }

  /** Counts one failure against every key. */
  async recordFailure(keys: readonly ThrottleKey[]): Promise<void> {
    for (const key of keys) {
      await runQuery(this.sql, "throttleRecordFailure", [storedKey(key), key.rule.maxFailures, key.rule.windowSecs, key.rule.lockSecs]);
    }
    // Old counters are swept now and then, by whichever instance sees failures.
    if (++this.failuresSinceSweep >= 100) {
      this.failuresSinceSweep = 0;
      await runQuery(this.sql, "throttleSweep", []);
    }
  }

  async reset(keys: readonly ThrottleKey[]): Promise<void> {
    await runQuery(this.sql, "throttleReset", [keys.map(storedKey)]);
  }
}

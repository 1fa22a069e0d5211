import type { Sql } from "../db/connect-database";
import { lockedThrottleKeys, refundThrottleAttempt, resetThrottleKeys, sweepThrottleKeys, takeThrottleAttempt } from "../db/queries/auth-throttle";
import { ApiError } from "../errors/api-error";
import { parseIpv6 } from "../egress/ip-address";

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

/** Thrown inside `take`'s transaction to roll it back. */
class LockedKey extends Error {}

/** The 429 for locked keys, with `Retry-After` until the last of their locks ends. */
function lockedOut(locked: readonly { locked_until: Date }[]): ApiError {
  const until = locked.length === 0 ? Date.now() + 1000 : Math.max(...locked.map((row) => row.locked_until.getTime()));
  const retryAfter = Math.max(1, Math.ceil((until - Date.now()) / 1000));
  return new ApiError("rate_limited", "too many failed attempts; try again later", { retryAfter });
}

/** One counter: a rule applied to a subject (an account id, a client address). */
export interface ThrottleKey {
  rule: ThrottleRule;
  subject: string;
}

/**
 * The counter of `rule` for a client address. An IPv6 client counts by its /64: one
 * customer's allocation, inside which a host picks a new address at will (privacy
 * addresses, RFC 8981), so counting each address apart would give every guess a fresh
 * counter. IPv4 counts per address, and an IPv4-mapped IPv6 address (`::ffff:192.0.2.7`, how
 * a dual-stack listener reports an IPv4 peer) as the IPv4 address it maps.
 */
export function addressKey(rule: ThrottleRule, address: string): ThrottleKey {
  return { rule, subject: addressSubject(address) };
}

/**
 * `2001:db8:1:2::/64` for every spelling of an address in that /64 (compressed, zero-padded,
 * bracketed, with a zone); the dotted quad for an IPv4-mapped address; anything that is no
 * IPv6 address (IPv4, "unknown") as written.
 */
function addressSubject(address: string): string {
  const bytes = parseIpv6(address);
  if (bytes === undefined) return address;
  if (bytes.subarray(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.subarray(12).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 8; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return `${groups.join(":")}::/64`;
}

function storedKey(key: ThrottleKey): string {
  return `${key.rule.name}:${key.subject}`;
}

/**
 * Failed-attempt counters for sign-in and user-code entry, kept in PostgreSQL so every
 * instance counts the same failures. Call `take` before checking a secret: it counts the
 * attempt as a failure up front, in one transaction for all keys, and throws 429 when any
 * key is locked, so concurrent attempts can never all pass a check made before any of
 * them was counted. When the secret was right, `refund` gives the attempt back and
 * `reset` (per account, never per address) clears the count.
 */
export class AuthThrottle {
  private failuresSinceSweep = 0;

  constructor(private readonly sql: Sql) {}

  /**
   * Counts one attempt against every key before the secret is checked, or throws 429
   * (counting nothing) when any key is locked. The attempt that reaches a limit is still
   * let through; it locks the key for the next one.
   */
  async take(keys: readonly ThrottleKey[]): Promise<void> {
    // Keys are locked in one order, so two takes sharing keys cannot deadlock.
    const ordered = [...keys].sort((a, b) => (storedKey(a) < storedKey(b) ? -1 : 1));
    const refused = await this.sql.begin(async (transaction) => {
      const tx = transaction as unknown as Sql;
      for (const key of ordered) {
        if (!(await takeThrottleAttempt(tx, storedKey(key), key.rule))) {
          // Rolling back un-counts the keys taken before this one.
          throw new LockedKey();
        }
      }
      return false;
    }).catch((error: unknown) => {
      if (error instanceof LockedKey) return true;
      throw error;
    });
    if (refused) {
      throw lockedOut(await lockedThrottleKeys(this.sql, keys.map(storedKey)));
    }
    await this.sweepNowAndThen();
  }

  /** Gives back the attempt `take` counted, when the secret it guarded was right. */
  async refund(keys: readonly ThrottleKey[]): Promise<void> {
    for (const key of keys) await refundThrottleAttempt(this.sql, storedKey(key), key.rule.maxFailures);
  }

  /** Old counters are swept now and then, by whichever instance counts attempts. */
  private async sweepNowAndThen(): Promise<void> {
    if (++this.failuresSinceSweep >= 100) {
      this.failuresSinceSweep = 0;
      await sweepThrottleKeys(this.sql);
    }
  }

  async reset(keys: readonly ThrottleKey[]): Promise<void> {
    await resetThrottleKeys(this.sql, keys.map(storedKey));
  }
}

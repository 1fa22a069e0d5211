import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

/** How many failures lock a counter, in what window, and for how long (seconds). */
export interface ThrottleLimits {
  maxFailures: number;
  windowSecs: number;
  lockSecs: number;
}

export interface LockedThrottleKey {
  key: string;
  locked_until: Date;
}

/** The keys among `keys` that are locked now, with when each lock ends. */
export function lockedThrottleKeys(sql: Sql, keys: readonly string[]): Promise<LockedThrottleKey[]> {
  return runQuery<LockedThrottleKey>(sql, "throttleLockedKeys", [keys]);
}

/** In `take`'s transaction: makes sure `key` has a row, then counts one attempt unless it is locked; false when locked. */
export async function takeThrottleAttempt(tx: Sql, key: string, limits: ThrottleLimits): Promise<boolean> {
  await runQuery(tx, "throttleEnsure", [key]);
  const taken = await runQuery(tx, "throttleTake", [key, limits.maxFailures, limits.windowSecs, limits.lockSecs]);
  return taken.length > 0;
}

/** Gives back one attempt counted against `key`. */
export async function refundThrottleAttempt(sql: Sql, key: string, maxFailures: number): Promise<void> {
  await runQuery(sql, "throttleRefund", [key, maxFailures]);
}

export async function resetThrottleKeys(sql: Sql, keys: readonly string[]): Promise<void> {
  await runQuery(sql, "throttleReset", [keys]);
}

/** Drops counters whose window and lock are long over. */
export async function sweepThrottleKeys(sql: Sql): Promise<void> {
  await runQuery(sql, "throttleSweep", []);
}

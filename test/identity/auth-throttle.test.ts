import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { migrate } from "../../src/db/migrate";
import { ApiError } from "../../src/errors/api-error";
import { AuthThrottle, type ThrottleRule } from "../../src/identity/auth-throttle";
import { clientAddress, rememberClientAddress } from "../../src/http/client-address";
import { createTestDatabase } from "../support/test-database";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;
let other: Sql;

beforeAll(async () => {
  database = await createTestDatabase();
  sql = postgres(database.url, { max: 8, onnotice: () => {} }) as unknown as Sql;
  other = postgres(database.url, { max: 8, onnotice: () => {} }) as unknown as Sql;
  await migrate(sql);
});

afterAll(async () => {
  await sql.end();
  await other.end();
  await database.drop();
});

const rule = (name: string, maxFailures: number, windowSecs = 600, lockSecs = 300): ThrottleRule => ({ name, maxFailures, windowSecs, lockSecs });

async function refusal(promise: Promise<unknown>): Promise<ApiError | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

describe("AuthThrottle", () => {
  test("a key stays open below its limit and locks at it, with a Retry-After of the lock's length", async () => {
    const throttle = new AuthThrottle(sql);
    const key = { rule: rule("t1", 3, 600, 120), subject: "acct_a" };
    for (let i = 0; i < 2; i++) await throttle.take([key]);
    // The attempt that reaches the limit is let through, and locks the key for the next.
    expect(await refusal(throttle.take([key]))).toBeUndefined();
    const error = await refusal(throttle.take([key]));
    expect(error?.status).toBe(429);
    expect(error?.code).toBe("too_many_requests");
    const retryAfter = Number(error?.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(110);
    expect(retryAfter).toBeLessThanOrEqual(120);
    // Another subject under the same rule is untouched.
    expect(await refusal(throttle.take([{ rule: key.rule, subject: "acct_b" }]))).toBeUndefined();
  });

  test("any locked key among several refuses; reset opens only the keys it names", async () => {
    const throttle = new AuthThrottle(sql);
    const account = { rule: rule("t2-account", 2), subject: "acct_c" };
    const address = { rule: rule("t2-address", 100), subject: "10.0.0.1" };
    await throttle.take([account, address]);
    await throttle.take([account, address]);
    expect((await refusal(throttle.take([account, address])))?.status).toBe(429);
    expect(await refusal(throttle.take([address]))).toBeUndefined();
    await throttle.reset([account]);
    expect(await refusal(throttle.take([account, address]))).toBeUndefined();
  });

  test("a window that has passed starts the count again", async () => {
    const throttle = new AuthThrottle(sql);
    const key = { rule: rule("t3", 2, 600), subject: "x" };
    await throttle.take([key]);
    await sql.unsafe("update auth_throttle set window_start = now() - interval '11 minutes' where key = 't3:x'");
    expect(await refusal(throttle.take([key]))).toBeUndefined();
    const [row] = await sql.unsafe("select failures from auth_throttle where key = 't3:x'");
    expect(row!.failures).toBe(1);
  });

  test("two instances failing at once on one database count every failure", async () => {
    const a = new AuthThrottle(sql);
    const b = new AuthThrottle(other);
    const key = { rule: rule("t4", 1000), subject: "shared" };
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).take([key])));
    const [row] = await sql.unsafe("select failures from auth_throttle where key = 't4:shared'");
    expect(row!.failures).toBe(40);
  });

  test("take counts before the check: 25 concurrent takes on two instances let exactly the limit through", async () => {
    const a = new AuthThrottle(sql);
    const b = new AuthThrottle(other);
    const key = { rule: rule("t5", 10), subject: "raced" };
    const outcomes = await Promise.all(Array.from({ length: 25 }, (_, i) => refusal((i % 2 === 0 ? a : b).take([key]))));
    expect(outcomes.filter((error) => error === undefined).length).toBe(10);
    expect(outcomes.filter((error) => error?.status === 429).length).toBe(15);
    expect((await refusal(a.take([key])))?.status).toBe(429);
  });

  test("a refused take counts nothing on any key; a refund gives one attempt back and lifts the lock it set", async () => {
    const throttle = new AuthThrottle(sql);
    const account = { rule: rule("t6-account", 1), subject: "acct_d" };
    const address = { rule: rule("t6-address", 2), subject: "10.0.0.9" };
    await throttle.take([account, address]);
    expect((await refusal(throttle.take([account, address])))?.status).toBe(429);
    const [row] = await sql.unsafe("select failures from auth_throttle where key = 't6-address:10.0.0.9'");
    expect(row!.failures).toBe(1);
    await throttle.take([address]);
    expect((await refusal(throttle.take([address])))?.status).toBe(429);
    await throttle.refund([address]);
    expect(await refusal(throttle.take([address]))).toBeUndefined();
  });
});

describe("clientAddress", () => {
  test("is the peer address the listener noted, or unknown", () => {
    const request = new Request("http://localhost/x");
    expect(clientAddress(request)).toBe("unknown");
    rememberClientAddress(request, "192.0.2.7");
    expect(clientAddress(request)).toBe("192.0.2.7");
  });

  test("trusts X-Forwarded-For only for the configured number of proxy hops, from the right", () => {
    const request = new Request("http://localhost/x", { headers: { "x-forwarded-for": "6.6.6.6, 203.0.113.9, 10.0.0.2" } });
    rememberClientAddress(request, "10.0.0.3");
    expect(clientAddress(request)).toBe("10.0.0.3");
    expect(clientAddress(request, 1)).toBe("10.0.0.2");
    expect(clientAddress(request, 2)).toBe("203.0.113.9");
    // More hops than entries: the peer address, never a client-written value.
    expect(clientAddress(request, 5)).toBe("10.0.0.3");
  });
});

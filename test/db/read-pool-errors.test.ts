import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { markingReadPoolErrors, type Sql } from "../../src/db/connect-database";
import { isReadPoolError, isReplicaConflict } from "../../src/db/errors";
import { startTestServer, type TestServer } from "../support/test-server";

/**
 * SQLSTATE 40001 on the read pool is a replica's conflict with recovery, a 503 with
 * Retry-After; anywhere else it stays what it is (test/db/read-replica.test.ts has the real
 * conflict on a real standby; this injects the error at the pool boundary).
 */
function recoveryConflict(): Error {
  return Object.assign(new Error("canceling statement due to conflict with recovery"), { name: "PostgresError", code: "40001" });
}

/** A pool whose every statement fails with `error`. */
function failingPool(error: () => Error): Sql {
  return { unsafe: () => Promise.reject(error()), options: {} } as unknown as Sql;
}

describe("markingReadPoolErrors", () => {
  test("marks the read pool's errors only, and only a read pool's 40001 is a replica conflict", async () => {
    const marked = await markingReadPoolErrors(failingPool(recoveryConflict)).unsafe("select 1").catch((error: unknown) => error);
    expect(isReadPoolError(marked)).toBe(true);
    expect(isReplicaConflict(marked)).toBe(true);
    const unmarked = await failingPool(recoveryConflict).unsafe("select 1").catch((error: unknown) => error);
    expect(isReplicaConflict(unmarked)).toBe(false);
    const otherCode = await markingReadPoolErrors(failingPool(() => Object.assign(new Error("deadlock"), { name: "PostgresError", code: "40P01" })))
      .unsafe("select 1")
      .catch((error: unknown) => error);
    expect(isReplicaConflict(otherCode)).toBe(false);
  });

  test("a caller that wraps the pool's unsafe (a statement counter) is called once per statement, and its errors are still marked", async () => {
    let fail = false;
    const pool = { unsafe: () => (fail ? Promise.reject(recoveryConflict()) : Promise.resolve([{ n: 1 }])), options: {} } as unknown as Sql;
    const read = markingReadPoolErrors(pool);
    const original = read.unsafe;
    let calls = 0;
    read.unsafe = ((...args: Parameters<Sql["unsafe"]>) => (calls++, original(...args))) as Sql["unsafe"];
    expect(await read.unsafe("select 1")).toEqual([{ n: 1 }] as never);
    fail = true;
    expect(isReplicaConflict(await read.unsafe("select 1").catch((error: unknown) => error))).toBe(true);
    expect(calls).toBe(2);
  });

  test("passes everything else of the pool through", async () => {
    const pool = { unsafe: () => Promise.resolve([{ n: 1 }]), options: { max: 4 } } as unknown as Sql;
    const read = markingReadPoolErrors(pool);
    expect(await read.unsafe("select 1")).toEqual([{ n: 1 }] as never);
    expect(read.options).toBe(pool.options);
  });
});

describe("a replica conflict through the routes", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  test("the usage read the read pool lost to it is a 503 with Retry-After and says so", async () => {
    const account = await server.createAccount();
    const services = server.server.services;
    const real = services.db.read;
    Object.assign(services.db, { read: markingReadPoolErrors(failingPool(recoveryConflict)) });
    try {
      const usage = await server.api("GET", "/v1/namespaces/me/usage", { token: account.apiKey });
      expect(usage.status).toBe(503);
      expect(usage.headers.get("retry-after")).toBe("1");
      expect(usage.body.error).toBe("service_unavailable");
      expect(usage.body.error_description).toContain("conflict with recovery");
      const history = await server.api("GET", "/v1/requests", { token: account.apiKey });
      expect(history.status).toBe(503);
    } finally {
      Object.assign(services.db, { read: real });
    }
    expect((await server.api("GET", "/v1/namespaces/me/usage", { token: account.apiKey })).status).toBe(200);
  });
});

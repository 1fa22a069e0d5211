import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import type { Config } from "../../src/config";
import { connectDatabase, type Database } from "../../src/db/connect-database";
import { createTestDatabase } from "../support/test-database";

// postgres.js 3.4.9 keeps a connection's last query and its error after the backend is gone
// (porsager/postgres#1142, #1223). The next query on that connection then failed with the
// old backend's error, or, while the database refused connections, waited until it took
// them again: during an outage an admission or credential check hung instead of failing
// fast (a 503), and the metering durability test timed out. patches/postgres+3.4.9.patch
// clears that state when the connection closes; these tests fail without it.

let database: { url: string; drop(): Promise<void> };
let admin: postgres.Sql;
let db: Database;
let dbName: string;

beforeAll(async () => {
  database = await createTestDatabase();
  dbName = new URL(database.url).pathname.slice(1);
  admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  // One connection, so every query below runs on the connection whose backend was killed.
  db = await connectDatabase({ databaseUrl: database.url, databasePoolSize: 1, databaseReadPoolSize: 1, readStatementTimeoutMs: 0 } as Config);
});

afterAll(async () => {
  await admin.unsafe(`alter database ${dbName} allow_connections true`).catch(() => {});
  await db.close();
  await admin.end();
  await database.drop();
});

/** Ends the pool's backend while it runs `pg_sleep`; resolves with what that query got. */
async function killMidQuery(): Promise<unknown> {
  const sleeping = db.sql`select pg_sleep(10)`.then(
    () => undefined,
    (error: unknown) => error,
  );
  for (let i = 0; i < 200; i++) {
    const [row] = await admin`select count(*)::int as n from pg_stat_activity where datname = ${dbName} and query like 'select pg_sleep%'`;
    if (row!.n > 0) break;
    await Bun.sleep(10);
  }
  await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${dbName} and query like 'select pg_sleep%'`;
  return sleeping;
}

test("the query after a backend was terminated mid-query runs on a new connection, not failed with the old backend's error", async () => {
  for (let round = 0; round < 3; round++) {
    const lost = await killMidQuery();
    expect(lost).toBeInstanceOf(Error);
    const [row] = await db.sql`select 41 + 1 as answer`;
    expect(row!.answer).toBe(42);
  }
});

test("while the database refuses connections, a query on a connection whose backend was terminated fails at once instead of waiting for the database to return", async () => {
  await killMidQuery();
  await admin.unsafe(`alter database ${dbName} allow_connections false`);
  try {
    const started = performance.now();
    const outcome = await Promise.race([
      db.sql`select 1`.then(
        () => "answered",
        (error: { code?: string }) => error.code ?? "failed",
      ),
      Bun.sleep(3_000).then(() => "still waiting"),
    ]);
    expect(outcome).toBe("55000"); // database "…" is not currently accepting connections
    expect(performance.now() - started).toBeLessThan(3_000);
  } finally {
    await admin.unsafe(`alter database ${dbName} allow_connections true`);
  }
  const [row] = await db.sql`select 2 as back`;
  expect(row!.back).toBe(2);
});

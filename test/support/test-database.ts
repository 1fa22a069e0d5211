import postgres from "postgres";
import { randomBytes } from "node:crypto";
import type { Sql } from "../../src/db/connect-database";
import { migrate } from "../../src/db/migrate";

/** A database of the throwaway cluster, and how to drop it. */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh database in the throwaway cluster that test/run-tests.ts started, so
 * test files never see each other's rows. Dropped by `drop()`.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error("TEST_DATABASE_URL is not set: run the suite with `npm test` (test/run-tests.ts)");
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

/**
 * postgres.js types that read a bigint column as a JavaScript number, as the server's own
 * connection does (src/db/connect-database.ts): the amounts tests compare fit in one.
 */
export const BIGINT_AS_NUMBER = { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) } };

/** A fresh database with every migration applied, and a connection pool to it. */
export interface MigratedTestDatabase {
  url: string;
  sql: Sql;
  /** Ends the pool (`end` takes postgres.js's end options), then drops the database. */
  close(end?: { timeout?: number }): Promise<void>;
}

/**
 * The setup of the tests that drive src/ code straight against the schema: a fresh database,
 * migrated, with a pool of `max: 4` that ignores notices; `options` are merged over those.
 */
export async function createMigratedTestDatabase(options: postgres.Options<Record<string, postgres.PostgresType>> = {}): Promise<MigratedTestDatabase> {
  const database = await createTestDatabase();
  const sql = postgres(database.url, { max: 4, onnotice: () => {}, ...options }) as unknown as Sql;
  try {
    await migrate(sql);
  } catch (error) {
    await sql.end({ timeout: 1 });
    await database.drop();
    throw error;
  }
  return {
    url: database.url,
    sql,
    async close(end) {
      await sql.end(end);
      await database.drop();
    },
  };
}

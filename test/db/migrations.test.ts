import { afterAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { mkdtempSync, writeFileSync, cpSync, renameSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { loadMigrations, migrate } from "../../src/db/migrate";
import type { Sql } from "../../src/db/connect-database";
import { createTestDatabase } from "../support/test-database";
import { spawnServer } from "../support/spawn-server";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function freshDatabase() {
  const database = await createTestDatabase();
  cleanups.push(database.drop);
  return database;
}

function client(url: string): Sql {
  const sql = postgres(url, { max: 2, onnotice: () => {} }) as unknown as Sql;
  cleanups.push(() => sql.end());
  return sql;
}

describe("migrations", () => {
  test("apply every numbered file once, and a second run applies nothing", async () => {
    const sql = client((await freshDatabase()).url);
    const all = loadMigrations().map((m) => m.version);
    expect(await migrate(sql)).toEqual(all);
    expect(await migrate(sql)).toEqual([]);
    const rows = await sql<{ version: number }[]>`select version from schema_migrations order by version`;
    expect(rows.map((r) => r.version)).toEqual(all);
  });

  test("the tables every request writes carry exactly the indexes their reads need (each one costs an insert per request), and no foreign keys", async () => {
    const sql = client((await freshDatabase()).url);
    await migrate(sql);
    const rows = await sql.unsafe(
      "select tablename, indexname, indexdef from pg_indexes where tablename in ('requests', 'ledger_entries') order by 1, 2",
    );
    expect(rows.map((row) => `${row.tablename}.${row.indexname}`)).toEqual([
      "ledger_entries.ledger_entries_account_created",
      "ledger_entries.ledger_entries_pkey",
      "requests.requests_account_request_id",
      "requests.requests_created_brin",
      "requests.requests_namespace_api_key_created",
      "requests.requests_namespace_created",
      "requests.requests_pkey",
    ]);
    expect(rows.find((row) => row.indexname === "requests_created_brin")?.indexdef).toContain("USING brin (created_at)");
    // Nor a foreign-key trigger per row.
    const keys = await sql.unsafe("select conrelid::regclass::text as t from pg_constraint where contype = 'f' and conrelid::regclass::text in ('requests', 'ledger_entries')");
    expect(keys.map((row) => row.t)).toEqual([]);
    const kept = await sql.unsafe("select count(*)::int as n from pg_constraint where contype = 'f' and conrelid::regclass::text in ('namespaces', 'api_keys', 'wallets')");
    expect(kept[0]!.n).toBeGreaterThanOrEqual(4);
  });

  test("every id column compares byte by byte (collation C), so B-tree keys skip the linguistic comparison", async () => {
    const sql = client((await freshDatabase()).url);
    await migrate(sql);
    const ids = await sql.unsafe(
      `select c.table_name || '.' || c.column_name as name, c.collation_name as collation
         from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
        where c.table_schema = current_schema() and t.table_type = 'BASE TABLE' and c.data_type = 'text'
          and (c.column_name = 'id' or c.column_name like '%\\_id') and c.table_name <> 'schema_migrations'`,
    );
    expect(ids.map((row) => row.name)).toContain("requests.id");
    expect(ids.map((row) => row.name)).toContain("ledger_entries.request_record_id");
    expect(ids.filter((row) => row.collation !== "C").map((row) => row.name)).toEqual([]);
    // Joins across tables still work: one collation on both sides.
    await sql.unsafe("select r.id from requests r join billing_audit a on a.request_record_id = r.id join accounts c on c.id = r.account_id limit 1");
  });

  test("two instances migrating one database at once apply each migration exactly once", async () => {
    const url = (await freshDatabase()).url;
    const [a, b, c] = [client(url), client(url), client(url)];
    const results = await Promise.all([migrate(a), migrate(b), migrate(c)]);
    const applied = results.flat().sort((x, y) => x - y);
    expect(applied).toEqual(loadMigrations().map((m) => m.version));
    const [count] = await a<{ n: number }[]>`select count(*)::int as n from schema_migrations`;
    expect(count!.n).toBe(loadMigrations().length);
  });

  test("refuse to start when an applied migration file was edited", async () => {
    const sql = client((await freshDatabase()).url);
    await migrate(sql);
    const directory = mkdtempSync(join(tmpdir(), "migrations-")) + "/";
    cpSync(new URL("../../sql/migrations/", import.meta.url).pathname, directory, { recursive: true });
    const first = loadMigrations(directory)[0]!;
    writeFileSync(directory + first.name, first.sql + "\n-- edited\n");
    await expect(migrate(sql, loadMigrations(directory))).rejects.toThrow(/changed after it was applied/);
  });

  test("refuse to load when a new gap appears in the numbers, and accept only the listed historical gaps", () => {
    const versions = loadMigrations().map((m) => m.version);
    const last = versions.at(-1)!;
    const missing = Array.from({ length: last }, (_, i) => i + 1).filter((n) => !versions.includes(n));
    expect(missing).toEqual([3, 13, 20]);

    const directory = mkdtempSync(join(tmpdir(), "migrations-")) + "/";
    cpSync(new URL("../../sql/migrations/", import.meta.url).pathname, directory, { recursive: true });
    const next = String(last + 2).padStart(4, "0");
    writeFileSync(`${directory}${next}_skipped_a_number.sql`, "select 1;\n");
    expect(() => loadMigrations(directory)).toThrow(/gap before it/);

    const repeated = mkdtempSync(join(tmpdir(), "migrations-")) + "/";
    cpSync(new URL("../../sql/migrations/", import.meta.url).pathname, repeated, { recursive: true });
    writeFileSync(`${repeated}0002_same_number.sql`, "select 1;\n");
    expect(() => loadMigrations(repeated)).toThrow(/repeats a number/);

    const renumbered = mkdtempSync(join(tmpdir(), "migrations-")) + "/";
    cpSync(new URL("../../sql/migrations/", import.meta.url).pathname, renumbered, { recursive: true });
    renameSync(`${renumbered}0005_wallet_leases.sql`, `${renumbered}0006_wallet_leases.sql.bak`);
    expect(() => loadMigrations(renumbered)).toThrow(/0006_metering_json_columns\.sql leaves a gap before it \(expected 0005\)/);
  });

  test("two server processes started together against one fresh database both come up and serve", async () => {
    const url = (await freshDatabase()).url;
    const env = { DATABASE_URL: url, ADMIN_TOKEN: "t" };
    const [one, two] = await Promise.all([spawnServer(env), spawnServer(env)]);
    try {
      const created = await fetch(`${one.url}/admin/accounts`, {
        method: "POST",
        headers: { authorization: "Bearer t", "content-type": "application/json" },
        body: JSON.stringify({ email: "both@example.test" }),
      }).then((r) => r.json() as Promise<any>);
      const listed = await fetch(`${two.url}/v1/namespaces`, { headers: { authorization: `Bearer ${created.api_key}` } });
      expect(listed.status).toBe(200);
    } finally {
      one.process.kill("SIGTERM");
      two.process.kill("SIGTERM");
      await Promise.all([one.exited, two.exited]);
    }
  }, 60_000);
});

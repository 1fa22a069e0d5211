import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Sql } from "./connect-database";
import { log } from "../observability/log";

const MIGRATIONS_DIR = fileURLToPath(new URL("../../sql/migrations/", import.meta.url));

/** Any fixed 64-bit number; every instance uses the same one to serialise migrations. */
const MIGRATION_LOCK_KEY = 7_301_994_220_117n;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

/**
 * Numbers that were reserved for work developed in parallel and never shipped as a
 * migration; no database has them recorded. Any other gap is a missing or misnamed
 * file and stops the process (sql/README.md).
 */
const HISTORICAL_GAPS: ReadonlyMap<number, string> = new Map([
  [3, "reserved in parallel development, never shipped"],
  [13, "reserved in parallel development, never shipped"],
  [20, "reserved in parallel development, never shipped"],
]);

/** Throws unless the versions run 1, 2, 3, … with no repeat and no gap but the historical ones. */
export function checkMigrationNumbers(migrations: readonly Migration[], knownGaps: ReadonlyMap<number, string> = HISTORICAL_GAPS): void {
  let expected = 1;
  for (const migration of migrations) {
    while (knownGaps.has(expected) && migration.version !== expected) expected++;
    if (migration.version !== expected) {
      const problem = migration.version < expected ? "repeats a number" : `leaves a gap before it (expected ${String(expected).padStart(4, "0")})`;
      throw new Error(`migration ${migration.name} ${problem}; migration numbers must be contiguous (sql/README.md)`);
    }
    expected++;
  }
}

/** The numbered migration files in order; throws if their numbers are not contiguous. */
export function loadMigrations(directory = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(directory)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const text = readFileSync(directory + file, "utf8");
      return {
        version: Number(file.slice(0, 4)),
        name: file,
        sql: text,
        checksum: createHash("sha256").update(text).digest("hex"),
      };
    });
  checkMigrationNumbers(migrations);
  return migrations;
}

/**
 * Applies the numbered, forward-only migrations that are not applied yet. Each runs
 * in its own transaction holding a transaction-level advisory lock, so instances
 * starting together against one database apply each migration exactly once: the
 * second waits for the lock, then sees the version recorded and skips it.
 * A recorded migration whose file changed is refused: migrations are never edited.
 */
export async function migrate(sql: Sql, migrations = loadMigrations()): Promise<number[]> {
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
    await tx`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`;
  });
  const applied: number[] = [];
  for (const migration of migrations) {
    await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
      const [row] = await tx<{ checksum: string }[]>`select checksum from schema_migrations where version = ${migration.version}`;
      if (row) {
        if (row.checksum !== migration.checksum) {
          throw new Error(`migration ${migration.name} was changed after it was applied; add a new migration instead`);
        }
        return;
      }
      await tx.unsafe(migration.sql);
      await tx`insert into schema_migrations (version, name, checksum) values (${migration.version}, ${migration.name}, ${migration.checksum})`;
      applied.push(migration.version);
    });
  }
  if (applied.length > 0) log.info("migrations applied", { versions: applied });
  return applied;
}

import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

/** Resolves when the database answers; rejects when it does not. */
export async function pingDatabase(sql: Sql): Promise<void> {
  await runQuery(sql, "ping", []);
}

/** Which of `knownVersions` schema_migrations does not record; rejects when the database does not answer. */
export async function pendingMigrationVersions(sql: Sql, knownVersions: readonly number[]): Promise<number[]> {
  const rows = await runQuery<{ version: number }>(sql, "appliedMigrationVersions", []);
  const applied = new Set(rows.map((row) => row.version));
  return knownVersions.filter((version) => !applied.has(version));
}

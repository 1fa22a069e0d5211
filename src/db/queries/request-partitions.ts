import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

/** Creates the monthly partitions of the month of `from` and the `monthsAhead` after it that are missing; the names created. */
export async function ensureRequestPartitions(sql: Sql, from: Date, monthsAhead: number): Promise<string[]> {
  const rows = await runQuery<{ name: string }>(sql, "ensureRequestPartitions", [from, monthsAhead]);
  return rows.map((row) => row.name);
}

/** Drops the monthly partitions whose month ended at least `keepMonths` months before `now`; the names dropped. */
export async function dropExpiredRequestPartitions(sql: Sql, now: Date, keepMonths: number): Promise<string[]> {
  const rows = await runQuery<{ name: string }>(sql, "dropExpiredRequestPartitions", [now, keepMonths]);
  return rows.map((row) => row.name);
}

/** True when a record waits in the default partition (its month has no partition yet). */
export async function requestsWithoutMonth(sql: Sql): Promise<boolean> {
  const row = await runQueryRow<{ waiting: boolean }>(sql, "requestsWithoutMonth", []);
  return row?.waiting === true;
}

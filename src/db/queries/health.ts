import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

/** Resolves when the database answers; rejects when it does not. */
export async function pingDatabase(sql: Sql): Promise<void> {
  await runQuery(sql, "ping", []);
}

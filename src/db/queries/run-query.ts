import type { Sql } from "../connect-database";
import { query } from "../named-queries";

/** A value postgres.js can bind as a parameter. */
export type SqlParam = string | number | boolean | Date | Uint8Array | null | readonly string[] | readonly (string | null)[] | readonly Date[] | readonly number[];

/** Executes a named statement from sql/queries with positional parameters. */
export async function runQuery<Row>(sql: Sql, name: string, params: readonly SqlParam[]): Promise<Row[]> {
  const rows = await sql.unsafe(query(name), params as never[], { prepare: true });
  return rows as unknown as Row[];
}

/** Executes a named statement that returns no rows; resolves to the number of rows it changed. */
export async function runCommand(sql: Sql, name: string, params: readonly SqlParam[]): Promise<number> {
  const result = await sql.unsafe(query(name), params as never[], { prepare: true });
  return result.count;
}

/** Executes a named statement that returns at most one row: that row, or undefined. */
export async function runQueryRow<Row>(sql: Sql, name: string, params: readonly SqlParam[]): Promise<Row | undefined> {
  const [row] = await runQuery<Row>(sql, name, params);
  return row;
}

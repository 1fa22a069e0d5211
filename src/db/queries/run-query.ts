import type { Sql } from "../connect-database";
import { query } from "../named-queries";

/** A value postgres.js can bind as a parameter. */
export type SqlParam = string | number | boolean | Date | Uint8Array | null | readonly string[] | readonly (string | null)[] | readonly Date[] | readonly number[];

/**
 * A batch as one array per field, in the order of `keys`: the parameters of a statement
 * that `unnest`s the batch back into rows. Nulls stay in place in their arrays.
 */
export function columns<Row, Key extends keyof Row>(rows: readonly Row[], ...keys: Key[]): SqlParam[] {
  return keys.map((key) => rows.map((row) => row[key]) as unknown as SqlParam);
}

/** Executes a named statement from sql/queries with positional parameters. */
export async function runQuery<Row>(sql: Sql, name: string, params: readonly SqlParam[]): Promise<Row[]> {
  const rows = await sql.unsafe(query(name), params as never[], { prepare: true });
  return rows as unknown as Row[];
}

/**
 * Executes a named statement planned anew for each call, with its parameters' values (an
 * unnamed statement: never the generic plan PostgreSQL caches for a named one after a few
 * executions). For a statement whose best plan depends on the tenant's size: a generic plan
 * assumes an average tenant, and for the history's page of 50 it sorts every record of a
 * large namespace instead of reading the newest 50 from an index (docs/architecture.md "Growth").
 * Planning costs a fraction of a millisecond per call; keep this off the hot paths.
 */
export async function runQueryPlannedPerCall<Row>(sql: Sql, name: string, params: readonly SqlParam[]): Promise<Row[]> {
  const rows = await sql.unsafe(query(name), params as never[], { prepare: false });
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

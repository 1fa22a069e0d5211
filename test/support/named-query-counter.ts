import type { Sql } from "../../src/db/connect-database";
import { query } from "../../src/db/named-queries";

export interface NamedQueryCounter {
  /** Executions of the statement since the counter started. */
  readonly count: number;
  /** Puts the pool's own `unsafe` back. */
  stop(): void;
}

/**
 * Counts how often the named statement `name` (sql/queries) runs on `sql` — every named
 * statement goes through `sql.unsafe` (src/db/queries/run-query.ts) — until `stop()`.
 */
export function countNamedQuery(sql: Sql, name: string): NamedQueryCounter {
  const text = query(name);
  const original = sql.unsafe;
  let count = 0;
  sql.unsafe = ((statement: string, ...rest: unknown[]) => {
    if (statement === text) count += 1;
    return (original as (...args: unknown[]) => unknown).call(sql, statement, ...rest);
  }) as typeof sql.unsafe;
  return {
    get count() {
      return count;
    },
    stop() {
      sql.unsafe = original;
    },
  };
}

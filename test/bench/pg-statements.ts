/**
 * Which statements PostgreSQL's CPU goes to, per gateway: with `PG_STATEMENTS=1` the bench
 * cluster loads pg_stat_statements (switchyard-process.ts), and a bench snapshots it
 * around each timed slice, so warm-ups and other variants' slices are left out (each
 * Switchyard has its own database). Time is execution plus planning: with fsync off it is
 * nearly all CPU, except a COPY's, which also waits for the gateway to send its rows.
 */
import postgres from "postgres";

interface Counted {
  calls: number;
  ms: number;
}

/** Statement text (whitespace folded, cut) by database and statement. */
type Snapshot = Map<string, Map<string, Counted>>;

export class StatementTally {
  private readonly totals = new Map<string, Map<string, Counted>>();

  private constructor(private readonly admin: postgres.Sql) {}

  /** Undefined unless PG_STATEMENTS=1 and the cluster is a real PostgreSQL. */
  static async open(adminUrl: string | undefined): Promise<StatementTally | undefined> {
    if (process.env.PG_STATEMENTS !== "1" || adminUrl === undefined) return undefined;
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe("create extension if not exists pg_stat_statements");
    return new StatementTally(admin);
  }

  async snapshot(): Promise<Snapshot> {
    const rows = await this.admin.unsafe<{ datname: string; query: string; calls: string; ms: number }[]>(
      `select d.datname, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 100) as query, s.calls, s.total_exec_time + s.total_plan_time as ms
         from pg_stat_statements s join pg_database d on d.oid = s.dbid`,
    );
    const snapshot: Snapshot = new Map();
    for (const row of rows) {
      const byQuery = snapshot.get(row.datname) ?? new Map<string, Counted>();
      snapshot.set(row.datname, byQuery);
      const counted = byQuery.get(row.query) ?? { calls: 0, ms: 0 };
      byQuery.set(row.query, { calls: counted.calls + Number(row.calls), ms: counted.ms + row.ms });
    }
    return snapshot;
  }

  /** Adds what one database's statements did between two snapshots. */
  add(database: string, before: Snapshot, after: Snapshot): void {
    const total = this.totals.get(database) ?? new Map<string, Counted>();
    this.totals.set(database, total);
    const earlier = before.get(database) ?? new Map<string, Counted>();
    for (const [query, now] of after.get(database) ?? []) {
      const then = earlier.get(query) ?? { calls: 0, ms: 0 };
      const sum = total.get(query) ?? { calls: 0, ms: 0 };
      total.set(query, { calls: sum.calls + now.calls - then.calls, ms: sum.ms + now.ms - then.ms });
    }
  }

  /** The database's statements by time, per request served: calls and µs. */
  report(database: string, label: string, requests: number, top = 8): string {
    const rows = [...(this.totals.get(database) ?? [])].filter(([, c]) => c.calls > 0).sort((a, b) => b[1].ms - a[1].ms);
    const per = (n: number) => n / Math.max(1, requests);
    const lines = rows.slice(0, top).map(([query, c]) => `| ${label} | ${per(c.calls).toFixed(3)} | ${(per(c.ms) * 1000).toFixed(1)} | ${((c.ms / c.calls) * 1000).toFixed(0)} | \`${query.replaceAll("|", "\\|")}\` |`);
    const sum = rows.reduce((acc, [, c]) => acc + c.ms, 0);
    return [...lines, `| ${label} | all | ${(per(sum) * 1000).toFixed(1)} | | (${rows.length} statements) |`].join("\n");
  }

  close(): Promise<void> {
    return this.admin.end();
  }
}

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/db/connect-database";
import { query } from "../../src/db/named-queries";
import { ensureRequestPartitions } from "../../src/db/queries/request-partitions";
import { createMigratedTestDatabase, type MigratedTestDatabase } from "../support/test-database";
import { insertSyntheticRequests } from "./synthetic-requests";
import { listNamespaceRequests, namespaceUsage } from "../../src/db/queries/usage";

/**
 * The plans PostgreSQL makes for the statements that read the request table, on a table of
 * realistic shape: four months of records (25,000 a month), 50 accounts, 200 namespaces.
 * Each statement is the named query's own text (sql/queries), prepared and executed as the
 * server runs it, once with a custom plan (its parameters known when planning) and once
 * with the generic plan PostgreSQL switches to after a few executions (partitions pruned
 * when the executor starts). Either way, every partition that holds records is read
 * through an index, and the partitions outside a statement's time range are not read.
 */
let sql: Sql;
let database: MigratedTestDatabase;
beforeAll(async () => {
  database = await createMigratedTestDatabase({ max: 1 });
  sql = database.sql;
  await ensureRequestPartitions(sql, new Date("2025-01-01T00:00:00Z"), 3);
  await insertSyntheticRequests(sql, { count: 100_000, from: new Date("2025-01-01T00:00:00Z"), to: new Date("2025-05-01T00:00:00Z"), accounts: 50, namespaces: 200 });
  // One large namespace (acct_0's ns_0_0): 30,000 more records.
  await insertSyntheticRequests(sql, { count: 30_000, from: new Date("2025-01-01T00:00:00Z"), to: new Date("2025-05-01T00:00:00Z"), accounts: 1, namespaces: 1, idPrefix: "big_" });
  await sql.unsafe("insert into ledger_entries (id, account_id, namespace_id, request_record_id, kind, amount_micro_usd, created_at) select 'le_' || id, account_id, namespace_id, id, 'usage', -final_charge_micro_usd, completed_at from requests where account_id = 'acct_7'");
  // The usage rollups (migration 0034) of records written around the metering writer.
  await sql.unsafe("select usage_rollups_rebuild(null)");
  // What autovacuum does to an insert-only table: statistics, and BRIN ranges summarised.
  await sql.unsafe("vacuum analyze requests").simple();
  await sql.unsafe("vacuum analyze ledger_entries").simple();
}, 120_000);
afterAll(() => database.close({ timeout: 1 }));

type Param = string | number | null;

function literal(value: Param): string {
  if (value === null) return "null";
  if (typeof value === "number") return String(value);
  return `'${value.replaceAll("'", "''")}'`;
}

/** EXPLAIN ANALYZE of the named statement, prepared, with a custom or the generic plan. */
async function plan(name: string, params: Param[], mode: "force_custom_plan" | "force_generic_plan"): Promise<string> {
  const lines = await sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    await tx.unsafe(`set local plan_cache_mode = ${mode}`);
    await tx.unsafe(`prepare statement_under_test as ${query(name)}`).simple();
    try {
      const rows = await tx.unsafe(`explain (analyze, costs off, timing off, summary off) execute statement_under_test(${params.map(literal).join(", ")})`).simple();
      return rows.map((row) => row["QUERY PLAN"] as string);
    } finally {
      await tx.unsafe("deallocate statement_under_test").simple();
    }
  });
  return lines.join("\n");
}

/** How each request partition appears in a plan: its scan node per mention. */
function partitionScans(planText: string): Map<string, string[]> {
  const scans = new Map<string, string[]>();
  for (const match of planText.matchAll(/(Seq Scan|Index Only Scan|Index Scan|Bitmap Heap Scan)(?: Backward)?(?: using \S+)? on (requests_[a-z0-9_]+)/g)) {
    const [, method, partition] = match;
    scans.set(partition!, [...(scans.get(partition!) ?? []), method!]);
  }
  return scans;
}

const MONTHS_WITH_ROWS = ["requests_p2025_01", "requests_p2025_02", "requests_p2025_03", "requests_p2025_04"];

/** The history statement's filters and position (status, model, streamed, from, to, after created_at, after id): none. */
const NO_FILTERS: Param[] = [null, null, null, null, null, null, null];

const CASES: Array<{ name: string; params: Param[]; reads: string[]; why: string }> = [
  { name: "listNamespaceRequests", params: ["acct_7", "ns_7_1", 50, 0, ...NO_FILTERS], reads: MONTHS_WITH_ROWS, why: "history: the namespace's newest records" },
  { name: "findNamespaceRequestPosition", params: ["acct_7", "ns_7_1", "req_1007"], reads: MONTHS_WITH_ROWS, why: "where a record stands, for the history's after: one key probe per month" },
  // The usage statements read the records of the partial days at a window's edges only (the
  // whole days between come from the rollups): windows from mid-day to mid-day. The
  // namespace and daily statements read only the partial hours (the whole hours of the edge
  // days come from the hour rollups, migration 0035): windows from mid-hour to mid-hour.
  { name: "namespaceUsage", params: ["acct_7", "ns_7_1", "2025-02-10T06:30:00Z", "2025-03-15T18:30:00Z", "2025-02-11T00:00:00Z", "2025-03-15T00:00:00Z", "2025-02-10T07:00:00Z", "2025-03-15T18:00:00Z"], reads: ["requests_p2025_02", "requests_p2025_03"], why: "usage of a namespace over a window: its edge hours" },
  { name: "dailyNamespaceUsage", params: ["acct_7", "ns_7_1", "2025-02-10T06:30:00Z", "2025-03-15T18:30:00Z", "model", "2025-02-11T00:00:00Z", "2025-03-15T00:00:00Z", "2025-02-10T07:00:00Z", "2025-03-15T18:00:00Z"], reads: ["requests_p2025_02", "requests_p2025_03"], why: "daily usage of a namespace: its edge hours" },
  { name: "accountUsage", params: ["acct_7", null, "2025-02-10T06:00:00Z", "2025-03-15T18:00:00Z", "2025-02-11T00:00:00Z", "2025-03-15T00:00:00Z"], reads: ["requests_p2025_02", "requests_p2025_03"], why: "usage of an account over a window: its edge days, by namespace (no account-and-time index)" },
  { name: "accountUsage", params: ["acct_7", "ns_7_1", "2025-03-02T06:00:00Z", "2025-03-09T18:00:00Z", "2025-03-03T00:00:00Z", "2025-03-09T00:00:00Z"], reads: ["requests_p2025_03"], why: "usage of one namespace through the account statement" },
  { name: "findSettlement", params: ["acct_7", "q_1007", null], reads: MONTHS_WITH_ROWS, why: "a settlement by client request id (any month)" },
  { name: "listLedgerEntries", params: ["acct_7", null, 50, 0, null, null, null], reads: MONTHS_WITH_ROWS, why: "the ledger's join by record id, one key probe per month" },
  { name: "platformUsageByDayAndModel", params: ["2025-03-05T00:00:00Z", "2025-03-06T12:00:00Z", "2025-03-05T00:00:00Z", "2025-03-06T00:00:00Z"], reads: ["requests_p2025_03"], why: "public statistics: the day so far" },
  { name: "providerRequestWindow", params: ["2025-04-20T11:00:30Z", "2025-04-20T11:59:30Z", "2025-04-20T11:01:00Z", "2025-04-20T11:59:00Z"], reads: ["requests_p2025_04"], why: "the last hour per provider: its edge minutes" },
];

describe("plans over the partitioned request table", () => {
  for (const { name, params, reads, why } of CASES) {
    for (const mode of ["force_custom_plan", "force_generic_plan"] as const) {
      test(`${name} (${why}), ${mode === "force_custom_plan" ? "custom" : "generic"} plan: reads ${reads.length === 4 ? "every month" : reads.join(", ")} through an index, no other month with records`, async () => {
        const text = await plan(name, params, mode);
        const scans = partitionScans(text);
        const withRows = [...scans.keys()].filter((partition) => MONTHS_WITH_ROWS.includes(partition)).sort();
        expect({ reads: withRows, plan: text }).toEqual({ reads, plan: text });
        for (const partition of reads) {
          expect({ partition, scans: scans.get(partition)!.filter((method) => method === "Seq Scan"), plan: text }).toEqual({ partition, scans: [], plan: text });
        }
        if (reads.length < MONTHS_WITH_ROWS.length && mode === "force_generic_plan") expect(text).toContain("Subplans Removed");
      });
    }
  }

  test("history of a large namespace (30,000 records), planned with its values: the page of 50 reads about 50 records through each month's index, not the namespace", async () => {
    const text = await plan("listNamespaceRequests", ["acct_0", "ns_0_0", 50, 0, ...NO_FILTERS], "force_custom_plan");
    const read = [...text.matchAll(/Scan (?:Backward )?using \S+ on requests_p2025_\d\d \S+ \(actual rows=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect({ read, plan: text }).toEqual({ read: expect.any(Number), plan: text });
    expect(read).toBeGreaterThanOrEqual(50);
    expect(read).toBeLessThan(200);
  });

  test("history after a record of March, planned with its values (as the server plans it): January to March through their indexes, April not at all", async () => {
    const text = await plan("listNamespaceRequests", ["acct_0", "ns_0_0", 51, 0, null, null, null, null, null, "2025-03-10 12:00:00+00", "big_zzz"], "force_custom_plan");
    const scans = partitionScans(text);
    expect({ reads: [...scans.keys()].filter((partition) => MONTHS_WITH_ROWS.includes(partition)).sort(), plan: text }).toEqual({ reads: MONTHS_WITH_ROWS.slice(0, 3), plan: text });
    for (const methods of scans.values()) expect(methods).not.toContain("Seq Scan");
    const read = [...text.matchAll(/Scan (?:Backward )?using \S+ on requests_p2025_\d\d \S+ \(actual rows=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(read).toBeLessThan(200);
  });

  test("the history statement is planned per call on the server's connections, never from a cached generic plan (the usage statements stay prepared)", async () => {
    for (let i = 0; i < 8; i++) {
      await listNamespaceRequests(sql, "acct_7", "ns_7_1", 50, 0);
      await namespaceUsage(sql, "acct_7", "ns_7_1", { from: new Date("2025-02-01T00:00:00Z"), to: new Date("2025-03-01T00:00:00Z") });
    }
    const cached = await sql.unsafe<{ history: number; usage: number }[]>(
      "select count(*) filter (where statement like '%refused_by_policy%')::int as history, count(*) filter (where statement like '%capability_request_counts%')::int as usage from pg_prepared_statements",
    );
    expect({ ...cached[0] }).toEqual({ history: 0, usage: 1 });
  });
});

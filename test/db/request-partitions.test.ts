import { afterAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { loadMigrations, migrate } from "../../src/db/migrate";
import { dropExpiredRequestPartitions, ensureRequestPartitions } from "../../src/db/queries/request-partitions";
import { maintainRequestPartitions, REQUEST_PARTITIONS_AHEAD } from "../../src/db/request-partitions";
import { accountUsage, findSettlement, listNamespaceRequests, namespaceUsage } from "../../src/db/queries/usage";
import { listLedgerEntries } from "../../src/db/queries/billing";
import { platformUsageByDayAndModel } from "../../src/db/queries/stats";
import { WriteBuffer } from "../../src/db/batch/write-buffer";
import { createMeteringSink } from "../../src/metering/metering-sink";
import type { RequestRow } from "../../src/metering/metering-rows";
import { createTestDatabase } from "../support/test-database";
import { startTestServer } from "../support/test-server";
import { loadConfig } from "../../src/config";
import { referenceAccountUsage, referenceNamespaceUsage, referencePlatformUsage } from "../support/usage-reference";
import { insertSyntheticRequests } from "./synthetic-requests";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function database(): Promise<{ sql: Sql; url: string }> {
  const created = await createTestDatabase();
  cleanups.push(created.drop);
  return { sql: client(created.url), url: created.url };
}

function client(url: string): Sql {
  const sql = postgres(url, { max: 2, onnotice: () => {} }) as unknown as Sql;
  cleanups.push(() => sql.end({ timeout: 1 }));
  return sql;
}

/** The partitions of `requests`, by name, with their row counts. */
async function partitionRows(sql: Sql): Promise<Record<string, number>> {
  const names = await sql.unsafe<{ name: string }[]>("select inhrelid::regclass::text as name from pg_inherits where inhparent = 'requests'::regclass order by 1");
  const counts: Record<string, number> = {};
  for (const { name } of names) counts[name] = 0;
  const rows = await sql.unsafe<{ name: string; n: number }[]>("select tableoid::regclass::text as name, count(*)::int as n from requests group by 1");
  for (const row of rows) counts[row.name] = row.n;
  return counts;
}

/** `requests_pYYYY_MM` of each month from `first` (a UTC month start) for `months` months. */
function monthNames(first: string, months: number): string[] {
  const start = new Date(first);
  return Array.from({ length: months }, (_, i) => {
    const month = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + i, 1));
    return `requests_p${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, "0")}`;
  });
}

/** Every answer the request table gives: usage, settlements, the ledger's join, statistics. */
/**
 * The usage answers over `sql`'s records: through the server's statements, or (`reference`)
 * through the statements they replaced, which read the records alone and so also run on a
 * database migrated only up to 0024 (before the usage rollups of migration 0034).
 */
async function answers(sql: Sql, reference = false) {
  const account_ = reference ? referenceAccountUsage : accountUsage;
  const namespace_ = reference ? referenceNamespaceUsage : namespaceUsage;
  const platform = reference ? referencePlatformUsage : platformUsageByDayAndModel;
  const windows = [
    { from: new Date("2025-01-01T00:00:00Z"), to: new Date("2026-12-01T00:00:00Z") },
    { from: new Date("2025-06-10T00:00:00Z"), to: new Date("2025-09-20T00:00:00Z") },
    { from: new Date("1990-01-01T00:00:00Z"), to: new Date("2100-01-01T00:00:00Z") },
  ];
  const result: unknown[] = [];
  for (const window of windows) {
    for (const account of ["acct_0", "acct_3"]) {
      result.push(await account_(sql, account, null, window));
      for (const namespace of [`ns_${account.slice(5)}_0`, `ns_${account.slice(5)}_1`]) {
        result.push(await namespace_(sql, account, namespace, window));
        result.push(await account_(sql, account, namespace, window));
      }
    }
    result.push(await platform(sql, window.from, window.to));
  }
  for (const requestId of ["q_0", "q_7", "q_1234", "q_far_past", "q_far_future", "q_missing"]) result.push(await findSettlement(sql, "acct_0", requestId, null));
  result.push(await listLedgerEntries(sql, "acct_0", null, 100, 0));
  result.push(await listLedgerEntries(sql, "acct_3", "ns_3_1", 50, 20));
  return result;
}

describe("the request table, partitioned by month (migration 0025)", () => {
  test("migrating a populated table of the old shape keeps every row and id, and every history, usage, settlement and statistics answer", async () => {
    const { sql } = await database();
    await migrate(sql, loadMigrations().filter((migration) => migration.version < 25));
    await insertSyntheticRequests(sql, { count: 3_000, from: new Date("2025-01-03T00:00:00Z"), to: new Date("2026-11-20T00:00:00Z"), accounts: 5, namespaces: 10 });
    // One record far in the past and one far in the future, as a clock gone wrong would write them.
    for (const [id, at] of [["far_past", "1999-12-31T23:59:59.999999Z"], ["far_future", "2090-02-01T00:00:00Z"]] as const) {
      await sql.unsafe("insert into requests select $1, 'q_' || $1, account_id, namespace_id, api_key_id, status, status_code, billing_status, model_id, provider_id, provider_model_id, routing_profile, funding_source, streamed, finish_reason, first_token_kind, prompt_tokens, completion_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, final_charge_micro_usd, request_duration_ms, upstream_duration_ms, generation_duration_ms, ttft_ms, used_capabilities, usage_evidence, warnings, $2, $2 from requests where id = 'req_0'", [id, at]);
    }
    await sql.unsafe("insert into billing_audit (request_record_id, account_id, namespace_id, charge_micro_usd, pricing, buckets) select id, account_id, namespace_id, final_charge_micro_usd + 1, '{}', '{}' from requests where prompt_tokens % 3 = 0");
    await sql.unsafe("insert into ledger_entries (id, account_id, namespace_id, request_record_id, kind, amount_micro_usd, created_at) select 'le_' || id, account_id, namespace_id, id, 'usage', -final_charge_micro_usd, completed_at from requests");
    const before = await sql.unsafe("select * from requests order by id");
    const answersBefore = await answers(sql, true);

    await migrate(sql);

    const [shape] = await sql.unsafe("select relkind, pg_get_partkeydef(oid) as key from pg_class where relname = 'requests'");
    expect({ ...shape }).toEqual({ relkind: "p", key: "RANGE (created_at)" });
    const columns = Object.keys(before[0]!);
    const after = await sql.unsafe(`select ${columns.map((column) => `"${column}"`).join(", ")} from requests order by id`);
    expect(after.length).toBe(3_002);
    expect([...after]).toEqual([...before]);
    expect(await answers(sql)).toEqual(answersBefore);
    // History through the real query, newest first, as the old rows order it.
    for (const [account, namespace] of [["acct_0", "ns_0_0"], ["acct_4", "ns_4_1"]] as const) {
      const expected = before
        .filter((row) => row.account_id === account && row.namespace_id === namespace)
        .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1))
        .map((row) => row.id);
      const pages = [...(await listNamespaceRequests(sql, account, namespace, 100, 0)), ...(await listNamespaceRequests(sql, account, namespace, 500, 100))];
      expect(pages.map((row) => row.id)).toEqual(expected);
    }
    // Every month that held rows has its partition, the far ones included; nothing waits in the default.
    const partitions = await partitionRows(sql);
    for (const name of [...monthNames("2025-01-01", 23), "requests_p1999_12", "requests_p2090_02"]) expect(partitions[name]).toBeGreaterThan(0);
    expect(partitions.requests_default).toBe(0);
    // The old table is gone, and the key is the record id with the partition key.
    expect((await sql.unsafe("select to_regclass('requests_unpartitioned') as t"))[0]!.t).toBeNull();
    const [key] = await sql.unsafe("select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'requests_pkey'");
    expect(key!.def).toBe("PRIMARY KEY (id, created_at)");
  }, 60_000);

  test("the server's maintenance creates this month and the next ones, once, however many instances run it at the same moment", async () => {
    const { sql, url } = await database();
    await migrate(sql);
    const now = new Date("2031-05-20T12:00:00Z");
    const instances = [sql, client(url), client(url), client(url)];
    const runs = await Promise.all(instances.map((instance) => maintainRequestPartitions(instance, undefined, now)));
    const created = runs.flatMap((run) => run.created).sort();
    expect(created).toEqual(monthNames("2031-05-01", REQUEST_PARTITIONS_AHEAD + 1));
    expect(runs.flatMap((run) => run.dropped)).toEqual([]);
    // A later run finds them all.
    expect(await maintainRequestPartitions(sql, undefined, now)).toEqual({ created: [], dropped: [] });
    // Each is a partition of `requests` with the parent's indexes.
    const [indexes] = await sql.unsafe("select count(*)::int as n from pg_indexes where tablename = 'requests_p2031_07'");
    expect(indexes!.n).toBe((await sql.unsafe("select count(*)::int as n from pg_indexes where tablename = 'requests'"))[0]!.n);
  }, 30_000);

  test("retention drops exactly the partitions whose month ended before the retention period, never the current one, and the expired rows of the default", async () => {
    const { sql } = await database();
    await migrate(sql);
    const created = await ensureRequestPartitions(sql, new Date("2024-01-01T00:00:00Z"), 35);
    expect(created).toEqual(expect.arrayContaining(monthNames("2024-01-01", 34)));
    await insertSyntheticRequests(sql, { count: 1_050, from: new Date("2024-01-01T00:00:00Z"), to: new Date("2026-11-27T00:00:00Z"), accounts: 3, namespaces: 6 });
    // Records in the default partition (months without a partition): one expired, one not.
    await insertSyntheticRequests(sql, { count: 1, from: new Date("2023-12-15T00:00:00Z"), to: new Date("2023-12-16T00:00:00Z"), accounts: 1, namespaces: 1, idPrefix: "old_" });
    await insertSyntheticRequests(sql, { count: 1, from: new Date("2099-05-15T00:00:00Z"), to: new Date("2099-05-16T00:00:00Z"), accounts: 1, namespaces: 1, idPrefix: "ahead_" });
    const countBefore = await partitionRows(sql);
    expect(countBefore.requests_default).toBe(2);

    const now = new Date("2026-11-27T12:00:00Z");
    const dropped = await dropExpiredRequestPartitions(sql, now, 12);
    // Twelve months before now is 2025-11-27: every month that ended by then goes; November 2025 stays.
    expect(dropped).toEqual(monthNames("2024-01-01", 22));
    const remaining = await partitionRows(sql);
    expect(Object.keys(remaining).filter((name) => name.startsWith("requests_p")).sort()[0]).toBe("requests_p2025_11");
    expect(remaining.requests_default).toBe(1);
    const [oldest] = await sql.unsafe("select min(created_at) as t from requests");
    expect((oldest!.t as Date).toISOString() >= "2025-11-01").toBe(true);
    // Nothing younger than the retention period was dropped.
    const kept = Object.entries(countBefore).filter(([name]) => name >= "requests_p2025_11").reduce((sum, [, n]) => sum + n, 0);
    expect(Object.values(remaining).reduce((sum, n) => sum + n, 0)).toBe(kept + 1);
    // A second run drops nothing; one month of retention keeps the current month.
    expect(await dropExpiredRequestPartitions(sql, now, 12)).toEqual([]);
    expect(await dropExpiredRequestPartitions(sql, new Date("2026-11-01T00:00:00Z"), 1)).toEqual(["requests_p2025_11", "requests_p2025_12", "requests_p2026_01", "requests_p2026_02", "requests_p2026_03", "requests_p2026_04", "requests_p2026_05", "requests_p2026_06", "requests_p2026_07", "requests_p2026_08", "requests_p2026_09"]);
    expect(Object.keys(await partitionRows(sql))).toContain("requests_p2026_10");
    await expect(dropExpiredRequestPartitions(sql, now, 0)).rejects.toThrow(/at least one month/);
  }, 60_000);

  test("a record far in the future or the past, written by the metering writer (COPY and insert), lands in the default partition instead of being refused, and moves into its month when that is created", async () => {
    const { sql } = await database();
    await migrate(sql);
    const row = (id: string, at: string): RequestRow => ({
      id, request_id: `q_${id}`, account_id: "acct_far", namespace_id: "ns_far", api_key_id: "key_far", oauth_token_id: null, status: "succeeded", status_code: 200,
      billing_status: "computed", model_id: "p/m", provider_id: "p", provider_model_id: "m", routing_profile: "balanced", funding_source: "cloud_credit",
      streamed: false, finish_reason: "stop", first_token_kind: "text", prompt_tokens: 3, completion_tokens: 2, reasoning_tokens: 0,
      cache_read_tokens: 0, cache_write_tokens: 0, final_charge_micro_usd: 1, request_duration_ms: 5, upstream_duration_ms: 4,
      generation_duration_ms: null, ttft_ms: null, used_capabilities: ["text"], usage_evidence: { source: "provider_reported" } as never, warnings: [], attempts: [],
      charge_audit: { pricing: { input: 1 }, buckets: { output: 2 } }, created_at: at, completed_at: at,
    });
    for (const copy of [true, false]) {
      const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000 });
      const sink = createMeteringSink(writes, { copy });
      sink.request(row(`future_${copy}`, "2199-03-04T05:06:07.123456Z"));
      sink.request(row(`past_${copy}`, "1970-01-01T00:00:00.000001Z"));
      await writes.flush();
      await writes.stop();
      expect(writes.stats().deadLettered.requests).toBe(0);
    }
    const [letters] = await sql.unsafe("select count(*)::int as n from metering_dead_letters");
    expect(letters!.n).toBe(0);
    const placed = await sql.unsafe<{ id: string; partition: string }[]>("select id, tableoid::regclass::text as partition from requests order by id");
    expect(placed.map((r) => [r.id, r.partition])).toEqual([
      ["future_false", "requests_default"], ["future_true", "requests_default"], ["past_false", "requests_default"], ["past_true", "requests_default"],
    ]);
    // Readable as any other record.
    expect((await listNamespaceRequests(sql, "acct_far", "ns_far", 10, 0)).map((r) => r.id)).toEqual(["future_true", "future_false", "past_true", "past_false"]);
    // Once its month exists, a waiting record moves in, with its id and its instant.
    expect(await ensureRequestPartitions(sql, new Date("2199-03-01T00:00:00Z"), 0)).toEqual(["requests_p2199_03"]);
    const moved = await sql.unsafe<{ id: string; partition: string; at: string }[]>("select id, tableoid::regclass::text as partition, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as at from requests where id like 'future%' order by id");
    expect([...moved]).toEqual([
      { id: "future_false", partition: "requests_p2199_03", at: "2199-03-04 05:06:07.123456" },
      { id: "future_true", partition: "requests_p2199_03", at: "2199-03-04 05:06:07.123456" },
    ]);
    // A retried write of the same record is still a no-op (the key is the id with its created_at).
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000 });
    createMeteringSink(writes, { copy: false }).request(row("future_true", "2199-03-04T05:06:07.123456Z"));
    await writes.flush();
    await writes.stop();
    const [count] = await sql.unsafe("select count(*)::int as n from requests where id = 'future_true'");
    expect(count!.n).toBe(1);
  }, 30_000);

  test("a starting server creates the months ahead that are missing and applies REQUEST_RETENTION_MONTHS, without holding up its start", async () => {
    const created = await createTestDatabase();
    cleanups.push(created.drop);
    const sql = client(created.url);
    await migrate(sql);
    const now = new Date();
    const ahead = monthNames(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(), REQUEST_PARTITIONS_AHEAD + 1);
    await sql.unsafe(`drop table ${ahead.at(-1)}`);
    expect(await ensureRequestPartitions(sql, new Date("2020-01-01T00:00:00Z"), 0)).toEqual(["requests_p2020_01"]);
    const server = await startTestServer({ requestRetentionMonths: 6 }, { url: created.url, drop: async () => {} });
    try {
      const state = async () => {
        const [row] = await sql.unsafe("select to_regclass($1) is not null as ahead, to_regclass('requests_p2020_01') is not null as expired", [ahead.at(-1)!]);
        return { ...row };
      };
      // Maintenance runs beside the start, not before it: wait for its first run.
      for (let tries = 0; tries < 300 && JSON.stringify(await state()) !== JSON.stringify({ ahead: true, expired: false }); tries++) await Bun.sleep(100);
      expect(await state()).toEqual({ ahead: true, expired: false });
    } finally {
      await server.server.shutdown();
    }
  }, 60_000);

  test("REQUEST_RETENTION_MONTHS is a positive whole number of months, or unset to keep every record", () => {
    expect(loadConfig({}).requestRetentionMonths).toBeUndefined();
    expect(loadConfig({ REQUEST_RETENTION_MONTHS: "" }).requestRetentionMonths).toBeUndefined();
    expect(loadConfig({ REQUEST_RETENTION_MONTHS: "13" }).requestRetentionMonths).toBe(13);
    for (const bad of ["0", "-1", "1.5", "abc", "12 months"]) {
      expect(() => loadConfig({ REQUEST_RETENTION_MONTHS: bad })).toThrow(`REQUEST_RETENTION_MONTHS must be a positive number of months (unset keeps every record), got "${bad}"`);
    }
  });
});

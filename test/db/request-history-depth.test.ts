import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/db/connect-database";
import { query } from "../../src/db/named-queries";
import { ensureRequestPartitions } from "../../src/db/queries/request-partitions";
import { listRequests, type UsageServiceDeps } from "../../src/management/usage/usage-service";
import { createMigratedTestDatabase, type MigratedTestDatabase } from "../support/test-database";
import { insertSyntheticRequests } from "./synthetic-requests";

/**
 * The history at depth: one namespace with 200,000 records over four months, read far down
 * by `after` (keyset) and, for comparison, by the offset it replaces. The measure is the
 * buffers PostgreSQL touches (EXPLAIN (ANALYZE, BUFFERS) of the named statements, run as the
 * server runs them: unnamed, planned with their values), not time, so it holds on a busy
 * machine. A page by offset reads every record before it; a page by position reads the
 * index from that record on, so its cost does not grow with the depth.
 */
const ACCOUNT = "acct_0";
const NAMESPACE = "ns_0_0";
const RECORDS = 200_000;
const DEPTH = 150_000;
const PAGE = 100;
/**
 * What a page of 100 by position may touch: a few index pages of each month, and the heap
 * pages holding the page's 101 records (a deep page by offset touches thousands).
 */
const PAGE_BUFFERS = 400;

let sql: Sql;
let database: MigratedTestDatabase;
beforeAll(async () => {
  database = await createMigratedTestDatabase({ max: 1 });
  sql = database.sql;
  await ensureRequestPartitions(sql, new Date("2025-01-01T00:00:00Z"), 3);
  await insertSyntheticRequests(sql, { count: RECORDS, from: new Date("2025-01-01T00:00:00Z"), to: new Date("2025-05-01T00:00:00Z"), accounts: 1, namespaces: 1, idPrefix: "deep_" });
  // Another tenant's records at the same instants, so that a position must also name the tenant.
  await sql.unsafe(
    `insert into requests (id, request_id, account_id, namespace_id, status, status_code, billing_status, streamed, usage_evidence, created_at, completed_at)
     select 'theirs_' || id, request_id, 'acct_other', 'ns_other', status, status_code, billing_status, streamed, usage_evidence, created_at, completed_at
       from requests where id like 'deep_%' and id::text like '%7'`,
  );
  await sql.unsafe("vacuum analyze requests").simple();
}, 300_000);
afterAll(() => database?.close({ timeout: 1 }));

type Param = string | number | boolean | null;

/** The buffers (shared hit + read) one run of the named statement touches, and its rows. */
async function buffersOf(name: string, params: Param[]): Promise<{ buffers: number; rows: number; plan: string }> {
  const [row] = await sql.unsafe(`explain (analyze, buffers, format json) ${query(name)}`, params as never[], { prepare: false });
  const top = (row as Record<string, any>)["QUERY PLAN"][0].Plan;
  const plan = JSON.stringify(top);
  return { buffers: top["Shared Hit Blocks"] + top["Shared Read Blocks"], rows: top["Actual Rows"], plan };
}

/** listNamespaceRequests' parameters: no filters but those given, then the position. */
function historyParams(limit: number, offset: number, filters: { status?: string } = {}, position?: { createdAt: string; id: string }): Param[] {
  return [ACCOUNT, NAMESPACE, limit, offset, filters.status ?? null, null, null, null, null, position?.createdAt ?? null, position?.id ?? null];
}

/** The record at this depth of the namespace's history (0: the newest), with its exact position. */
async function recordAt(depth: number, where = "true"): Promise<{ createdAt: string; id: string }> {
  const [row] = await sql.unsafe<{ created_at: string; id: string }[]>(
    `select created_at::text as created_at, id from requests where account_id = $1 and namespace_id = $2 and ${where} order by created_at desc, id desc offset $3 limit 1`,
    [ACCOUNT, NAMESPACE, depth],
  );
  return { createdAt: row!.created_at, id: row!.id };
}

const deps = () => ({ db: { sql, read: sql } }) as unknown as UsageServiceDeps;
const tenant = { accountId: ACCOUNT, namespaceId: NAMESPACE };

describe("the history 150,000 records deep", () => {
  test("a page after a record reads the same records as the page at that offset, through each month's history index, touching fewer than 400 buffers", async () => {
    const position = await recordAt(DEPTH - 1);
    const byPosition = await buffersOf("listNamespaceRequests", historyParams(PAGE + 1, 0, {}, position));
    const byOffset = await buffersOf("listNamespaceRequests", historyParams(PAGE + 1, DEPTH));
    expect(byPosition.rows).toBe(PAGE + 1);
    expect(byOffset.rows).toBe(PAGE + 1);
    expect(byPosition.plan).toMatch(/namespace_id_created_at/);
    expect(byPosition.plan).not.toContain('"Seq Scan"');
    expect({ buffers: byPosition.buffers, plan: byPosition.plan }).toEqual({ buffers: expect.any(Number), plan: byPosition.plan });
    expect(byPosition.buffers).toBeLessThan(PAGE_BUFFERS);
    // The bound discriminates: the offset it replaces reads every record before the page.
    expect(byOffset.buffers).toBeGreaterThan(10 * PAGE_BUFFERS);
    console.log(`page of ${PAGE} at depth ${DEPTH}: ${byPosition.buffers} buffers after a record, ${byOffset.buffers} at the offset`);

    const listed = await listRequests(deps(), tenant, { limit: PAGE, offset: 0, after: position.id });
    const atOffset = await sql.unsafe<{ id: string }[]>(
      "select id from requests where account_id = $1 and namespace_id = $2 order by created_at desc, id desc offset $3 limit $4",
      [ACCOUNT, NAMESPACE, DEPTH, PAGE],
    );
    expect(listed.data.map((record) => record.id)).toEqual(atOffset.map((row) => row.id));
    expect(listed.next_after).toBe(listed.data.at(-1)!.id);
  });

  test("finding where the record stands is one key probe per month: a handful of buffers", async () => {
    const position = await recordAt(DEPTH - 1);
    const lookup = await buffersOf("findNamespaceRequestPosition", [ACCOUNT, NAMESPACE, position.id]);
    expect(lookup.rows).toBe(1);
    // The months that hold records are probed through their key; the empty ones made ahead may be read whole (nothing to read).
    const scans = [...lookup.plan.matchAll(/"Node Type":"([^"]+)"[^{}]*?"Relation Name":"(requests_p2025_\d\d)"/g)].map(([, node, partition]) => `${partition}: ${node}`);
    expect(scans).toEqual(["01", "02", "03", "04"].map((month) => `requests_p2025_${month}: Index Scan`));
    expect(lookup.buffers).toBeLessThan(50);
  });

  test("the months after the position are not read", async () => {
    // A record of January: February to April are left out when the statement is planned.
    const position = await recordAt(DEPTH - 1);
    expect(position.createdAt).toStartWith("2025-01");
    const page = await buffersOf("listNamespaceRequests", historyParams(PAGE + 1, 0, {}, position));
    for (const later of ["requests_p2025_02", "requests_p2025_03", "requests_p2025_04"]) expect(page.plan).not.toContain(later);
  });

  test("with a filter, the page after a record reads from that record on, not the records before it", async () => {
    // Every tenth record failed: the 100 failed ones after the position are about 1,000 records on.
    const position = await recordAt(10_000, "status = 'failed'");
    const byPosition = await buffersOf("listNamespaceRequests", historyParams(PAGE + 1, 0, { status: "failed" }, position));
    const byOffset = await buffersOf("listNamespaceRequests", historyParams(PAGE + 1, 10_001, { status: "failed" }));
    expect(byPosition.rows).toBe(PAGE + 1);
    console.log(`page of ${PAGE} failed records 10,000 failed records deep: ${byPosition.buffers} buffers after a record, ${byOffset.buffers} at the offset`);
    expect(byPosition.buffers).toBeLessThan(2 * PAGE_BUFFERS);
    expect(byOffset.buffers).toBeGreaterThan(10 * PAGE_BUFFERS);
    const listed = await listRequests(deps(), tenant, { limit: PAGE, offset: 0, after: position.id }, { status: "failed" });
    expect(listed.data).toHaveLength(PAGE);
    expect(listed.data.every((record) => record.status === "failed")).toBe(true);
  });

  test("one key's history after a record reads the (namespace, key, created_at) index from there", async () => {
    // key_7 made every fortieth request: 5,000 of them; 4,000 down.
    const position = await recordAt(4_000, "api_key_id = 'key_7'");
    const byPosition = await buffersOf("listKeyRequests", [...historyParams(PAGE + 1, 0, {}, position), "key_7"]);
    const byOffset = await buffersOf("listKeyRequests", [...historyParams(PAGE + 1, 4_001), "key_7"]);
    expect(byPosition.rows).toBe(PAGE + 1);
    expect(byPosition.plan).toMatch(/namespace_id_api_key_id_created_at/);
    console.log(`page of ${PAGE} of one key 4,000 of its records deep: ${byPosition.buffers} buffers after a record, ${byOffset.buffers} at the offset`);
    expect(byPosition.buffers).toBeLessThan(PAGE_BUFFERS);
    expect(byOffset.buffers).toBeGreaterThan(4 * byPosition.buffers);
    const listed = await listRequests(deps(), tenant, { limit: PAGE, offset: 0, after: position.id }, { apiKeyId: "key_7" });
    expect(listed.data.every((record) => record.api_key_id === "key_7")).toBe(true);
  });

  test("the last page says nothing follows, and another tenant's record at the same instant is no position here", async () => {
    const oldest = await recordAt(RECORDS - 3);
    const tail = await listRequests(deps(), tenant, { limit: PAGE, offset: 0, after: oldest.id });
    expect(tail.data).toHaveLength(2);
    expect(tail.next_after).toBeNull();
    const theirs = `theirs_${(await recordAt(0, "id like '%7'")).id}`;
    await expect(listRequests(deps(), tenant, { limit: PAGE, offset: 0, after: theirs })).rejects.toMatchObject({ code: "bad_request" });
  });
});

/**
 * `bun test/bench/partition-load.ts [requests] [migrated rows]`: how big a month of request
 * records is, and how the history, usage and statistics queries answer against it
 * (docs/architecture.md "Growth"). Not a test: its figures are read by a person, on this machine.
 *
 * 1. Loads `requests` (default 1,000,000) requests into last month's partition with the
 *    real write path: settleRequest's rows through the metering sink and the batch writer
 *    (binary COPY), a record (with its usage frames and charge audit) and a ledger entry each,
 *    created_at spread evenly over the month. 2,000 accounts; one of them makes a tenth
 *    of the traffic (a large tenant).
 * 2. VACUUM ANALYZE, as autovacuum would, then the size of each table and its indexes,
 *    per million requests.
 * 3. Each read the product serves from the request table, through its real query function,
 *    for a typical account and for the large one: the median of 9 runs after one warm-up.
 * 4. With `migrated rows` > 0 (default 1,000,000): migration 0025 applied in place to an
 *    old-shape table of that many records, timed.
 *
 * Into TEST_DATABASE_URL's cluster when set, else a throwaway cluster (fsync off).
 */
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { loadMigrations, migrate } from "../../src/db/migrate";
import { ShardedWriteBuffer } from "../../src/db/batch/sharded-write-buffer";
import { createMeteringSink } from "../../src/metering/metering-sink";
import { settleRequest } from "../../src/metering/settle-request";
import { ensureRequestPartitions } from "../../src/db/queries/request-partitions";
import { accountUsage, findSettlement, listNamespaceRequests, namespaceUsage } from "../../src/db/queries/usage";
import { listLedgerEntries } from "../../src/db/queries/billing";
import { platformUsageByDayAndModel, providerRequestWindow } from "../../src/db/queries/stats";
import { insertSyntheticRequests } from "../db/synthetic-requests";
import { outcomeFor } from "./settled-outcome";
import { cleanupAll } from "./children";
import { startDatabase } from "./switchyard-process";

const REQUESTS = Number(process.argv[2] ?? 1_000_000);
const MIGRATED_ROWS = Number(process.argv[3] ?? 1_000_000);
const ACCOUNTS = 2_000;
/** Requests settled per turn of the event loop, and how many may wait unwritten. */
const BURST = 500;
const MAX_PENDING = 50_000;

const MB = 1024 * 1024;

async function database(name: string): Promise<string> {
  if (process.env.TEST_DATABASE_URL !== undefined) {
    const admin = postgres(process.env.TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const url = new URL(process.env.TEST_DATABASE_URL);
    url.pathname = `/${name}`;
    return url.toString();
  }
  const cluster = (throwawayCluster ??= await startDatabase());
  const url = await cluster.create(name);
  if (url === undefined) throw new Error("no PostgreSQL server binaries: this measurement needs a real PostgreSQL");
  return url;
}
let throwawayCluster: Awaited<ReturnType<typeof startDatabase>> | undefined;

/** Request i of the month: the large account (acct_bench_0) makes every tenth. */
function accountIndexOf(i: number): number {
  return i % 10 === 0 ? i - (i % ACCOUNTS) : i;
}

async function load(sql: Sql, month: { from: Date; to: Date }): Promise<number> {
  const writes = new ShardedWriteBuffer(sql, 2);
  const sink = createMeteringSink(writes, { copy: true });
  const span = month.to.getTime() - month.from.getTime();
  const started = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    settleRequest(outcomeFor(accountIndexOf(i), ACCOUNTS, new Date(month.from.getTime() + Math.floor((i / REQUESTS) * span))), sink);
    if (i % BURST === BURST - 1) await new Promise((resolve) => setImmediate(resolve));
    if (i % MAX_PENDING === MAX_PENDING - 1) {
      await writes.whenWritten();
      process.stdout.write(`\r  loaded ${(i + 1).toLocaleString("en-US")}`);
    }
  }
  await writes.whenWritten();
  await writes.stop();
  process.stdout.write("\n");
  return (REQUESTS * 1_000) / (performance.now() - started);
}

interface Size {
  table: string;
  rows: number;
  tableBytes: number;
  indexBytes: number;
}

async function sizes(sql: Sql, tables: string[]): Promise<Size[]> {
  const result: Size[] = [];
  for (const table of tables) {
    const [row] = await sql.unsafe(`select count(*)::int8 as rows, pg_table_size($1) as table_bytes, pg_indexes_size($1) as index_bytes from ${table}`, [table]);
    result.push({ table, rows: Number(row!.rows), tableBytes: Number(row!.table_bytes), indexBytes: Number(row!.index_bytes) });
  }
  return result;
}

/** Median milliseconds of 9 runs after a warm-up. */
async function timed(run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < 9; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[4]!;
}

async function reads(sql: Sql, month: { from: Date; to: Date }): Promise<Array<[string, number]>> {
  const window = { from: new Date(month.from.getTime() + 86_400_000), to: month.to };
  const day = { from: new Date(month.from.getTime() + 14 * 86_400_000), to: new Date(month.from.getTime() + 15 * 86_400_000) };
  const lastHour = new Date(month.to.getTime() - 3_600_000);
  const result: Array<[string, number]> = [];
  for (const [label, account] of [["typical account (~450 requests)", "acct_bench_7"], ["large account (100,000 requests)", "acct_bench_0"]] as const) {
    const namespace = `ns_bench_${account.slice("acct_bench_".length)}`;
    const [some] = await sql.unsafe("select request_id from requests where account_id = $1 limit 1", [account]);
    const requestId = String(some!.request_id);
    result.push([`${label}: history, first page of 50`, await timed(() => listNamespaceRequests(sql, account, namespace, 50, 0))]);
    result.push([`${label}: history, page of 50 at offset 400`, await timed(() => listNamespaceRequests(sql, account, namespace, 50, 400))]);
    result.push([`${label}: namespace usage, 30 days`, await timed(() => namespaceUsage(sql, account, namespace, window))]);
    result.push([`${label}: account usage, 30 days`, await timed(() => accountUsage(sql, account, null, window))]);
    result.push([`${label}: settlement by request id`, await timed(() => findSettlement(sql, account, requestId, null))]);
    result.push([`${label}: ledger, first page of 50`, await timed(() => listLedgerEntries(sql, account, null, 50, 0))]);
  }
  result.push(["public statistics, one day", await timed(() => platformUsageByDayAndModel(sql, day.from, day.to))]);
  result.push(["public statistics, 30 days", await timed(() => platformUsageByDayAndModel(sql, window.from, window.to))]);
  result.push(["providers' last hour", await timed(() => providerRequestWindow(sql, lastHour, new Date(month.to.getTime() - 60_000)))]);
  return result;
}

async function migrationInPlace(rows: number): Promise<{ seconds: number; bytes: number }> {
  const sql = postgres(await database(`partition_migration_${Date.now()}`), { max: 2, onnotice: () => {} }) as unknown as Sql;
  try {
    const migrations = loadMigrations();
    await migrate(sql, migrations.filter((migration) => migration.version < 25));
    const now = Date.now();
    await insertSyntheticRequests(sql, { count: rows, from: new Date(now - 180 * 86_400_000), to: new Date(now), accounts: 2_000, namespaces: 8_000 });
    const [size] = await sql.unsafe("select pg_total_relation_size('requests') as bytes");
    const started = performance.now();
    await migrate(sql, migrations.filter((migration) => migration.version <= 25));
    return { seconds: (performance.now() - started) / 1_000, bytes: Number(size!.bytes) };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function main(): Promise<void> {
  const sql = postgres(await database(`partition_load_${Date.now()}`), { max: 4, onnotice: () => {}, prepare: true }) as unknown as Sql;
  try {
    await migrate(sql);
    const now = new Date();
    const month = { from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)), to: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) };
    await ensureRequestPartitions(sql, month.from, 0);
    const partition = `requests_p${month.from.getUTCFullYear()}_${String(month.from.getUTCMonth() + 1).padStart(2, "0")}`;
    console.log(`partition load: ${REQUESTS.toLocaleString("en-US")} requests into ${partition} through the metering sink (binary COPY, 2 write connections)`);
    const rate = await load(sql, month);
    console.log(`  loaded at ${Math.round(rate).toLocaleString("en-US")} requests/s (a record and a ledger entry each)`);
    let started = performance.now();
    await sql.unsafe("vacuum analyze").simple();
    console.log(`  vacuum analyze: ${((performance.now() - started) / 1_000).toFixed(1)} s`);

    const perMillion = (bytes: number) => ((bytes / MB) * 1_000_000) / REQUESTS;
    console.log("size per million requests (MiB): table, indexes, total");
    let total = 0;
    for (const size of await sizes(sql, [partition, "ledger_entries"])) {
      total += size.tableBytes + size.indexBytes;
      console.log(`  ${size.table.padEnd(20)} ${size.rows.toLocaleString("en-US").padStart(10)} rows  ${perMillion(size.tableBytes).toFixed(0).padStart(6)}  ${perMillion(size.indexBytes).toFixed(0).padStart(6)}  ${perMillion(size.tableBytes + size.indexBytes).toFixed(0).padStart(6)}`);
    }
    console.log(`  all the tables above: ${perMillion(total).toFixed(0)} MiB per million requests; 10 M requests a month: ${((perMillion(total) * 10) / 1024).toFixed(1)} GiB a month`);

    console.log("reads (median of 9, ms)");
    for (const [label, ms] of await reads(sql, month)) console.log(`  ${label.padEnd(62)} ${ms.toFixed(2).padStart(8)}`);

    if (MIGRATED_ROWS > 0) {
      started = performance.now();
      const migrated = await migrationInPlace(MIGRATED_ROWS);
      console.log(`migration 0025 in place: ${MIGRATED_ROWS.toLocaleString("en-US")} old-shape records (${(migrated.bytes / MB).toFixed(0)} MiB with indexes) over 6 months: ${migrated.seconds.toFixed(1)} s`);
    }
  } finally {
    await sql.end({ timeout: 5 });
    cleanupAll();
  }
}

await main();

/**
 * `bun test/bench/usage-reads.ts [requests]`: the usage reads before and after the usage
 * rollups (migration 0034), side by side in one run (README "Usage reads by day"). Not a
 * test: its figures are read by a person, on this machine.
 *
 * 1. Loads one tenant (one account, one namespace) with `requests` (default 1,000,000)
 *    requests spread evenly over the last 60 days, through the real write path:
 *    settleRequest's rows, the metering sink and the batch writer (binary COPY on 2 write
 *    connections), which keeps the rollups as it writes. Six keys, four models on three
 *    providers, one request in eight failed; the load rate is printed.
 * 2. VACUUM ANALYZE, as autovacuum would.
 * 3. Each usage read the product serves, 9 runs after a warm-up, median in ms: the
 *    statement it replaced over the records (test/support/usage-reference.ts) and the
 *    server's own query function over the rollups, on the same data.
 *
 * Into TEST_DATABASE_URL's cluster when set, else a throwaway cluster (fsync off).
 */
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { migrate } from "../../src/db/migrate";
import { ShardedWriteBuffer } from "../../src/db/batch/sharded-write-buffer";
import { createMeteringSink } from "../../src/metering/metering-sink";
import type { MeteringSink } from "../../src/metering/metering-rows";
import { settleRequest } from "../../src/metering/settle-request";
import { ensureRequestPartitions } from "../../src/db/queries/request-partitions";
import { accountUsage, dailyNamespaceUsage, namespaceUsage, type TimeWindow } from "../../src/db/queries/usage";
import { platformUsageByDayAndModel, providerRequestWindow } from "../../src/db/queries/stats";
import { REFERENCE_ACCOUNT_USAGE, REFERENCE_DAILY_USAGE, REFERENCE_NAMESPACE_USAGE, REFERENCE_PLATFORM_USAGE, REFERENCE_PROVIDER_WINDOW } from "../support/usage-reference";
import { outcomeFor } from "./settled-outcome";
import { cleanupAll } from "./children";
import { startDatabase } from "./switchyard-process";

const REQUESTS = Number(process.argv[2] ?? 1_000_000);
const DAYS = 60;
const DAY_MS = 86_400_000;
const BURST = 500;
const MAX_PENDING = 50_000;
const ACCOUNT = "acct_bench_0";
const NAMESPACE = "ns_bench_0";
const MODELS = [
  ["openai/gpt-4.1-mini", "openai"],
  ["openai/gpt-4.1", "openai"],
  ["anthropic/claude-sonnet-4-5", "anthropic"],
  ["google/gemini-2.5-flash", "google"],
] as const;

async function database(name: string): Promise<string> {
  if (process.env.TEST_DATABASE_URL !== undefined) {
    const admin = postgres(process.env.TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const url = new URL(process.env.TEST_DATABASE_URL);
    url.pathname = `/${name}`;
    return url.toString();
  }
  const cluster = await startDatabase();
  const url = await cluster.create(name);
  if (url === undefined) throw new Error("no PostgreSQL server binaries: this measurement needs a real PostgreSQL");
  return url;
}

/**
 * The rows settleRequest makes for the benchmark's request, varied as one tenant's traffic
 * is (keys, models, providers, failures) before they reach the real sink.
 */
function variedSink(sink: MeteringSink, index: () => number): MeteringSink {
  return {
    request(row) {
      const i = index();
      const [model, provider] = MODELS[i % MODELS.length]!;
      const failed = i % 8 === 7;
      sink.request({ ...row, api_key_id: `k_bench_${i % 6}`, model_id: model, provider_id: provider, ...(failed ? { status: "failed", status_code: 502 } : {}) });
    },
    ledger: (row) => sink.ledger(row),
  };
}

async function load(sql: Sql, from: number, to: number): Promise<number> {
  const writes = new ShardedWriteBuffer(sql, 2);
  let current = 0;
  const sink = variedSink(createMeteringSink(writes, { copy: true }), () => current);
  const started = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    current = i;
    settleRequest(outcomeFor(0, 1, new Date(from + Math.floor((i / REQUESTS) * (to - from)))), sink);
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

async function main(): Promise<void> {
  const sql = postgres(await database(`usage_reads_${Date.now()}`), { max: 4, onnotice: () => {}, prepare: true }) as unknown as Sql;
  try {
    await migrate(sql);
    const now = Date.now();
    const from = now - DAYS * DAY_MS;
    await ensureRequestPartitions(sql, new Date(from), 3);
    await sql.unsafe("insert into accounts (id, email) values ($1, 'bench@example.test')", [ACCOUNT]);
    await sql.unsafe("insert into wallets (account_id, balance_micro_usd) values ($1, 1000000000000)", [ACCOUNT]);
    console.log(`usage reads: ${REQUESTS.toLocaleString("en-US")} requests of one namespace over ${DAYS} days, through the metering sink (binary COPY, 2 write connections, rollups kept)`);
    const rate = await load(sql, from, now - 60_000);
    console.log(`  loaded at ${Math.round(rate).toLocaleString("en-US")} requests/s (a record and a ledger entry each)`);
    await sql.unsafe("vacuum analyze").simple();
    const [rows] = await sql.unsafe("select (select count(*) from request_usage_days)::int as days, (select count(*) from requests)::int as records");
    console.log(`  ${rows!.records.toLocaleString("en-US")} records, ${rows!.days.toLocaleString("en-US")} rollup rows`);

    // The default window (the last 30 days ending now: two partial days at its edges), as the API and console read it.
    const last30: TimeWindow = { from: new Date(now - 30 * DAY_MS), to: new Date(now) };
    const bounds = [last30.from.toISOString(), last30.to.toISOString()];
    const today = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate());
    const stats90 = { from: new Date(today - 89 * DAY_MS), to: new Date(now) };
    const overview = { from: new Date(today - 29 * DAY_MS), to: new Date(now) };
    const raw = (text: string, params: unknown[]) => () => sql.unsafe(text, params as never[]);
    const cases: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
      ["namespace usage, last 30 days", raw(REFERENCE_NAMESPACE_USAGE, [ACCOUNT, NAMESPACE, ...bounds]), () => namespaceUsage(sql, ACCOUNT, NAMESPACE, last30)],
      ["account usage, last 30 days", raw(REFERENCE_ACCOUNT_USAGE, [ACCOUNT, null, ...bounds]), () => accountUsage(sql, ACCOUNT, null, last30)],
      ["usage/daily, no grouping", raw(REFERENCE_DAILY_USAGE, [ACCOUNT, NAMESPACE, ...bounds, null]), () => dailyNamespaceUsage(sql, ACCOUNT, NAMESPACE, last30, null)],
      ["usage/daily by model", raw(REFERENCE_DAILY_USAGE, [ACCOUNT, NAMESPACE, ...bounds, "model"]), () => dailyNamespaceUsage(sql, ACCOUNT, NAMESPACE, last30, "model")],
      ["usage/daily by api_key", raw(REFERENCE_DAILY_USAGE, [ACCOUNT, NAMESPACE, ...bounds, "api_key"]), () => dailyNamespaceUsage(sql, ACCOUNT, NAMESPACE, last30, "api_key")],
      ["usage/daily by provider", raw(REFERENCE_DAILY_USAGE, [ACCOUNT, NAMESPACE, ...bounds, "provider"]), () => dailyNamespaceUsage(sql, ACCOUNT, NAMESPACE, last30, "provider")],
      [
        "console overview's usage reads, 30 days (aggregate, daily by model, daily by key, in parallel)",
        () => Promise.all([
          sql.unsafe(REFERENCE_NAMESPACE_USAGE, [ACCOUNT, NAMESPACE, overview.from.toISOString(), overview.to.toISOString()]),
          sql.unsafe(REFERENCE_DAILY_USAGE, [ACCOUNT, NAMESPACE, overview.from.toISOString(), overview.to.toISOString(), "model"]),
          sql.unsafe(REFERENCE_DAILY_USAGE, [ACCOUNT, NAMESPACE, overview.from.toISOString(), overview.to.toISOString(), "api_key"]),
        ]),
        () => Promise.all([
          namespaceUsage(sql, ACCOUNT, NAMESPACE, overview),
          dailyNamespaceUsage(sql, ACCOUNT, NAMESPACE, overview, "model"),
          dailyNamespaceUsage(sql, ACCOUNT, NAMESPACE, overview, "api_key"),
        ]),
      ],
      ["public statistics, 90 days (uncached)", raw(REFERENCE_PLATFORM_USAGE, [stats90.from, stats90.to]), () => platformUsageByDayAndModel(sql, stats90.from, stats90.to)],
      [
        "/v1/providers' last hour",
        raw(REFERENCE_PROVIDER_WINDOW, [new Date(now - 3_600_000), new Date(now - 60_000)]),
        () => providerRequestWindow(sql, new Date(now - 3_600_000), new Date(now - 60_000)),
      ],
    ];
    console.log("\n| read (one namespace, 1,000,000 records over 60 days) | records (before), ms | rollups (after), ms | speed-up |");
    console.log("|---|--:|--:|--:|");
    for (const [label, before, after] of cases) {
      const beforeMs = await timed(before);
      const afterMs = await timed(after);
      console.log(`| ${label} | ${beforeMs.toFixed(1)} | ${afterMs.toFixed(1)} | ${(beforeMs / afterMs).toFixed(0)}× |`);
    }
  } finally {
    await sql.end({ timeout: 5 });
    cleanupAll();
  }
}

await main();

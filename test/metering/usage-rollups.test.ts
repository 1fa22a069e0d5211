import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/db/connect-database";
import { WriteBuffer } from "../../src/db/batch/write-buffer";
import { ShardedWriteBuffer } from "../../src/db/batch/sharded-write-buffer";
import { createMeteringSink } from "../../src/metering/metering-sink";
import type { LedgerRow, RequestRow } from "../../src/metering/metering-rows";
import { accountUsage, dailyNamespaceUsage, namespaceUsage, type DailyUsageGrouping, type TimeWindow } from "../../src/db/queries/usage";
import { platformUsageByDayAndModel, providerRequestWindow } from "../../src/db/queries/stats";
import { maintainRequestPartitions } from "../../src/db/request-partitions";
import { createMigratedTestDatabase, type MigratedTestDatabase, BIGINT_AS_NUMBER } from "../support/test-database";
import { REFERENCE_ACCOUNT_USAGE, REFERENCE_DAILY_USAGE, REFERENCE_NAMESPACE_USAGE, REFERENCE_PLATFORM_USAGE, REFERENCE_PROVIDER_WINDOW } from "../support/usage-reference";

/**
 * The usage rollups (migrations 0034 and 0035: days and hours) answer exactly what the request records and ledger
 * entries answer. Random records (keys, OAuth grants, models, providers, statuses, streams,
 * cached and reasoning tokens, unknown charges, capabilities named twice, no namespace, no
 * model, no provider) go through the real metering writer: COPY flushes on two sharded
 * connections, the insert path, a flush whose rows had already committed, a record twice
 * in one batch, legacy billing-audit charges folded in by the backfill. Then every usage
 * statement is run over random windows — whole days, whole hours, mid-day and mid-hour
 * edges, one hour, one day, empty — and
 * compared with the statement it replaced, kept below as the reference over the records.
 *
 * Records are never changed after they are written (no statement updates a record's
 * charge, status or tokens: grep sql/), so there is no late settlement to follow.
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

let sql: Sql;
let database: MigratedTestDatabase;
const NOW = Date.now();
/** The records span the last 75 days and a few minutes into the future (another instance's clock). */
const SPAN_START = NOW - 75 * DAY_MS;

/** A deterministic generator, so a failure can be replayed (the seed is in the test's name). */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (below: number) => Math.floor(next() * below);
  const pick = <T,>(values: readonly T[]): T => values[int(values.length)]!;
  return { next, int, pick };
}
const random = generator(20261128);

const ACCOUNTS = ["acct_a", "acct_b", "acct_c"];
const NAMESPACES: Record<string, (string | null)[]> = { acct_a: ["ns_a1", "ns_a2", null], acct_b: ["ns_b1"], acct_c: ["ns_c1", "ns_c2"] };
const MODELS = ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "google/gemini-2.5-flash", "deepseek/deepseek-chat", null];
const PROVIDERS = ["openai", "anthropic", "google", "deepinfra", null];
const STATUSES = ["succeeded", "succeeded", "succeeded", "failed", "cancelled", "client_closed"];
const CAPABILITIES = ["tools", "reasoning", "image_input", "web_search", "structured_outputs"];

let recordCount = 0;

function randomTime(): number {
  const roll = random.next();
  // A share at exact midnights and minute starts: the edges of whole days and minutes.
  if (roll < 0.05) return Math.floor((SPAN_START + random.int(75) * DAY_MS) / DAY_MS) * DAY_MS;
  // Hour starts and the millisecond before one: the edges of whole hours (migration 0035).
  if (roll < 0.08) return Math.floor((SPAN_START + random.int(75 * 24) * HOUR_MS) / HOUR_MS) * HOUR_MS - random.int(2);
  if (roll < 0.15) return Math.floor((NOW - random.int(90 * 60_000)) / 60_000) * 60_000;
  if (roll < 0.35) return NOW - random.int(2 * 3600_000); // the providers' hour and around it
  if (roll < 0.37) return NOW + random.int(5 * 60_000); // a record from a clock ahead
  return SPAN_START + random.int(75 * DAY_MS);
}

function randomRecord(at = randomTime()): RequestRow {
  const id = `rq_${String(++recordCount).padStart(6, "0")}_${random.int(1e9)}`;
  const account = random.pick(ACCOUNTS);
  const status = random.pick(STATUSES);
  const prompt = random.int(5000);
  const completion = random.int(2000);
  const byOauth = random.next() < 0.15;
  const charge = random.next() < 0.08 ? null : random.next() < 0.2 ? 0 : random.int(100_000);
  const capabilities = Array.from({ length: random.int(4) }, () => random.pick(CAPABILITIES));
  return {
    id, request_id: `q_${id}`, account_id: account, namespace_id: random.pick(NAMESPACES[account]!),
    api_key_id: byOauth ? null : `key_${account}_${random.int(4)}`, oauth_token_id: byOauth ? `og_${random.int(3)}` : null,
    status, status_code: status === "succeeded" ? 200 : 502, billing_status: charge === null ? "unknown" : "computed",
    model_id: random.pick(MODELS), provider_id: random.pick(PROVIDERS), provider_model_id: "m", routing_profile: "balanced",
    funding_source: random.next() < 0.1 ? "byok" : "cloud_credit", streamed: random.next() < 0.5, finish_reason: "stop", first_token_kind: "text",
    prompt_tokens: prompt, completion_tokens: completion, reasoning_tokens: random.int(completion + 1),
    cache_read_tokens: random.int(prompt + 1), cache_write_tokens: random.int(100), final_charge_micro_usd: charge,
    request_duration_ms: 100, upstream_duration_ms: 90, generation_duration_ms: null, ttft_ms: null, used_capabilities: capabilities,
    usage_evidence: { source: "provider_reported", effective_usage: {}, raw_usage: {}, estimator: { chars_per_token: 4, version: "t" }, raw_usage_frames: [] } as never,
    warnings: [], attempts: [], charge_audit: null,
    created_at: new Date(at).toISOString(), completed_at: new Date(at + 1000).toISOString(),
  };
}

function ledgerFor(record: RequestRow): LedgerRow | undefined {
  if (record.final_charge_micro_usd === 0) return undefined;
  return {
    id: `le_${record.id}`, account_id: record.account_id, namespace_id: record.namespace_id, request_record_id: record.id,
    kind: record.final_charge_micro_usd === null ? "pending_debit_recovery" : "usage",
    amount_micro_usd: -(record.final_charge_micro_usd ?? 0), released_micro_usd: 0, lease_id: null,
  };
}

/** Writes records and their ledger entries through a fresh metering sink, as settleRequest hands them over. */
async function writeThroughSink(records: readonly RequestRow[], options: { copy: boolean; shards: number; batchRows?: number }): Promise<void> {
  const buffer = options.shards > 1
    ? new ShardedWriteBuffer(sql, options.shards, { flushIntervalMs: 60_000, retryBaseMs: 1, maxBatchRows: options.batchRows ?? 1_000 })
    : new WriteBuffer(sql, { flushIntervalMs: 60_000, retryBaseMs: 1, maxBatchRows: options.batchRows ?? 1_000 });
  const sink = createMeteringSink(buffer, { copy: options.copy });
  for (const record of records) {
    sink.request(record);
    const ledger = ledgerFor(record);
    if (ledger) sink.ledger(ledger);
  }
  await buffer.flush();
  await buffer.stop();
  expect(buffer.stats().buffered).toEqual({ requests: 0, ledger_entries: 0 });
}

/** A random window: whole days or hours, a mid-day or mid-hour edge or two, inside one hour or day, around now, or empty. */
function randomWindow(): TimeWindow {
  const kind = random.int(9);
  const hourStart = (at: number) => Math.floor(at / HOUR_MS) * HOUR_MS;
  const dayStart = (offsetDays: number) => Math.floor((NOW - offsetDays * DAY_MS) / DAY_MS) * DAY_MS;
  const anyTime = () => SPAN_START - DAY_MS + random.int(78 * DAY_MS);
  switch (kind) {
    case 0: { // whole days
      const from = dayStart(random.int(80));
      return { from: new Date(from), to: new Date(from + (1 + random.int(40)) * DAY_MS) };
    }
    case 1: { // the default: the last 30 days ending now
      return { from: new Date(NOW - 30 * DAY_MS), to: new Date(NOW) };
    }
    case 2: { // within one day
      const from = anyTime();
      return { from: new Date(from), to: new Date(from + random.int(6 * 3600_000) + 1) };
    }
    case 3: { // ending after now: records from a clock ahead included
      return { from: new Date(anyTime()), to: new Date(NOW + 10 * 60_000) };
    }
    case 4: { // empty
      const at = anyTime();
      return { from: new Date(at), to: new Date(at) };
    }
    case 5: { // whole hours, across a midnight or not
      const from = hourStart(anyTime());
      return { from: new Date(from), to: new Date(from + (1 + random.int(60)) * HOUR_MS) };
    }
    case 6: { // within one hour, or across one hour's end
      const from = anyTime();
      return { from: new Date(from), to: new Date(from + random.int(2 * HOUR_MS) + 1) };
    }
    case 7: { // one edge on an hour, the other mid-hour, a few days apart
      const from = hourStart(anyTime());
      const to = from + random.int(4 * DAY_MS) + 1;
      return random.next() < 0.5 ? { from: new Date(from), to: new Date(to) } : { from: new Date(from + 1 + random.int(HOUR_MS - 1)), to: new Date(hourStart(to)) };
    }
    default: { // both edges mid-day
      const a = anyTime();
      const b = anyTime();
      return { from: new Date(Math.min(a, b)), to: new Date(Math.max(a, b) + 1) };
    }
  }
}

async function expectSameAnswers(windows: number): Promise<void> {
  for (let i = 0; i < windows; i++) {
    const window = randomWindow();
    const bounds = [window.from.toISOString(), window.to.toISOString()];
    const label = `${bounds[0]} → ${bounds[1]}`;
    for (const account of ACCOUNTS) {
      for (const namespace of NAMESPACES[account]!) {
        if (namespace === null) continue;
        const [reference] = await sql.unsafe(REFERENCE_NAMESPACE_USAGE, [account, namespace, ...bounds]);
        expect({ label, answer: await namespaceUsage(sql, account, namespace, window) }).toEqual({ label, answer: reference as never });
        for (const grouping of ["model", "api_key", "provider", null] as DailyUsageGrouping[]) {
          const rows = await sql.unsafe(REFERENCE_DAILY_USAGE, [account, namespace, ...bounds, grouping]);
          expect({ label, grouping, answer: await dailyNamespaceUsage(sql, account, namespace, window, grouping) }).toEqual({ label, grouping, answer: [...rows] as never });
        }
      }
      for (const namespace of [null, ...NAMESPACES[account]!.filter((ns) => ns !== null)]) {
        const [reference] = await sql.unsafe(REFERENCE_ACCOUNT_USAGE, [account, namespace, ...bounds]);
        expect({ label, namespace, answer: await accountUsage(sql, account, namespace, window) }).toEqual({ label, namespace, answer: reference as never });
      }
    }
    const platform = await sql.unsafe(REFERENCE_PLATFORM_USAGE, [window.from, window.to]);
    expect({ label, answer: await platformUsageByDayAndModel(sql, window.from, window.to) }).toEqual({ label, answer: [...platform] as never });
  }
}

async function expectSameProviderWindows(): Promise<void> {
  for (let i = 0; i < 12; i++) {
    // The hour before a moment around now, at any millisecond; the last minute of it.
    const now = NOW - 3 * 60_000 + random.int(6 * 60_000);
    const windowStart = new Date(now - 3600_000);
    const minuteStart = new Date(now - 60_000);
    const reference = await sql.unsafe(REFERENCE_PROVIDER_WINDOW, [windowStart, minuteStart]);
    const answer = (await providerRequestWindow(sql, windowStart, minuteStart)).sort((a, b) => (a.provider_id < b.provider_id ? -1 : 1));
    expect({ now, answer }).toEqual({ now, answer: [...reference] as never });
  }
}

/** Every rollup row as the writer left it, for comparison with a rebuild from the records. */
async function rollupContents() {
  const order = (table: string, key: string) => sql.unsafe(`select * from ${table} order by ${key}`);
  return {
    days: await order("request_usage_days", "account_id, namespace_id, day, api_key_id, model_id, provider_id"),
    capabilities: await order("request_capability_days", "account_id, namespace_id, day, capability"),
    minutes: await sql.unsafe("select * from provider_request_minutes where minute >= date_trunc('minute', now()) - interval '1 day' order by minute, provider_id, account_id"),
    ledger: await order("ledger_usage_days", "account_id, namespace_id, day, kind"),
    hours: await order("request_usage_hours", "account_id, namespace_id, hour, api_key_id, model_id, provider_id"),
    capabilityHours: await order("request_capability_hours", "account_id, namespace_id, hour, capability"),
  };
}

beforeAll(async () => {
  database = await createMigratedTestDatabase({ types: BIGINT_AS_NUMBER });
  sql = database.sql;
  for (const account of ACCOUNTS) {
    await sql.unsafe("insert into accounts (id, email) values ($1, $1 || '@example.test')", [account]);
    await sql.unsafe("insert into wallets (account_id, balance_micro_usd) values ($1, 1000000000)", [account]);
  }
  // Months for every record (and the default partition for none of them).
  await maintainRequestPartitions(sql, undefined, new Date(SPAN_START));
  await maintainRequestPartitions(sql, undefined, new Date(NOW));
});
afterAll(() => database.close({ timeout: 1 }));

describe("usage rollups kept by the metering writer", () => {
  test("records written by COPY on two connections, by the insert path, twice, and twice in one batch: every answer is the records'", async () => {
    // Legacy records: a billing-audit charge (before 0030) that wins over the record's,
    // folded in by the migration's backfill (usage_rollups_rebuild).
    const legacy = Array.from({ length: 40 }, () => randomRecord());
    await writeThroughSink(legacy, { copy: true, shards: 1 });
    for (const record of legacy.filter((_, index) => index % 2 === 0)) {
      await sql.unsafe("insert into billing_audit (request_record_id, account_id, namespace_id, charge_micro_usd, pricing, buckets) values ($1, $2, $3, $4, '{}', '{}')", [
        record.id, record.account_id, record.namespace_id, 7 + random.int(5000),
      ]);
    }
    await sql`select usage_rollups_rebuild(null)`;

    // First attempts by COPY, rows split by account over two connections, in small flushes.
    const copied = Array.from({ length: 2_500 }, () => randomRecord());
    await writeThroughSink(copied, { copy: true, shards: 2, batchRows: 300 });
    // The insert path (the embedded database's, and every retry's).
    const inserted = Array.from({ length: 800 }, () => randomRecord());
    await writeThroughSink(inserted, { copy: false, shards: 1, batchRows: 250 });
    // A flush whose rows had committed already (its acknowledgement lost): COPY fails on
    // them and the retry statement inserts only the new ones, counted once.
    const fresh = Array.from({ length: 300 }, () => randomRecord());
    await writeThroughSink([...copied.slice(0, 200), ...fresh, ...inserted.slice(0, 100)], { copy: true, shards: 1 });
    // The same record twice in one insert batch counts once.
    const twice = randomRecord();
    await writeThroughSink([twice, twice], { copy: false, shards: 1 });

    const [counted] = await sql.unsafe("select count(*)::int as count from requests");
    expect(counted!.count).toBe(legacy.length + copied.length + inserted.length + fresh.length + 1);
    await expectSameAnswers(40);
    await expectSameProviderWindows();

    // The writer's sums are the backfill's, row for row.
    const written = await rollupContents();
    await sql`select usage_rollups_rebuild(null)`;
    expect(await rollupContents()).toEqual(written);
  }, 120_000);

  test("retention drops a month's days and hours from the rollups with its partition; the answers stay the records'", async () => {
    const dropped = await maintainRequestPartitions(sql, 2, new Date(NOW + 0));
    // Whether a month went depends on the day this runs: the answers must match either way.
    expect(Array.isArray(dropped.dropped)).toBe(true);
    const [oldest] = await sql.unsafe("select min(day)::text as day from request_usage_days");
    const [first] = await sql.unsafe("select min(created_at at time zone 'UTC')::date::text as day from requests");
    expect(oldest!.day).toBe(first!.day);
    // The hours go with their days: none before the oldest record's day, none of a kept day missing.
    const [oldestHour] = await sql.unsafe("select (min(hour) at time zone 'UTC')::date::text as day from request_usage_hours");
    expect(oldestHour!.day).toBe(first!.day);
    await expectSameAnswers(15);

    // One month kept: a month always goes now (the records span 75 days), days and hours with it.
    expect((await maintainRequestPartitions(sql, 1, new Date(NOW))).dropped.length).toBeGreaterThan(0);
    const [kept] = await sql.unsafe(`select min(created_at at time zone 'UTC')::date::text as day,
      (select min(day)::text from request_usage_days) as first_day,
      (select (min(hour) at time zone 'UTC')::date::text from request_usage_hours) as first_hour_day from requests`);
    expect({ ...kept }).toEqual({ day: kept!.day, first_day: kept!.day, first_hour_day: kept!.day });
    await expectSameAnswers(10);
  }, 60_000);
});

/**
 * `bun test/bench/write-path.ts [rows]`: throughput of the metering write path — request-like
 * rows (12 columns, one jsonb, two secondary indexes like `requests`) through a
 * WriteBuffer with its defaults (25 ms interval, 1,000 rows per statement) into a real
 * PostgreSQL: TEST_DATABASE_URL's cluster when set, else a throwaway cluster started like
 * test/run-tests.ts does (fsync off). Runs two statement shapes, `unnest` of parallel
 * arrays and `jsonb_to_recordset` of one JSON array (what sql/queries/metering.sql
 * uses), and prints rows/second for each. Not a test: the target (≥ 20,000 request
 * records per second) is read by a person, on this machine.
 *
 * Two loads per shape: bursts of 500 rows per event-loop turn, faster than any database
 * takes them (the drain rate, first enqueue to last commit), and a steady 20,000 rows/s
 * (does the buffer keep up: small max buffered, last commit soon after the last enqueue).
 */
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { WriteBuffer, type BatchTable } from "../../src/metering/write-buffer";
import { cleanupAll } from "./children";
import { startDatabase } from "./switchyard-process";

const ROWS = Number(process.argv[2] ?? 100_000);
const BURST = 500;
/** The target rate, offered 20 rows per millisecond. */
const PACED_PER_SECOND = 20_000;

interface RequestLikeRow {
  id: string;
  requestId: string;
  accountId: string;
  namespaceId: string;
  modelId: string;
  providerId: string;
  status: string;
  statusCode: number;
  promptTokens: number;
  completionTokens: number;
  costMicroUsd: number;
  usageEvidence: Record<string, unknown>;
}

const COLUMNS = `id text primary key, request_id text not null, account_id text not null, namespace_id text,
  model_id text, provider_id text, status text not null, status_code integer not null,
  prompt_tokens integer not null, completion_tokens integer not null, cost_micro_usd bigint not null,
  usage_evidence jsonb not null, created_at timestamptz not null default now()`;

async function createTable(sql: Sql, name: string): Promise<void> {
  await sql.unsafe(`create table ${name} (${COLUMNS})`);
  await sql.unsafe(`create index ${name}_namespace_created on ${name} (namespace_id, created_at desc, id desc)`);
  await sql.unsafe(`create index ${name}_account_created on ${name} (account_id, created_at desc)`);
}

function unnestTable(name: string): BatchTable<RequestLikeRow> {
  const statement = `insert into ${name} (id, request_id, account_id, namespace_id, model_id, provider_id, status,
      status_code, prompt_tokens, completion_tokens, cost_micro_usd, usage_evidence)
    select id, request_id, account_id, namespace_id, model_id, provider_id, status,
      status_code, prompt_tokens, completion_tokens, cost_micro_usd, usage_evidence::jsonb
      from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                  $8::int[], $9::int[], $10::int[], $11::int8[], $12::text[])
        as r(id, request_id, account_id, namespace_id, model_id, provider_id, status,
             status_code, prompt_tokens, completion_tokens, cost_micro_usd, usage_evidence)
    on conflict (id) do nothing`;
  return {
    name,
    async write(sql, rows) {
      await sql.unsafe(statement, [
        rows.map((r) => r.id),
        rows.map((r) => r.requestId),
        rows.map((r) => r.accountId),
        rows.map((r) => r.namespaceId),
        rows.map((r) => r.modelId),
        rows.map((r) => r.providerId),
        rows.map((r) => r.status),
        rows.map((r) => r.statusCode),
        rows.map((r) => r.promptTokens),
        rows.map((r) => r.completionTokens),
        rows.map((r) => r.costMicroUsd),
        rows.map((r) => JSON.stringify(r.usageEvidence)),
      ], { prepare: true });
    },
  };
}

function recordsetTable(name: string): BatchTable<RequestLikeRow> {
  const statement = `insert into ${name} (id, request_id, account_id, namespace_id, model_id, provider_id, status,
      status_code, prompt_tokens, completion_tokens, cost_micro_usd, usage_evidence)
    select id, request_id, account_id, namespace_id, model_id, provider_id, status,
      status_code, prompt_tokens, completion_tokens, cost_micro_usd, usage_evidence
      from jsonb_to_recordset($1::text::jsonb) as r(id text, request_id text, account_id text, namespace_id text,
        model_id text, provider_id text, status text, status_code integer, prompt_tokens integer,
        completion_tokens integer, cost_micro_usd bigint, usage_evidence jsonb)
    on conflict (id) do nothing`;
  return {
    name,
    async write(sql, rows) {
      const json = JSON.stringify(
        rows.map((r) => ({
          id: r.id, request_id: r.requestId, account_id: r.accountId, namespace_id: r.namespaceId,
          model_id: r.modelId, provider_id: r.providerId, status: r.status, status_code: r.statusCode,
          prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens,
          cost_micro_usd: r.costMicroUsd, usage_evidence: r.usageEvidence,
        })),
      );
      // `$1::text::jsonb`, not `$1::jsonb`: postgres.js JSON-encodes a jsonb parameter, so a
      // pre-serialised string would arrive as one JSON string, not an array.
      await sql.unsafe(statement, [json], { prepare: true });
    },
  };
}

function requestLikeRow(i: number, run: string): RequestLikeRow {
  const prompt = 200 + (i % 1_800);
  const completion = 20 + (i % 700);
  return {
    id: `req_${run}_${i.toString(36).padStart(8, "0")}`,
    requestId: `client-${i}`,
    accountId: `acct_${i % 500}`,
    namespaceId: `ns_${i % 1_500}`,
    modelId: i % 3 === 0 ? "openai/gpt-4.1-mini" : "anthropic/claude-sonnet-4",
    providerId: i % 3 === 0 ? "openai" : "anthropic",
    status: i % 50 === 0 ? "failed" : "succeeded",
    statusCode: i % 50 === 0 ? 502 : 200,
    promptTokens: prompt,
    completionTokens: completion,
    costMicroUsd: prompt * 3 + completion * 15,
    usageEvidence: {
      source: "provider",
      attempts: [{ provider: i % 3 === 0 ? "openai" : "anthropic", input_tokens: prompt, output_tokens: completion, cache_read_tokens: i % 7 === 0 ? 128 : 0 }],
    },
  };
}

interface Result {
  rowsPerSecond: number;
  maxBuffered: number;
  /** From the last enqueue to the last commit. */
  tailMs: number;
}

/**
 * Enqueues ROWS rows, `perTick` rows per turn of the event loop, a turn every `tickMs`
 * (0: back to back, which measures the drain rate), and waits for the last commit.
 */
async function measure(sql: Sql, table: BatchTable<RequestLikeRow>, perTick: number, tickMs: number): Promise<Result> {
  const writes = new WriteBuffer(sql);
  const enqueue = writes.register(table);
  const rows = Array.from({ length: ROWS }, (_, i) => requestLikeRow(i, table.name));
  let maxBuffered = 0;
  const started = performance.now();
  for (let next = 0, tick = 1; next < ROWS; next += perTick, tick++) {
    for (let i = next; i < Math.min(next + perTick, ROWS); i++) {
      if (!enqueue(rows[i]!)) throw new Error("the buffer refused a row");
    }
    maxBuffered = Math.max(maxBuffered, writes.stats().buffered[table.name] ?? 0);
    const wait = started + tick * tickMs - performance.now();
    await (wait > 0 ? Bun.sleep(wait) : new Promise((resolve) => setImmediate(resolve)));
  }
  const lastEnqueue = performance.now();
  while ((writes.stats().written[table.name] ?? 0) < ROWS) await Bun.sleep(1);
  const finished = performance.now();
  await writes.stop();
  const [count] = await sql.unsafe(`select count(*)::int as n from ${table.name}`);
  if (Number(count?.n) !== ROWS) throw new Error(`${table.name} holds ${String(count?.n)} rows, expected ${ROWS}`);
  return { rowsPerSecond: (ROWS * 1_000) / (finished - started), maxBuffered, tailMs: finished - lastEnqueue };
}

async function main(): Promise<void> {
  let url = process.env.TEST_DATABASE_URL;
  let kind = "TEST_DATABASE_URL";
  if (url === undefined) {
    const database = await startDatabase();
    kind = database.kind;
    url = await database.create("write_path");
    if (url === undefined) throw new Error("no PostgreSQL server binaries: this bench needs a real PostgreSQL");
  }
  const sql = postgres(url, { max: 4, onnotice: () => {}, prepare: true }) as unknown as Sql;
  try {
    console.log(`write path: ${ROWS} request-like rows (12 columns, jsonb, 2 indexes) through WriteBuffer defaults; ${kind}`);
    const loads = [
      { load: "as fast as enqueued", perTick: BURST, tickMs: 0 },
      { load: `paced ${PACED_PER_SECOND.toLocaleString("en-US")}/s`, perTick: PACED_PER_SECOND / 1_000, tickMs: 1 },
    ];
    for (const [shape, make] of [["unnest", unnestTable], ["jsonb_to_recordset", recordsetTable]] as const) {
      for (const { load, perTick, tickMs } of loads) {
        const name = `bench_${shape}_${Date.now()}`;
        await createTable(sql, name);
        const result = await measure(sql, make(name), perTick, tickMs);
        console.log(
          `${shape.padEnd(19)} ${load.padEnd(20)} ${Math.round(result.rowsPerSecond).toLocaleString("en-US").padStart(7)} rows/s` +
            `   max buffered ${String(result.maxBuffered).padStart(6)}   last commit ${result.tailMs.toFixed(0)} ms after last enqueue`,
        );
        await sql.unsafe(`drop table ${name}`);
      }
    }
  } finally {
    await sql.end({ timeout: 5 });
    cleanupAll();
  }
}

await main();

/**
 * `bun test/bench/write-path.ts [requests]`: throughput of the metering write path as
 * production runs it — the real schema (migrations), the real sink (createMeteringSink)
 * and write-buffer defaults, and rows made by settleRequest for a typical request: one
 * request record (with its usage frame and charge audit) and one ledger entry that debits
 * a wallet. Into a real PostgreSQL: TEST_DATABASE_URL's cluster when set, else a
 * throwaway cluster started like test/run-tests.ts does (fsync off). Three shapes: COPY
 * on the default number of write connections (production on PostgreSQL), COPY on one,
 * and the idempotent insert on one (the embedded database; also every retry). Not a
 * test: the target (≥ 50,000 request records per second on ONE connection, draining) is
 * read by a person, on this machine; the last line says how the run compares.
 *
 * The write buffers flush every METERING_FLUSH_INTERVAL_MS, the server's setting (its
 * default unless the variable is set here), so intervals can be compared run by run. With
 * PG_STATEMENTS=1 (the bench cluster then loads pg_stat_statements) each line is followed
 * by PostgreSQL's statements in that load: calls and time per request record.
 *
 * Three loads per shape: bursts of 500 requests per event-loop turn, faster than any
 * database takes them (the drain rate, first enqueue to last commit); a steady
 * 50,000 requests/s (does the buffer keep up: small max buffered, last commit soon after
 * the last enqueue); and a steady 2,000 requests/s, a gateway's own rate here, where a
 * flush carries few records and its fixed cost shows per record. Each line also gives the CPU per request record of this process
 * (settling, encoding, the driver) and of the database cluster: on a shared machine the
 * rates move with the neighbours' load, CPU per record much less; with a core each,
 * one connection drains about 1,000,000 / max(gateway, PostgreSQL) µs records per second.
 */
import { readFileSync, readdirSync } from "node:fs";
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { migrate } from "../../src/db/migrate";
import { createMeteringSink } from "../../src/metering/metering-sink";
import type { MeteringSink } from "../../src/metering/metering-rows";
import { settleRequest } from "../../src/metering/settle-request";
import { ShardedWriteBuffer } from "../../src/db/batch/sharded-write-buffer";
import { loadConfig } from "../../src/config";
import { outcomeFor } from "./settled-outcome";
import { cleanupAll } from "./children";
import { startDatabase } from "./switchyard-process";

const REQUESTS = Number(process.argv[2] ?? 100_000);
const BURST = 500;
const WARMUP_REQUESTS = 40_000;
/** The target rate, offered 50 requests per millisecond. */
const PACED_PER_SECOND = 50_000;
/**
 * A gateway's own rate on a machine like this one (about 2,000 requests/s): batches are
 * small (a flush every 25 ms carries a few dozen records), so what each flush costs besides
 * its rows (its statements, the rollups' upserts) weighs on every record.
 */
const GATEWAY_PACED_PER_SECOND = 2_000;
/** The server's flush interval: its default, or METERING_FLUSH_INTERVAL_MS when set. */
const FLUSH_INTERVAL_MS = loadConfig({ METERING_FLUSH_INTERVAL_MS: process.env.METERING_FLUSH_INTERVAL_MS }).meteringFlushIntervalMs;
/** Request records per second on one connection, draining. */
const TARGET_PER_SECOND = 50_000;
const ACCOUNTS = 50;
/** ONLY="COPY, 1 connection as fast": run the shapes and loads whose name contains it. */
const ONLY = process.env.ONLY;

interface Result {
  requestsPerSecond: number;
  maxBuffered: number;
  /** From the last enqueue to the last commit. */
  tailMs: number;
  /** CPU µs per request record: this process (settling, rendering, the driver) and the database's processes. */
  gatewayCpuUs: number;
  postgresCpuUs: number;
}

/** Linux reports CPU time in clock ticks of 1/100 s. */
const TICKS_PER_SECOND = 100;

/** utime + stime of a process, all its threads, in clock ticks (0 once it has ended). */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** The parent pid of a process (field 4 of /proc/<pid>/stat). */
function parentPid(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/**
 * CPU ticks of the database cluster: its postmaster and every process it started (the
 * backends, the WAL writer, the checkpointer, autovacuum), not the other clusters that
 * share this machine. Backends that ended between two samples are not counted, so the
 * write connections are opened before the first sample.
 */
function clusterTicks(postmaster: number): number {
  let total = cpuTicks(postmaster);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentPid(Number(entry)) === postmaster) total += cpuTicks(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/**
 * Settles REQUESTS requests, `perTick` per turn of the event loop, a turn every `tickMs`
 * (0: back to back, which measures the drain rate), and waits for the last commit.
 */
async function measure(sql: Sql, postmaster: number, copy: boolean, connections: number, perTick: number, tickMs: number, requests = REQUESTS): Promise<Result> {
  const writes = new ShardedWriteBuffer(sql, connections, { flushIntervalMs: FLUSH_INTERVAL_MS });
  const sink: MeteringSink = createMeteringSink(writes, { copy });
  const outcomes = Array.from({ length: requests }, (_, i) => outcomeFor(i, ACCOUNTS));
  const [before] = await sql.unsafe("select count(*)::int as n from requests");
  let maxBuffered = 0;
  // Every write connection open before the first sample (see clusterTicks).
  await Promise.all(Array.from({ length: connections + 1 }, () => sql.begin((tx) => tx`select pg_sleep(0.01)`)));
  const gatewayBefore = cpuTicks(process.pid);
  const postgresBefore = clusterTicks(postmaster);
  const started = performance.now();
  for (let next = 0, tick = 1; next < requests; next += perTick, tick++) {
    for (let i = next; i < Math.min(next + perTick, requests); i++) settleRequest(outcomes[i]!, sink);
    maxBuffered = Math.max(maxBuffered, writes.stats().buffered.requests ?? 0);
    const wait = started + tick * tickMs - performance.now();
    await (wait > 0 ? Bun.sleep(wait) : new Promise((resolve) => setImmediate(resolve)));
  }
  const lastEnqueue = performance.now();
  // Resolves at the last commit (polling the counters instead costs this process CPU that is not the writer's).
  await writes.whenWritten();
  const finished = performance.now();
  const stats = writes.stats();
  if (Object.values(stats.rejected).some((n) => n > 0)) throw new Error("the buffer refused rows");
  const written = Object.values(stats.written).reduce((sum, n) => sum + n, 0);
  // A record and a ledger entry per request (the outcomes made here are all charged).
  if (written !== requests * 2) throw new Error(`${written} rows written, expected ${requests * 2}`);
  const cpuUs = (ticks: number) => (ticks * 1_000_000) / TICKS_PER_SECOND / requests;
  const gatewayCpuUs = cpuUs(cpuTicks(process.pid) - gatewayBefore);
  const postgresCpuUs = cpuUs(clusterTicks(postmaster) - postgresBefore);
  await writes.stop();
  const [after] = await sql.unsafe("select count(*)::int as n from requests");
  if (Number(after?.n) - Number(before?.n) !== requests) throw new Error(`requests grew by ${Number(after?.n) - Number(before?.n)}, expected ${requests}`);
  return { requestsPerSecond: (requests * 1_000) / (finished - started), maxBuffered, tailMs: finished - lastEnqueue, gatewayCpuUs, postgresCpuUs };
}

const PG_STATEMENTS = process.env.PG_STATEMENTS === "1";

/** PostgreSQL's statements since the last reset, by time: calls per 1,000 request records, and µs per record (execution and planning; a COPY's also waits for its rows). */
async function printStatements(sql: Sql): Promise<void> {
  const rows = await sql.unsafe<{ calls: string; ms: number; query: string }[]>(
    `select calls, total_exec_time + total_plan_time as ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) as query
       from pg_stat_statements where query not like '%pg_stat_statements%' and query not like 'select count(*)%' and query not like 'select pg_sleep%' order by ms desc limit 8`,
  );
  const per = REQUESTS / 1_000;
  for (const row of rows) console.log(`    ${(Number(row.calls) / per).toFixed(1).padStart(7)} calls per 1,000 records ${(row.ms / per).toFixed(1).padStart(7)} µs per record   ${row.query}`);
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
    await migrate(sql);
    const [backend] = await sql.unsafe("select pg_backend_pid() as pid");
    const postmaster = parentPid(Number(backend?.pid));
    for (let a = 0; a < ACCOUNTS; a++) {
      await sql.unsafe("insert into accounts (id, email) values ($1, $2) on conflict do nothing", [`acct_bench_${a}`, `bench-${a}@example.test`]);
      await sql.unsafe("insert into wallets (account_id, balance_micro_usd) values ($1, 1000000000000) on conflict do nothing", [`acct_bench_${a}`]);
    }
    if (PG_STATEMENTS) await sql.unsafe("create extension if not exists pg_stat_statements");
    console.log(
      `write path: ${REQUESTS.toLocaleString("en-US")} requests (a record, with its usage frame and charge audit, and a ledger entry each) through the metering sink, ` +
        `flushed every ${FLUSH_INTERVAL_MS} ms; ${kind}`,
    );
    const loads = [
      { load: "as fast as settled", perTick: BURST, tickMs: 0 },
      { load: `paced ${PACED_PER_SECOND.toLocaleString("en-US")}/s`, perTick: PACED_PER_SECOND / 1_000, tickMs: 1 },
      { load: `paced ${GATEWAY_PACED_PER_SECOND.toLocaleString("en-US")}/s`, perTick: GATEWAY_PACED_PER_SECOND / 1_000, tickMs: 1 },
    ];
    const defaultConnections = loadConfig({}).meteringWriteConnections;
    // Untimed: settling and rendering rows need a few seconds before the JIT compiles them.
    await measure(sql, postmaster, true, defaultConnections, BURST, 0, WARMUP_REQUESTS);
    await measure(sql, postmaster, false, 1, BURST, 0, WARMUP_REQUESTS / 4);
    const shapes = [
      { shape: `COPY, ${defaultConnections} connections (the default)`, copy: true, connections: defaultConnections },
      { shape: "COPY, 1 connection", copy: true, connections: 1 },
      { shape: "insert, 1 connection (embedded database)", copy: false, connections: 1 },
    ];
    let target: Result | undefined;
    for (const { shape, copy, connections } of shapes) {
      for (const { load, perTick, tickMs } of loads) {
        if (ONLY !== undefined && !`${shape} ${load}`.includes(ONLY)) continue;
        if (PG_STATEMENTS) await sql.unsafe("select pg_stat_statements_reset()");
        const result = await measure(sql, postmaster, copy, connections, perTick, tickMs);
        if (copy && connections === 1 && tickMs === 0) target = result;
        console.log(
          `${shape.padEnd(42)} ${load.padEnd(20)} ${Math.round(result.requestsPerSecond).toLocaleString("en-US").padStart(7)} request records/s` +
            `   CPU µs/record: gateway ${result.gatewayCpuUs.toFixed(1).padStart(5)}, PostgreSQL ${result.postgresCpuUs.toFixed(1).padStart(5)}` +
            `   max buffered ${String(result.maxBuffered).padStart(6)}   last commit ${result.tailMs.toFixed(0)} ms after last enqueue`,
        );
        if (PG_STATEMENTS) await printStatements(sql);
      }
    }
    if (target !== undefined) {
      const rate = Math.round(target.requestsPerSecond).toLocaleString("en-US");
      const capacity = Math.round(1_000_000 / Math.max(target.gatewayCpuUs, target.postgresCpuUs)).toLocaleString("en-US");
      console.log(
        `target ≥ ${TARGET_PER_SECOND.toLocaleString("en-US")} request records/s on one connection, draining: ${target.requestsPerSecond >= TARGET_PER_SECOND ? "met" : "missed"} (${rate}/s;` +
          ` ${capacity}/s by CPU per record, with a core each for the gateway and PostgreSQL)`,
      );
    }
  } finally {
    await sql.end({ timeout: 5 });
    cleanupAll();
  }
}

await main();

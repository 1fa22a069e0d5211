/**
 * One hot counter key under load: budgets and rate limits (src/admission/policy-counters.ts)
 * driven straight against a throwaway PostgreSQL, with no gateway around them.
 *
 *   npx bun test/bench/admission-hot-key.ts [mode] [seconds] [callers] [both|budget|rate]
 *
 * Every mode goes through `PolicyCounters`, as the gateway does: `leased` admits from
 * leases of room (counter-leases.ts, the gateway's default), `batched` (the default here)
 * group-commits admissions and settlements of the key, `single` makes one database call
 * per admission and one per settlement (batches of one, as before group commit).
 * `callers` concurrent callers (default 64) each
 * admit and settle in a loop, all on one key with a budget of 10^15 micro-USD a day and a
 * rate limit of 10^9 requests a minute, so no limit is ever reached. Every 10 seconds it
 * prints admissions per second, CPU per admission (PostgreSQL's processes, read from
 * /proc, and this process), database calls per admission, and the dead / HOT-updated row
 * versions, the size in pages and the blocks touched per admission of the counter tables. The machine may be shared: compare CPU per admission,
 * not rates.
 */
import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";
import { isRefusal } from "../../src/admission/admission-check";
import { BUDGET_WINDOWS } from "../../src/admission/budget-windows";
import { DEFAULT_LEASE_SETTINGS } from "../../src/admission/counter-leases";
import { PolicyCounters } from "../../src/admission/policy-counters";
import type { Sql } from "../../src/db/connect-database";
import { migrate } from "../../src/db/migrate";
import { admitGrants, endGrants } from "../../src/db/queries/admission";
import { newId } from "../../src/ids";
import { bound, effective, request } from "../admission/admission-support";
import { BIGINT_AS_NUMBER } from "../support/test-database";
import { cleanupAll } from "./children";
import { startDatabase } from "./switchyard-process";

const mode = process.argv[2] ?? "batched";
const seconds = Number(process.argv[3] ?? 60);
const callers = Number(process.argv[4] ?? 64);
/** Which clauses the key has: `both` (default), `budget` or `rate`. */
const shape = process.argv[5] ?? "both";
const SLICE_MS = 10_000;
const TABLES = ["admission_counters", "budget_spend", "rate_limit_admissions", "admission_holds"];
const TICKS_PER_SEC = 100;

/** The user + system CPU of every process whose parent is `postmaster` (the backends, autovacuum, …), in µs. */
function postgresCpuMicros(postmaster: number): number {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the command (which may hold spaces) start at ") ": state, ppid, …; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pid = Number(entry);
    if (pid === postmaster || Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks / TICKS_PER_SEC) * 1e6;
}

function ownCpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

async function main(): Promise<void> {
  const database = await startDatabase();
  const url = await database.create("admission_hot_key");
  if (url === undefined) throw new Error("needs PostgreSQL server binaries (/usr/lib/postgresql)");
  let calls = 0;
  // The gateway's pool size (DATABASE_POOL_SIZE, 10 by default).
  const sql = postgres(url, { max: 10, onnotice: () => {}, types: BIGINT_AS_NUMBER, prepare: true, debug: () => void calls++ }) as unknown as Sql;
  const observer = postgres(url, { max: 1, onnotice: () => {}, types: BIGINT_AS_NUMBER }) as unknown as Sql;
  await migrate(sql);
  const [backend] = await observer`select pg_backend_pid() as pid`;
  const postmaster = Number(readFileSync(`/proc/${(backend as { pid: number }).pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);

  const budgetClause = bound("pol_hot_budget", "budget", { window: "day", limit_micro_usd: 1e15 });
  const rateClause = bound("pol_hot_rate", "rate_limit", { window_secs: 60, max_requests: 1e9 });
  const policy = effective(...(shape === "budget" ? [budgetClause] : shape === "rate" ? [rateClause] : [budgetClause, rateClause]));
  const budget = effective(budgetClause).budgets[0]!;
  const rate = effective(rateClause).rateLimits[0]!;
  const counters = new PolicyCounters(sql, { maxBatch: mode === "single" ? 1 : undefined, leases: mode === "leased" ? DEFAULT_LEASE_SETTINGS : undefined });
  counters.start();

  /** One request: admitted, then settled at a tenth of its ceiling. */
  const oneRequest = async () => {
    const grant = await counters.admit(request(policy, { costCeilingMicroUsd: 1_000, outputCeiling: 100 }));
    if (isRefusal(grant)) throw new Error(`refused: ${grant.message}`);
    await grant.settle({ chargeMicroUsd: 100 });
  };

  let admitted = 0;
  let running = true;
  const workers = Array.from({ length: callers }, async () => {
    while (running) {
      await oneRequest();
      admitted++;
    }
  });

  console.log(`${mode}: ${callers} callers on one key (${shape}: budget 10^15 µUSD/day, rate limit 10^9 requests/min), ${database.kind}`);
  console.log("slice  adm/s  pg µs/adm  own µs/adm  calls/adm  " + TABLES.map((t) => `${t} dead/hot/pages/blocks per adm`).join("  "));
  const lastBlocks = new Map<string, number>();
  let last = { at: performance.now(), admitted: 0, pg: postgresCpuMicros(postmaster), own: ownCpuMicros(), calls: 0 };
  for (let slice = 1; slice * SLICE_MS <= seconds * 1_000; slice++) {
    await Bun.sleep(SLICE_MS);
    const now = { at: performance.now(), admitted, pg: postgresCpuMicros(postmaster), own: ownCpuMicros(), calls };
    const count = now.admitted - last.admitted;
    const stats = (await observer`
      select t.relname, t.n_dead_tup, t.n_tup_hot_upd, pg_relation_size(t.relid) / 8192 as pages,
             coalesce(io.heap_blks_hit, 0) + coalesce(io.idx_blks_hit, 0) + coalesce(io.heap_blks_read, 0) + coalesce(io.idx_blks_read, 0) as blocks
        from pg_stat_user_tables t join pg_statio_user_tables io using (relid)
       where t.relname in ${observer(TABLES)}`) as unknown as TableStats[];
    const tables = TABLES.map((name) => {
      const row = stats.find((s) => s.relname === name);
      const blocks = row ? ((row.blocks - (lastBlocks.get(name) ?? 0)) / count).toFixed(1) : "?";
      lastBlocks.set(name, row?.blocks ?? 0);
      return `${row?.n_dead_tup ?? "?"}/${row?.n_tup_hot_upd ?? "?"}/${row?.pages ?? "?"}/${blocks}`.padStart(name.length + 20);
    });
    console.log(
      [
        String(slice * 10).padStart(4) + "s",
        String(Math.round(count / ((now.at - last.at) / 1_000))).padStart(6),
        String(Math.round((now.pg - last.pg) / count)).padStart(10),
        String(Math.round((now.own - last.own) / count)).padStart(11),
        ((now.calls - last.calls) / count).toFixed(2).padStart(10),
        ...tables,
      ].join(" "),
    );
    last = now;
  }
  running = false;
  await Promise.all(workers);
  await counters.stop();
  process.env.PROBE_URL = url;
  if (process.env.PROBE) await probe(observer, budget.counterKey, rate.counterKey);
  await sql.end();
  await observer.end();
}

interface TableStats {
  relname: string;
  n_dead_tup: number;
  n_tup_hot_upd: number;
  pages: number;
  /** Heap and index blocks read or found in shared buffers, since the cluster started. */
  blocks: number;
}

/** One admission and its settlement, straight through the query functions. */
async function oneCall(sql: Sql, budgetKey: string, rateKey: string): Promise<void> {
  const grantId = newId("adm", 20);
  await admitGrants(sql, [{ grantId, amountMicroUsd: 1_000, tokens: 100 }], [{ key: budgetKey, limitMicroUsd: 1e15, ...BUDGET_WINDOWS.day }], [{ key: rateKey, windowSecs: 60, maxRequests: 1e9, maxTokens: null }], 30);
  await endGrants(sql, [{ grantId, chargeMicroUsd: 100 }], [budgetKey], false);
}

/** Buffers each statement of the admission functions touches on the hot key once the load has stopped (PROBE=1). */
async function probe(sql: Sql, budgetKey: string, rateKey: string): Promise<void> {
  const statements = {
    "counter row": `select * from admission_counters where counter_key = '${budgetKey}'`,
    "counter upsert": `insert into admission_counters (counter_key) values ('${budgetKey}') on conflict (counter_key) do update set counter_key = excluded.counter_key`,
    "day spend": `select sum(spent_micro_usd) from budget_spend where counter_key = '${budgetKey}' and bucket_end > clock_timestamp() - interval '1 day'`,
    "hold by grant": `select * from admission_holds where grant_id = 'adm_none' for update`,
    "window prune": `delete from rate_limit_admissions where counter_key = '${rateKey}' and admitted_at <= clock_timestamp() - interval '60 seconds'`,
    "expired holds": `select distinct counter_key from admission_holds where expires_at < statement_timestamp()`,
  };
  if (process.env.PROBE === "functions") {
    // auto_explain's plans of every statement inside the functions, sent back as notices.
    const traced = postgres(process.env.PROBE_URL!, { max: 1, onnotice: (notice) => console.log(notice.message), types: BIGINT_AS_NUMBER }) as unknown as Sql;
    await traced.begin(async (tx) => {
      // Plans are cached per connection after a few calls: trace the cached ones.
      for (let i = 0; i < 10; i++) {
        await oneCall(tx as unknown as Sql, budgetKey, rateKey);
      }
      await tx.unsafe("load 'auto_explain'");
      await tx.unsafe("set local auto_explain.log_min_duration = 0; set local auto_explain.log_analyze = on; set local auto_explain.log_buffers = on; set local auto_explain.log_nested_statements = on; set local client_min_messages = log");
      await oneCall(tx as unknown as Sql, budgetKey, rateKey);
    });
    await traced.end();
    return;
  }
  for (const [name, text] of Object.entries(statements)) {
    await sql.begin(async (tx) => {
      const plan = (await tx.unsafe(`explain (analyze, buffers, format json) ${text}`)) as unknown as { "QUERY PLAN": { Plan: Record<string, unknown> }[] }[];
      const top = plan[0]!["QUERY PLAN"][0]!.Plan;
      if (process.env.PROBE === "plans") console.log(JSON.stringify(top, null, 1));
      console.log(`${name.padEnd(16)} ${String(top["Shared Hit Blocks"]).padStart(6)} buffers  ${Number(top["Actual Total Time"]).toFixed(3)} ms`);
      await tx.unsafe("rollback");
    }).catch(() => {});
  }
}

try {
  await main();
} finally {
  cleanupAll();
}

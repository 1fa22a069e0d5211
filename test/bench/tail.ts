/**
 * `npx bun test/bench/tail.ts`: where the tail at 64 connections comes from. Runs the bare
 * proxy and Switchyard variants, each at 64 connections for TAIL_SECONDS (default 8) in turn,
 * and sets the latency tail beside what held the server's JavaScript thread meanwhile:
 *
 * - event-loop delay: `switchyard_event_loop_delay_seconds` (src/observability/event-loop-delay.ts)
 *   read from /metrics before and after, so only the load's own observations count;
 * - GC pauses: JavaScriptCore's own log (BUN_JSC_logGC=1 on the server), every collection's
 *   stop-the-world pause (`p=…ms`) that ended in the window;
 * - waiting for a core: the server's main thread's run-queue wait (/proc/<pid>/schedstat),
 *   time it was ready to run while other processes (the load generator, the mock,
 *   PostgreSQL, anything else on the machine) held both cores;
 * - the write buffer's flushes: the variants differ in METERING and
 *   METERING_FLUSH_INTERVAL_MS, so their difference is what metering's flushes add.
 *
 *   TAIL_SECONDS=8 VARIANTS='metered:{};metering off:{"METERING":"off"}' npx bun test/bench/tail.ts
 *
 * The load generator shares the machine's cores with the servers, so a request's latency at
 * 64 connections is mostly queueing; the delays say how much of it is one long stall.
 */
import { readFileSync } from "node:fs";
import { cleanupAll } from "./children";
import { chatTarget, percentileMs, runLanes, type Target } from "./load";
import { parseVariants, startBenchUpstreams, startDatabase, startSwitchyard, type SwitchyardProcess } from "./switchyard-process";

process.env.CHILD_OUTPUT_KEEP = String(20_000_000);
const MOCK_KEY = "bench-mock-key";
const SECONDS = Number(process.env.TAIL_SECONDS ?? 8);
const LANES = 64;
const DELAY_BOUNDS = ["0.001", "0.002", "0.005", "0.01", "0.02", "0.05"];


/** The event-loop delay histogram's cumulative bucket counts, its count and its sum. */
async function delayHistogram(url: string): Promise<{ buckets: Map<string, number>; count: number; sum: number }> {
  const text = await fetch(`${url}/metrics`).then((response) => response.text());
  const buckets = new Map<string, number>();
  for (const match of text.matchAll(/^switchyard_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) buckets.set(match[1]!, Number(match[2]));
  const count = Number(/^switchyard_event_loop_delay_seconds_count (\d+)$/m.exec(text)?.[1] ?? 0);
  const sum = Number(/^switchyard_event_loop_delay_seconds_sum ([\d.e+-]+)$/m.exec(text)?.[1] ?? 0);
  return { buckets, count, sum };
}

/** The main thread's time on a core and waiting for one (ns), from /proc/<pid>/schedstat. */
function schedstat(pid: number): { runNs: number; waitNs: number } {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, "utf8").trim().split(/\s+/).map(Number);
    return { runNs: run ?? 0, waitNs: wait ?? 0 };
  } catch {
    return { runNs: Number.NaN, waitNs: Number.NaN };
  }
}

/** Stop-the-world pauses in ms of every collection JavaScriptCore logged in `log`. */
function gcPauses(log: string): number[] {
  const pauses: number[] = [];
  for (const line of log.split("\n")) {
    if (!line.includes("END]")) continue;
    const match = /\bp=([\d.]+)ms/.exec(line);
    if (match) pauses.push(Number(match[1]));
  }
  return pauses;
}

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** The server's main thread, ms per second of load: on a core, and ready but waiting for one. */
  thread: { runMs: number; waitMs: number };
  delays?: { samples: number; meanMs: number; over: number[] };
  gc?: { count: number; totalMs: number; maxMs: number; over1ms: number };
}

async function measure(target: Target, pid: number, server: SwitchyardProcess | undefined): Promise<Row> {
  await runLanes(target, LANES, 2_000); // untimed: steady state
  const before = server === undefined ? undefined : await delayHistogram(server.url);
  const outputBefore = server?.output().length ?? 0;
  const schedBefore = schedstat(pid);
  const run = await runLanes(target, LANES, SECONDS * 1000);
  const schedAfter = schedstat(pid);
  const after = server === undefined ? undefined : await delayHistogram(server.url);
  const row: Row = {
    name: target.name,
    rps: run.completed / run.seconds,
    p50: percentileMs(run.ns, 0.5),
    p99: percentileMs(run.ns, 0.99),
    p999: percentileMs(run.ns, 0.999),
    max: percentileMs(run.ns, 1),
    thread: { runMs: (schedAfter.runNs - schedBefore.runNs) / 1e6 / run.seconds, waitMs: (schedAfter.waitNs - schedBefore.waitNs) / 1e6 / run.seconds },
  };
  if (server !== undefined && before !== undefined && after !== undefined) {
    const samples = after.count - before.count;
    row.delays = {
      samples,
      meanMs: ((after.sum - before.sum) / Math.max(1, samples)) * 1000,
      over: DELAY_BOUNDS.map((le) => samples - ((after.buckets.get(le) ?? 0) - (before.buckets.get(le) ?? 0))),
    };
    const pauses = gcPauses(server.output().slice(outputBefore));
    row.gc = {
      count: pauses.length,
      totalMs: pauses.reduce((sum, pause) => sum + pause, 0),
      maxMs: pauses.reduce((max, pause) => Math.max(max, pause), 0),
      over1ms: pauses.filter((pause) => pause > 1).length,
    };
  }
  return row;
}

async function main(): Promise<void> {
  const { proxyChild, proxyUrl, mocks } = await startBenchUpstreams(MOCK_KEY);
  const database = await startDatabase();
  const switchyards: SwitchyardProcess[] = [];
  try {
    for (const variant of parseVariants(process.env.VARIANTS ?? 'metered:{};metering off:{"METERING":"off"}')) {
      // LOG_LEVEL=warn keeps the server's own log out of the way of the GC lines.
      switchyards.push(await startSwitchyard({ ...variant, env: { ...variant.env, BUN_JSC_logGC: "1" }, database, mocks, mockKey: MOCK_KEY }));
    }
    const rows: Row[] = [await measure(chatTarget("bare proxy", proxyUrl, MOCK_KEY, "gpt-4o-mini"), proxyChild.process.pid, undefined)];
    for (const server of switchyards) rows.push(await measure(chatTarget(server.mode, server.url, server.apiKey, "mock-openai/gpt-4o-mini"), server.pid, server));
    const f = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
    console.log(`Latency at ${LANES} connections over ${SECONDS} s per path (ms), and what held the server's JavaScript thread meanwhile:\n`);
    console.log("| path | rps | 64 ÷ rps (Little) | p50 | p99 | p99.9 | max | main thread on a core, ms/s | waiting for a core, ms/s | loop delay: mean ms | delays > " + DELAY_BOUNDS.map((b) => `${Number(b) * 1000} ms`).join(" / ") + " | GC pauses: count | total ms | ms per s | max ms | > 1 ms |");
    console.log("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (const row of rows) {
      const delays = row.delays === undefined ? "— | —" : `${f(row.delays.meanMs, 3)} | ${row.delays.over.join(" / ")} of ${row.delays.samples}`;
      const gc = row.gc === undefined ? "— | — | — | — | —" : `${row.gc.count} | ${f(row.gc.totalMs, 1)} | ${f(row.gc.totalMs / SECONDS, 1)} | ${f(row.gc.maxMs)} | ${row.gc.over1ms}`;
      console.log(`| ${row.name} | ${Math.round(row.rps).toLocaleString("en-US")} | ${f((LANES / row.rps) * 1000)} | ${f(row.p50)} | ${f(row.p99)} | ${f(row.p999)} | ${f(row.max)} | ${f(row.thread.runMs, 0)} | ${f(row.thread.waitMs, 0)} | ${delays} | ${gc} |`);
    }
  } finally {
    await Promise.all(switchyards.map((s) => s.stop()));
    cleanupAll();
  }
}

await main();
process.exit(0);

/**
 * `npx bun test/bench/allocations.ts`: how many JavaScript heap cells (objects, strings,
 * arrays, closures, promises, the runtime's wrappers such as Headers and Response) one
 * request makes on a server's main thread, by type, and the bytes of heap they take: the
 * bare proxy against each Switchyard variant, same-protocol chat completions, whole or
 * streamed. Garbage is what a request
 * leaves to the collector; at thousands of requests a second it is the heap's growth under
 * load and the collector's CPU.
 *
 * Each server runs with allocation-probe.ts preloaded and JavaScriptCore's minimum heap
 * sizes raised, so its collector does not run during a count: the probe collects fully,
 * counts the heap's cells by type, and counts again after COUNT requests (and a wait for
 * the metering flush they cause), and the difference is what they made; with nothing
 * collected, the growth of the heap's capacity is the bytes they took (perRequest). The same wait with
 * no requests is counted too (timers, the flush loop, metrics) and taken off. The server is
 * warmed first (WARM requests), so its code is compiled as in a running gateway: optimised
 * code allocates fewer cells than the interpreter. A measurement, not a test.
 *
 *   env: VARIANTS  label:JSON-env pairs separated by ";" (default: metering on and off)
 *        STREAM=1  streamed chat completions
 *        CROSS=1   a Messages upstream behind the chat client (Switchyard only)
 *        COUNT, WARM, LANES  requests counted (2,000), requests before (6,000), connections (4)
 *        TOP       cell types listed (25)
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanupAll } from "./children";
import { chatTarget, sendRequests, type Target } from "./load";
import { signalProbe } from "./probe-signal";
import { parseVariants, startBenchUpstreams, startDatabase, startSwitchyard } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";
const HERE = import.meta.dir;
const COUNT = Number(process.env.COUNT ?? 2_000);
const WARM = Number(process.env.WARM ?? 6_000);
const LANES = Number(process.env.LANES ?? 4);
const TOP = Number(process.env.TOP ?? 25);
const STREAM = process.env.STREAM === "1";
/** Longer than the metering flush interval, so a count includes the flush of its requests. */
const SETTLE_MS = 400;

/**
 * What keeps the server's collector from running during a count: JavaScriptCore's minimum
 * heap sizes raised (no collection before ~4 GB are allocated), its timer-driven eden
 * collection (otherwise within a second of allocating) slowed to never, and Bun's own
 * collection timer off.
 */
const NO_COLLECTION_ENV = {
  BUN_JSC_smallHeapSize: "4000000000",
  BUN_JSC_mediumHeapSize: "4000000000",
  BUN_JSC_largeHeapSize: "4000000000",
  BUN_JSC_percentCPUPerMBForEdenTimer: "0.000001",
  BUN_JSC_collectionTimerMaxPercentCPU: "0.000001",
  BUN_GC_TIMER_DISABLE: "1",
};

type Cells = Record<string, number>;

interface Probed {
  name: string;
  pid: number;
  file: string;
  target: Target;
}

async function signalAndRead(server: Probed, expectStarted: boolean): Promise<string> {
  const text = await signalProbe(server.pid, server.file, server.name, 5_000);
  if (text === "collected\n") throw new Error(`${server.name}: the collector ran during the count, so it is short; try a smaller COUNT`);
  if (expectStarted !== (text === "started\n")) throw new Error(`${server.name}: the probe wrote ${text.slice(0, 80)}`);
  return text;
}

/** Cells made over one count: `requests` requests (none: the same wait, idle), then the settle wait. */
async function count(server: Probed, requests: number, idleMs: number): Promise<{ cells: Cells; ms: number }> {
  await signalAndRead(server, true);
  const begun = performance.now();
  if (requests > 0) await sendRequests(server.target, requests, LANES);
  else await Bun.sleep(idleMs);
  await Bun.sleep(SETTLE_MS);
  const ms = performance.now() - begun;
  return { cells: JSON.parse(await signalAndRead(server, false)) as Cells, ms };
}

const BYTES = ["bytes: heap blocks", "bytes: outside the blocks"];

/**
 * Cells a request: a count's cells less the idle count's, scaled to the same time. Bytes a
 * request: the difference between a count of COUNT requests and one of twice as many, over
 * COUNT. What a count makes first fills the room the full collection before it left, and
 * only then grows the heap; that room is the same for both counts, so it drops out.
 */
function perRequest(made: Cells, idle: Cells, idleScale: number, twice: Cells): Cells {
  const cells: Cells = {};
  for (const [type, value] of Object.entries(made)) {
    if (BYTES.includes(type)) continue;
    const net = (value - (idle[type] ?? 0) * idleScale) / COUNT;
    if (Math.abs(net) >= 0.05) cells[type] = net;
  }
  for (const type of BYTES) cells[type] = ((twice[type] ?? 0) - (made[type] ?? 0)) / COUNT;
  return cells;
}

async function main(): Promise<void> {
  const probeDir = mkdtempSync(join(tmpdir(), "switchyard-allocations-"));
  const probeEnv = (name: string) => {
    const file = join(probeDir, `${name.replace(/[^a-z0-9]+/gi, "_")}.txt`);
    writeFileSync(file, "");
    return { file, env: { ...NO_COLLECTION_ENV, ALLOCATION_PROBE_FILE: file } };
  };
  const preload = ["--preload", join(HERE, "allocation-probe.ts")];

  const proxyProbe = probeEnv("bare proxy");
  const { mocks, proxyChild, proxyUrl } = await startBenchUpstreams(MOCK_KEY, { bunFlags: preload, env: proxyProbe.env });
  const servers: Probed[] = [{ name: "bare proxy", pid: proxyChild.process.pid, file: proxyProbe.file, target: chatTarget("bare proxy", proxyUrl, MOCK_KEY, "gpt-4o-mini", STREAM) }];

  const database = await startDatabase();
  const model = process.env.CROSS === "1" ? "mock-anthropic/claude-sonnet-4-5" : "mock-openai/gpt-4o-mini";
  for (const variant of parseVariants(process.env.VARIANTS ?? 'metering on:{};metering off:{"METERING":"off"}')) {
    const probe = probeEnv(variant.mode);
    const server = await startSwitchyard({ ...variant, env: { ...variant.env, ...probe.env }, bunFlags: preload, database, mocks, mockKey: MOCK_KEY });
    servers.push({ name: variant.mode, pid: server.pid, file: probe.file, target: chatTarget(variant.mode, server.url, server.apiKey, model, STREAM) });
  }

  const results: Array<{ name: string; cells: Cells; ms: number }> = [];
  for (const server of servers) {
    await sendRequests(server.target, WARM, LANES);
    const load = await count(server, COUNT, 0);
    const twice = await count(server, 2 * COUNT, 0);
    // Under 2 s of quiet in all, or the server's idle collection (src/http/idle-collector.ts) runs.
    const idle = await count(server, 0, Math.min(load.ms - SETTLE_MS, 500));
    results.push({ name: server.name, cells: perRequest(load.cells, idle.cells, load.ms / idle.ms, twice.cells), ms: load.ms });
    console.error(`${server.name}: ${COUNT} requests counted in ${load.ms.toFixed(0)} ms`);
  }

  const isBytes = (type: string) => BYTES.includes(type);
  const total = (cells: Cells) => Object.entries(cells).reduce((sum, [type, value]) => (isBytes(type) ? sum : sum + value), 0);
  console.log(`\nJavaScript heap cells made per ${STREAM ? "streamed " : ""}request, main thread (${COUNT} requests at ${LANES} connections, after ${WARM})\n`);
  const types = new Set<string>();
  for (const result of results) for (const [type] of Object.entries(result.cells).sort((a, b) => b[1] - a[1]).slice(0, TOP)) types.add(type);
  const ordered = [...types].sort((a, b) => (results.at(1)?.cells[b] ?? 0) - (results.at(1)?.cells[a] ?? 0));
  console.log(`| cell type | ${results.map((r) => r.name).join(" | ")} |`);
  console.log(`|---|${results.map(() => "--:").join("|")}|`);
  console.log(`| **all** | ${results.map((r) => `**${total(r.cells).toFixed(1)}**`).join(" | ")} |`);
  for (const type of BYTES) console.log(`| ${type} | ${results.map((r) => (r.cells[type] ?? 0).toFixed(0)).join(" | ")} |`);
  for (const type of ordered.filter((type) => !isBytes(type))) console.log(`| ${type} | ${results.map((r) => (r.cells[type] ?? 0).toFixed(1)).join(" | ")} |`);
}

try {
  await main();
} finally {
  await cleanupAll();
}

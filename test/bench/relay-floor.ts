/**
 * `bun test/bench/relay-floor.ts`: what a stream costs a relay whose JavaScript sees every
 * chunk, against the bare proxy that pipes the upstream's body natively, and what each of
 * the gateway's pieces adds to it (relay-proxy.ts's options), measured side by side: 16
 * streaming connections, interleaved slices, each serving process's CPU per stream, its
 * main thread and Bun's HTTP-client thread apart. With GATEWAY=1 a default Switchyard runs
 * beside them (its CPU without PostgreSQL's). Tells the runtime's floor for a relay from
 * the pipeline's own cost on this machine, where the gateway's per-stage costs measured in
 * one process understate what they cost in the server (test/bench/HISTORY.md, 2026-11-29 18:12–19:25).
 *
 *   RELAYS='plain:{};accounted:{"ACCOUNT":"pd"}' GATEWAY=1 bun test/bench/relay-floor.ts
 *   env: RELAYS   label:JSON-env pairs separated by ";", the relays' options (default: plain,
 *                 accounted); a relay's ROOT runs another checkout's relay-proxy.ts (a git
 *                 worktree of an older commit, its node_modules linked), so two commits'
 *                 pieces are compared in one run; a relay's SCRIPT runs another child of
 *                 test/bench instead of relay-proxy.ts (socket-proxy.ts: the bare proxy
 *                 with an HTTP/1.1 client of its own in place of fetch)
 *        GATEWAY=1 also a Switchyard (SWITCHYARD_ENV: JSON of its environment)
 *        STREAM=0  whole answers instead of streams
 *        SLICES, SLICE_MS  interleaved slices per path and their length (4, 2500)
 *        RELAY_FLAGS  flags for the relays' `bun` (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof")
 */
import { join } from "node:path";
import { cleanupAll, firstLineWithin, spawnChild, waitForPing, type Child } from "./children";
import { chatTarget, runLanes } from "./load";
import { cpuTicks, threadTicks, TICKS_PER_SECOND } from "./process-cpu";
import { parseVariants, startBenchUpstreams, startDatabase, startSwitchyard } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";
const LANES = 16;

interface Path {
  name: string;
  url: string;
  pid: number;
  model: string;
  key: string;
}

const { proxyChild, proxyUrl, mocks } = await startBenchUpstreams(MOCK_KEY);
const relays: Child[] = [];
const paths: Path[] = [{ name: "bare proxy", url: proxyUrl, pid: proxyChild.process.pid, model: "gpt-4o-mini", key: MOCK_KEY }];
for (const { mode, env } of parseVariants(process.env.RELAYS ?? 'plain relay:{};accounted relay:{"ACCOUNT":"pd"}')) {
  const { ROOT: root, SCRIPT: scriptName, ...options } = env;
  const script = join(root ?? join(import.meta.dir, "../.."), "test/bench", scriptName ?? "relay-proxy.ts");
  const flags = (process.env.RELAY_FLAGS ?? "").split(" ").filter(Boolean);
  const child = spawnChild(mode, [process.execPath, ...flags, script, mocks[0]!.baseUrl], { env: { ...process.env, ...options } });
  relays.push(child);
  const url = await firstLineWithin(child, 30_000);
  await waitForPing(url, child, 30_000);
  paths.push({ name: mode, url, pid: child.process.pid, model: "gpt-4o-mini", key: MOCK_KEY });
}
if (process.env.GATEWAY === "1") {
  const database = await startDatabase();
  const switchyard = await startSwitchyard({ mode: "switchyard", env: JSON.parse(process.env.SWITCHYARD_ENV ?? "{}"), database, mocks, mockKey: MOCK_KEY, accounts: 1 });
  paths.push({ name: "switchyard", url: switchyard.url, pid: switchyard.pid, model: "mock-openai/gpt-4o-mini", key: switchyard.apiKey });
}

const stream = process.env.STREAM !== "0";
const slices = Number(process.env.SLICES ?? 4);
const sliceMs = Number(process.env.SLICE_MS ?? 2_500);
const target = (path: Path) => chatTarget(path.name, path.url, path.key, path.model, stream);
// Warm-up: the gateway's JIT needs longer than a relay's (jit-warmup.ts).
for (const path of paths) await runLanes(target(path), LANES, path.name === "switchyard" ? 20_000 : 5_000);
const totals = new Map(paths.map((path) => [path.name, { completed: 0, errors: 0, ticks: 0, main: 0, http: 0 }]));
for (let slice = 0; slice < slices; slice++) {
  for (const path of paths) {
    const ticksBefore = cpuTicks(path.pid);
    const threadsBefore = threadTicks(path.pid);
    const { completed, errors } = await runLanes(target(path), LANES, sliceMs);
    const threadsAfter = threadTicks(path.pid);
    const total = totals.get(path.name)!;
    total.completed += completed;
    total.errors += errors.count;
    total.ticks += cpuTicks(path.pid) - ticksBefore;
    total.main += (threadsAfter.get("main") ?? 0) - (threadsBefore.get("main") ?? 0);
    total.http += (threadsAfter.get("HTTP Client") ?? 0) - (threadsBefore.get("HTTP Client") ?? 0);
  }
}
const perRequest = (ticks: number, completed: number) => ((ticks / TICKS_PER_SECOND) * 1e6 / completed).toFixed(1);
const bare = totals.get("bare proxy")!;
console.log(`| path | CPU µs per ${stream ? "stream" : "request"} | ÷ bare proxy | main thread | HTTP client thread | completed | errors |`);
console.log("|---|--:|--:|--:|--:|--:|--:|");
for (const [name, total] of totals) {
  const ratio = (total.ticks / total.completed) / (bare.ticks / bare.completed);
  console.log(`| ${name} | ${perRequest(total.ticks, total.completed)} | ${ratio.toFixed(2)}× | ${perRequest(total.main, total.completed)} | ${perRequest(total.http, total.completed)} | ${total.completed} | ${total.errors} |`);
}
// Closing a relay's stdin lets it exit by itself (and write a CPU profile, when asked).
for (const relay of relays) {
  relay.process.stdin.end();
  await relay.process.exited;
}
cleanupAll();
process.exit(0);

/**
 * `bun test/bench/cpu-by-function.ts`: where one Switchyard's CPU goes, counted on the CPU,
 * by thread, by kind of code and by JavaScript function. `--cpu-prof` samples wall time,
 * which on a contended machine charges a frame for the time its process waited for a core;
 * `perf` samples only what ran. JavaScriptCore writes what it compiles to a JITDump
 * (`BUN_JSC_useJITDump`), which names the compiled code in perf's samples; Bun's own native
 * code has no symbols, so it is charged to the nearest JavaScript caller on the stack.
 *
 * Starts the bench's mock upstreams, the bare proxy, a PostgreSQL and one Switchyard (or the
 * bare proxy alone), gives it WARMUP_MS of load, then records `perf record -e cpu-clock -g`
 * on it for MEASURE_MS of the same load and prints, per request:
 *   - CPU µs by thread and by kind of code: the kernel, Bun's native code (the runtime:
 *     HTTP, streams, promises, the collector's allocation paths, JavaScriptCore's C++),
 *     compiled JavaScript, libc;
 *   - the request thread's CPU by JavaScript function: the first JavaScript frame up the
 *     stack from each sample (`js`: a native call is charged to its caller), or every
 *     JavaScript function on the stack (`inclusive`);
 *   - the request thread's native samples (runtime, kernel, libc) by the JavaScript function
 *     that called them: which of our functions asks the runtime for the most work;
 *   - under `UNDER=<function name>[,<another>…]`: what each function's samples were spent in.
 * The kernel's `finish_task_switch` is most likely not work: a sampling interrupt that falls
 * due while interrupts are off around a context switch is taken at the switch-in, so a thread
 * preempted often (after its writes wake the load generator) has earlier time charged there
 * (test/bench/HISTORY.md, "Where a stream's CPU goes, counted on the CPU").
 * Recording stacks at 2 kHz and writing the JITDump cost the process about as much again as
 * it spends (a stream's request thread read 424 µs here against ~220 in cpu-per-request.ts):
 * read the shares, and compare only runs of this script with each other.
 *
 *   STREAM=1 LANES=16 bun test/bench/cpu-by-function.ts
 *   env: STREAM=1  streamed chat completions (else whole answers)
 *        LANES    connections (16)
 *        WARMUP_MS, MEASURE_MS  load before the record, and recorded (15000, 10000)
 *        TARGET=bare  the bare proxy instead of a Switchyard
 *        GOVERNED=1   whole answers for a key that has a budget, a rate limit and a guardrail bound (policy-paths.ts)
 *        SWITCHYARD_ENV  JSON of the Switchyard's environment; SWITCHYARD_ROOT as in cpu-per-request.ts
 *        TOP      functions listed (40)
 *        UNDER    functions (comma-separated) whose samples are broken down by where they were spent
 *        MOCK_SCENARIO as in start-mock.ts (e.g. a 100-chunk answer)
 *   Needs `perf` (Debian's linux-perf) and permission to record another process
 *   (`kernel.perf_event_paranoid` ≤ 1, or root).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanupAll } from "./children";
import { chatTarget, runLanes } from "./load";
import { policyPaths } from "./policy-paths";
import { startBenchUpstreams, startDatabase, startSwitchyard } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";
const SAMPLE_HZ = 2_000;

/**
 * Compiled code JavaScriptCore reported, sorted by start address: where each lies, when it
 * was loaded (ns, CLOCK_MONOTONIC) and its name. Freed code's addresses are reused, so a
 * sample is named by the code that lay at its address at the sample's time.
 */
interface JitCode {
  starts: number[];
  ends: number[];
  loadedAt: number[];
  names: string[];
  /** The largest code size: how far back from an address a covering record can start. */
  maxSize: number;
}

/** The code-load records of a JITDump file (the format perf's `jitdump` support reads). */
function readJitDump(path: string): JitCode {
  const bytes = readFileSync(path);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: Array<{ start: number; end: number; loadedAt: number; name: string }> = [];
  const CODE_LOAD = 0;
  const RECORD_HEADER = 16;
  for (let at = view.getUint32(8, true); at + RECORD_HEADER <= bytes.length; ) {
    const id = view.getUint32(at, true);
    const size = view.getUint32(at + 4, true);
    if (size === 0) break;
    if (id === CODE_LOAD) {
      // pid, tid (u32 each), vma, code address, code size, code index (u64 each), then the name.
      const start = Number(view.getBigUint64(at + RECORD_HEADER + 16, true));
      const codeSize = Number(view.getBigUint64(at + RECORD_HEADER + 24, true));
      const nameAt = at + RECORD_HEADER + 40;
      const nameEnd = bytes.indexOf(0, nameAt);
      const loadedAt = Number(view.getBigUint64(at + 8, true));
      records.push({ start, end: start + codeSize, loadedAt, name: bytes.toString("utf8", nameAt, nameEnd) });
    }
    at += size;
  }
  records.sort((a, b) => a.start - b.start);
  return {
    starts: records.map((r) => r.start),
    ends: records.map((r) => r.end),
    loadedAt: records.map((r) => r.loadedAt),
    names: records.map((r) => r.name),
    maxSize: records.reduce((max, r) => Math.max(max, r.end - r.start), 0),
  };
}

/** The compiled code that lay at `ip` at time `at` (ns): the last loaded before then of those covering it; else undefined. */
function jitName(code: JitCode, ip: number, at: number): string | undefined {
  let low = 0;
  let high = code.starts.length - 1;
  let last = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (code.starts[mid]! <= ip) {
      last = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  let found = -1;
  for (let i = last; i >= 0 && code.starts[i]! > ip - code.maxSize - 1; i--) {
    if (ip < code.ends[i]! && code.loadedAt[i]! <= at && (found === -1 || code.loadedAt[i]! > code.loadedAt[found]!)) found = i;
  }
  if (found === -1) return undefined;
  // "JSC-FTL: relayNext#Ab12:[0x…]" → "relayNext": the tables count a function whatever tier ran it.
  return code.names[found]!.replace(/^JSC-[A-Za-z]+:\s*/, "").replace(/#.*$/, "").trim() || "(anonymous)";
}

type Frame = { kind: "js" | "kernel" | "runtime" | "libc" | "other"; name: string };

/** perf's samples, each a thread name and its stack from the leaf up, with JavaScript frames named. */
function* samples(perfData: string, code: JitCode): Generator<{ thread: string; frames: Frame[] }> {
  const script = Bun.spawnSync(["perf", "script", "-i", perfData, "-F", "comm,time,ip,sym,dso"], { stdout: "pipe", stderr: "ignore" });
  for (const block of script.stdout.toString().split("\n\n")) {
    const lines = block.split("\n").filter((line) => line.trim() !== "");
    if (lines.length === 0) continue;
    // "bun.exe  29545.173021:" — the thread's name, then the sample's time in seconds.
    const head = /^\s*(.*?)\s+(\d+\.\d+):?\s*$/.exec(lines[0]!);
    if (head === null) continue;
    const thread = head[1]!;
    const at = Number(head[2]!) * 1e9;
    const frames: Frame[] = [];
    for (const line of lines.slice(1)) {
      const match = /^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)$/.exec(line);
      if (match === null) continue;
      const [, ip, symbol, dso] = match as unknown as [string, string, string, string];
      const js = dso.includes("JIT") || symbol === "[unknown]" ? jitName(code, parseInt(ip, 16), at) : undefined;
      if (js !== undefined) frames.push({ kind: "js", name: js });
      else if (dso.includes("kernel")) frames.push({ kind: "kernel", name: symbol });
      else if (dso.endsWith("bun.exe") || dso.endsWith("/bun")) frames.push({ kind: "runtime", name: symbol });
      else if (dso.includes("libc")) frames.push({ kind: "libc", name: symbol });
      else frames.push({ kind: "other", name: `${symbol} (${dso})` });
    }
    if (frames.length > 0) yield { thread, frames };
  }
}

/** `total`: the samples a share is of (the thread's, for the inclusive table, whose rows overlap). */
function table(title: string, counts: Map<string, number>, perRequest: (samples: number) => number, top: number, total = [...counts.values()].reduce((sum, n) => sum + n, 0)): void {
  console.log(`\n| ${title} | µs/request | share |\n|---|--:|--:|`);
  for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`| ${name} | ${perRequest(n).toFixed(1)} | ${((n / total) * 100).toFixed(1)} % |`);
  }
}

function add(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

async function main(): Promise<void> {
  const stream = process.env.STREAM === "1";
  const lanes = Number(process.env.LANES ?? 16);
  const top = Number(process.env.TOP ?? 40);
  const bare = process.env.TARGET === "bare";
  const dumpDir = mkdtempSync(join(tmpdir(), "switchyard-jitdump-"));
  const perfData = join(dumpDir, "perf.data");
  const jitEnv = { BUN_JSC_useJITDump: "1", BUN_JSC_jitDumpDirectory: dumpDir };
  const { mocks, proxyChild, proxyUrl } = await startBenchUpstreams(MOCK_KEY, bare ? { env: jitEnv } : {});
  let pid = proxyChild.process.pid;
  let target = chatTarget("bare proxy", proxyUrl, MOCK_KEY, "gpt-4o-mini", stream);
  if (!bare) {
    const database = await startDatabase();
    const env = { ...(JSON.parse(process.env.SWITCHYARD_ENV ?? "{}") as Record<string, string>), ...jitEnv };
    const switchyard = await startSwitchyard({ mode: "switchyard", env, database, mocks, mockKey: MOCK_KEY, accounts: 1 });
    pid = switchyard.pid;
    target = chatTarget("switchyard", switchyard.url, switchyard.apiKey, "mock-openai/gpt-4o-mini", stream);
    // GOVERNED=1: whole answers for a key with the bench's budget, rate limit and guardrail bound (policy-paths.ts), as the bench's governed row.
    if (process.env.GOVERNED === "1") target = (await policyPaths(switchyard.url, switchyard.apiKey))[1]!.target;
  }
  await runLanes(target, lanes, Number(process.env.WARMUP_MS ?? 15_000));
  const recorder = Bun.spawn(["perf", "record", "-k", "mono", "-e", "cpu-clock", "-F", String(SAMPLE_HZ), "-g", "-o", perfData, "-p", String(pid)], { stdout: "ignore", stderr: "pipe" });
  await Bun.sleep(300);
  const { completed } = await runLanes(target, lanes, Number(process.env.MEASURE_MS ?? 10_000));
  recorder.kill("SIGINT");
  if ((await recorder.exited) !== 0 && readdirSync(dumpDir).every((file) => file !== "perf.data")) {
    throw new Error(`perf record failed: ${await new Response(recorder.stderr).text()}`);
  }
  // JavaScriptCore buffers its JITDump: it is whole once the process has exited.
  await cleanupAll();
  const dump = readdirSync(dumpDir).find((file) => file.startsWith("jit-") && file.endsWith(".dump"));
  if (dump === undefined) throw new Error("no JITDump was written: is BUN_JSC_useJITDump honoured by this Bun?");
  const code = readJitDump(join(dumpDir, dump));
  const perRequest = (n: number) => ((n * 1e6) / SAMPLE_HZ) / completed;

  const byThread = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const nativeByCaller = new Map<string, number>();
  // UNDER may name several functions, comma-separated: one recording answers them all.
  const underNames = (process.env.UNDER ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "");
  const under = new Map(underNames.map((name) => [name, new Map<string, number>()]));
  let requestThread = "";
  for (const { thread, frames } of samples(perfData, code)) {
    add(byThread, `${thread}: ${frames[0]!.kind}`);
    // The request thread is the process's own name (Bun names its other threads).
    if (thread !== "bun" && thread !== "bun.exe") continue;
    requestThread = thread;
    const caller = frames.find((frame) => frame.kind === "js");
    // What the runtime's work is on behalf of: Bun's code has no symbols, its caller has a name.
    if (frames[0]!.kind !== "js") add(nativeByCaller, `${frames[0]!.kind} <- ${caller === undefined ? "(none)" : caller.name}`);
    // With no JavaScript on the stack: the event loop, sockets, timers, the runtime's own work, by the kind of code sampled.
    add(byFunction, caller === undefined ? `(no JavaScript on the stack: ${frames[0]!.kind})` : caller.name);
    for (const name of new Set(frames.filter((frame) => frame.kind === "js").map((frame) => frame.name))) add(inclusive, name);
    for (const [underName, spent] of under) {
      const at = frames.findIndex((frame) => frame.kind === "js" && frame.name === underName);
      if (at === 0) add(spent, "(its own code)");
      else if (at > 0) {
        const below = frames.slice(0, at).find((frame) => frame.kind === "js");
        add(spent, below === undefined ? `${frames[0]!.kind} code it called` : below.name);
      }
    }
  }
  console.log(`${bare ? "bare proxy" : "Switchyard"}, ${stream ? "streamed" : "whole answers"}, ${lanes} connections: ${completed} requests in ${process.env.MEASURE_MS ?? 10_000} ms, ${code.names.length} compiled code records`);
  table("thread: kind of code", byThread, perRequest, 20);
  table(`${requestThread || "request thread"}: first JavaScript function up the stack`, byFunction, perRequest, top);
  const threadSamples = [...byFunction.values()].reduce((sum, n) => sum + n, 0);
  table(`${requestThread || "request thread"}: every JavaScript function on the stack (inclusive)`, inclusive, perRequest, top, threadSamples);
  table(`${requestThread || "request thread"}: native code (runtime, kernel, libc) by the JavaScript function that called it`, nativeByCaller, perRequest, top, threadSamples);
  for (const [underName, spent] of under) table(`under ${underName}`, spent, perRequest, top, threadSamples);
  rmSync(dumpDir, { recursive: true, force: true });
}

try {
  await main();
} finally {
  await cleanupAll();
}
process.exit(0);

/**
 * `npx bun test/bench/memory.ts`: the resident memory of one Switchyard process (default
 * configuration, metered, on a throwaway PostgreSQL, the mock upstreams in another
 * process), in these figures:
 *
 *   idle            after start, one request and 2 s of quiet
 *   idle, warm      after 3 s of the load below and 5 s of quiet (compiled code, caches kept for good)
 *   peak under load 64 connections of same-protocol chat completions for LOAD_MS (the bench's load generator)
 *   10 s after      the last sample of the 10 s after the load stopped
 *   peak, heavy     the fuzz suite's heavy bodies (test/fuzz/heavy-bodies.ts), HEAVY_LANES at a time
 *   10 s after heavy
 *
 * plus the RSS each second after the load, and the most metering rows the write buffers
 * held during it (switchyard_buffered_rows). The machine's other load moves the peak under
 * load with the rps it allows; the idle and after figures repeat within a few MB.
 *
 * RSS is sampled every 100 ms from /proc/<pid>/status (VmRSS); each phase's peak is the
 * kernel's VmHWM, reset between phases through /proc/<pid>/clear_refs (so a spike between
 * two samples is counted too). A measurement, not a test: it is not part of `npm test`.
 *
 * Options: `--env NAME=value` (repeatable) sets server environment (e.g. WORKER_POOL_SIZE=1);
 * `--probe` preloads memory-probe.ts into the server, which writes its JavaScript heap
 * figures at each phase's end (before and after a full collection; `--probe-peak` also as
 * the load stops); `--bun-flag F` (repeatable) passes a flag to the server's bun (e.g.
 * `--smol`); `--skip-load` and `--skip-heavy` leave a phase out; `--load-ms N` changes the
 * load's length; `--per-case` first sends each heavy case alone and prints the peak each
 * one reaches. `--env SWITCHYARD_ROOT=<dir>` runs another checkout (an earlier commit) for
 * a before/after comparison.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { heavyCases, type HeavyCase } from "../fuzz/heavy-bodies";
import { chunkedBody, rawHttp } from "../support/raw-http";
import { cleanupAll, firstLineWithin, spawnChild } from "./children";
import { chatTarget, requestOnce, runLanes } from "./load";
import { startDatabase, startSwitchyard, tempDir, type SwitchyardProcess } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";
const HERE = import.meta.dir;
const LANES = 64;
const AFTER_MS = 10_000;
const HEAVY_LANES = 3;
const HEAVY_ROUNDS = 2;
const SAME_MODEL = "mock-openai/gpt-4o-mini";
const CROSS_MODEL = "mock-anthropic/claude-sonnet-4-5";

function option(name: string): string[] {
  const values: string[] = [];
  process.argv.forEach((arg, index) => {
    if (arg === name && process.argv[index + 1] !== undefined) values.push(process.argv[index + 1]!);
  });
  return values;
}
const flag = (name: string) => process.argv.includes(name);
const LOAD_MS = Number(option("--load-ms")[0] ?? 20_000);
const extraEnv = Object.fromEntries(option("--env").map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));

function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? Number.NaN);
}

/** Resets the process's VmHWM to its current RSS (Linux: "5" to clear_refs); false when refused. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Samples VmRSS every 100 ms until stopped; the phase's peak is the larger of the samples and VmHWM. */
function samplePhase(pid: number) {
  const hwmReset = resetPeak(pid);
  const samples: number[] = [];
  const take = () => samples.push(statusKb(pid, "VmRSS"));
  take();
  const timer = setInterval(take, 100);
  return {
    stop() {
      clearInterval(timer);
      take();
      const sampled = Math.max(...samples);
      return { peakKb: hwmReset ? Math.max(sampled, statusKb(pid, "VmHWM")) : sampled, lastKb: samples.at(-1)!, samples };
    },
  };
}

async function sendHeavy(url: string, apiKey: string, heavy: HeavyCase): Promise<string | undefined> {
  const body = heavy.body();
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  let status: number;
  let text: string;
  if (heavy.chunked) {
    let head = `POST ${heavy.path} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nTransfer-Encoding: chunked`;
    for (const [name, value] of Object.entries(headers)) head += `\r\n${name}: ${value}`;
    const response = await rawHttp(url, head, chunkedBody(body, 64 * 1024), 120_000);
    ({ status, body: text } = response);
  } else {
    const response = await fetch(url + heavy.path, { method: "POST", headers, body });
    status = response.status;
    text = await response.text();
  }
  return heavy.expect.includes(status) ? undefined : `${heavy.name}: HTTP ${status} (expected ${heavy.expect.join(" or ")}): ${text.slice(0, 200)}`;
}

const mb = (kb: number) => (kb / 1024).toFixed(0);

/**
 * The most rows the server's write buffers held (switchyard_buffered_rows, all tables), read
 * from /metrics every 500 ms, and the flushes committed meanwhile (switchyard_write_flush_seconds):
 * how many, and how long one took on average.
 */
function sampleBacklog(url: string) {
  let most = 0;
  let running = true;
  const flushes = async () => {
    const text = await fetch(`${url}/metrics`).then((r) => r.text(), () => "");
    const read = (name: string) => Number(new RegExp(`^switchyard_write_flush_seconds_${name} (\\S+)`, "m").exec(text)?.[1] ?? Number.NaN);
    return { sum: read("sum"), count: read("count"), text };
  };
  const start = flushes();
  const loop = (async () => {
    while (running) {
      const { text } = await flushes();
      let sum = 0;
      for (const match of text.matchAll(/^switchyard_buffered_rows\{[^}]*\} (\d+)/gm)) sum += Number(match[1]);
      most = Math.max(most, sum);
      await Bun.sleep(500);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const [before, after] = [await start, await flushes()];
      const count = after.count - before.count;
      return { most, flushes: count, meanFlushMs: ((after.sum - before.sum) / count) * 1000 };
    },
  };
}

/** Asks the probe in the server for its heap figures (SIGUSR2) and returns what it wrote. */
async function probe(server: SwitchyardProcess, file: string, label: string): Promise<string> {
  const before = readFileSync(file, "utf8").length;
  process.kill(server.pid, "SIGUSR2");
  for (let i = 0; i < 100; i++) {
    await Bun.sleep(50);
    const text = readFileSync(file, "utf8");
    if (text.length > before && text.endsWith("\n") && text.slice(before).split("\n").length > 2) return `${label}\n${text.slice(before)}`;
  }
  return `${label}: the probe did not answer`;
}

async function main(): Promise<number> {
  const say = (message: string) => console.error(`[memory ${new Date().toISOString().slice(11, 19)}] ${message}`);
  const mockChild = spawnChild("mock upstreams", [process.execPath, join(HERE, "start-mock.ts"), MOCK_KEY]);
  const mockUrls = JSON.parse(await firstLineWithin(mockChild, 30_000)) as Record<string, string>;
  const mocks = [
    { protocol: "openai-chat" as const, baseUrl: mockUrls["openai-chat"]! },
    { protocol: "anthropic-messages" as const, baseUrl: mockUrls["anthropic-messages"]! },
  ];
  const database = await startDatabase();
  const probeFile = join(tempDir("switchyard-memory-probe-"), "probe.txt");
  writeFileSync(probeFile, "");
  const probing = flag("--probe");
  const server = await startSwitchyard({
    mode: "memory",
    env: { ...extraEnv, ...(probing ? { MEMORY_PROBE_FILE: probeFile } : {}) },
    database,
    mocks,
    mockKey: MOCK_KEY,
    bunFlags: [...option("--bun-flag"), ...(probing ? ["--preload", join(HERE, "memory-probe.ts")] : [])],
  });
  const limit = Number(extraEnv.MAX_INFERENCE_BODY_BYTES ?? 32 * 1024 * 1024);
  const probes: string[] = [];
  const perCase: string[] = [];
  const errors: string[] = [];
  try {
    const target = chatTarget("same", server.url, server.apiKey, SAME_MODEL);
    const sanity = await requestOnce(target);
    if (sanity !== undefined) throw new Error(`the first request failed: ${sanity}`);
    await Bun.sleep(2_000);
    const idleKb = statusKb(server.pid, "VmRSS");
    say(`idle ${mb(idleKb)} MB`);
    if (probing) probes.push(await probe(server, probeFile, "idle"));

    // Warm: what a server that has served keeps for good (compiled code, caches, prepared
    // statements, a grown allocator), after 3 s of the same load and 5 s of quiet.
    let warmIdleKb = Number.NaN;
    if (!flag("--skip-load")) {
      const warm = await runLanes(target, LANES, 3_000);
      if (warm.errors.count > 0) errors.push(`warm-up: ${warm.errors.count} errors, first: ${warm.errors.first}`);
      await Bun.sleep(5_000);
      warmIdleKb = statusKb(server.pid, "VmRSS");
      say(`idle after a warm-up ${mb(warmIdleKb)} MB`);
    }

    let loadPeakKb = Number.NaN;
    let afterKb = Number.NaN;
    let afterMinKb = Number.NaN;
    let rps = Number.NaN;
    let afterBySecond = "";
    let mostBuffered = Number.NaN;
    let flushes = "";
    if (!flag("--skip-load")) {
      say(`load: ${LANES} connections for ${LOAD_MS / 1000} s`);
      const phase = samplePhase(server.pid);
      const backlog = sampleBacklog(server.url);
      const run = await runLanes(target, LANES, LOAD_MS);
      loadPeakKb = phase.stop().peakKb;
      const writes = await backlog.stop();
      mostBuffered = writes.most;
      flushes = `${writes.flushes} flushes, ${writes.meanFlushMs.toFixed(0)} ms each on average`;
      rps = run.completed / run.seconds;
      if (run.errors.count > 0) errors.push(`load: ${run.errors.count} errors, first: ${run.errors.first}`);
      say(`load: ${rps.toFixed(0)} rps, peak ${mb(loadPeakKb)} MB; sampling ${AFTER_MS / 1000} s after`);
      if (probing && flag("--probe-peak")) probes.push(await probe(server, probeFile, "as the load stops"));
      const after = samplePhase(server.pid);
      await Bun.sleep(AFTER_MS);
      const afterPhase = after.stop();
      afterKb = afterPhase.lastKb;
      afterMinKb = Math.min(...afterPhase.samples);
      afterBySecond = afterPhase.samples.filter((_, index) => index % 10 === 0).map(mb).join(" ");
      say(`10 s after: ${mb(afterKb)} MB`);
      if (probing) probes.push(await probe(server, probeFile, "10 s after the load"));
    }

    if (flag("--per-case")) {
      // One heavy case at a time, each after a quiet second: what each one alone raises the peak to.
      for (const heavy of heavyCases(limit, SAME_MODEL, CROSS_MODEL)) {
        await Bun.sleep(1_000);
        const startKb = statusKb(server.pid, "VmRSS");
        const phase = samplePhase(server.pid);
        const error = await sendHeavy(server.url, server.apiKey, heavy).catch((e: unknown) => `${heavy.name}: ${e instanceof Error ? e.message : String(e)}`);
        if (error !== undefined) errors.push(error);
        const { peakKb, lastKb } = phase.stop();
        perCase.push(`| ${heavy.name} | ${mb(startKb)} MB | ${mb(peakKb)} MB | ${mb(lastKb)} MB |`);
      }
    }

    let heavyPeakKb = Number.NaN;
    let heavyAfterKb = Number.NaN;
    if (!flag("--skip-heavy")) {
      const cases = heavyCases(limit, SAME_MODEL, CROSS_MODEL);
      say(`heavy input: ${cases.length} cases × ${HEAVY_ROUNDS}, ${HEAVY_LANES} at a time`);
      const queue = Array.from({ length: HEAVY_ROUNDS }, () => cases).flat();
      const phase = samplePhase(server.pid);
      await Promise.all(
        Array.from({ length: HEAVY_LANES }, async () => {
          for (let heavy = queue.shift(); heavy !== undefined; heavy = queue.shift()) {
            const error = await sendHeavy(server.url, server.apiKey, heavy).catch((e: unknown) => `${heavy.name}: ${e instanceof Error ? e.message : String(e)}`);
            if (error !== undefined) errors.push(error);
          }
        }),
      );
      heavyPeakKb = phase.stop().peakKb;
      await Bun.sleep(AFTER_MS);
      heavyAfterKb = statusKb(server.pid, "VmRSS");
      say(`heavy input: peak ${mb(heavyPeakKb)} MB, ${mb(heavyAfterKb)} MB 10 s later`);
      if (probing) probes.push(await probe(server, probeFile, "10 s after the heavy input"));
    }
    const stillServes = await requestOnce(target);
    if (stillServes !== undefined) errors.push(`no longer serves: ${stillServes}`);

    const env = Object.entries(extraEnv).map(([k, v]) => `${k}=${v}`).join(" ") || "defaults";
    console.log(`Switchyard memory (${env}; ${database.kind}; Bun ${Bun.version}; ${new Date().toISOString().slice(0, 16)}Z)\n`);
    console.log("| idle | idle, warm | peak under load (64 conn.) | 10 s after (lowest) | peak, heavy input | 10 s after heavy | load rps |");
    console.log("|--:|--:|--:|--:|--:|--:|--:|");
    console.log(`| ${mb(idleKb)} MB | ${mb(warmIdleKb)} MB | ${mb(loadPeakKb)} MB | ${mb(afterKb)} MB (${mb(afterMinKb)}) | ${mb(heavyPeakKb)} MB | ${mb(heavyAfterKb)} MB | ${rps.toFixed(0)} |`);
    if (afterBySecond !== "") console.log(`\nRSS each second after the load (MB): ${afterBySecond}; most metering rows buffered during the load: ${mostBuffered}; ${flushes}`);
    if (perCase.length > 0) console.log(`\n| heavy case, alone | RSS before | peak | after |\n|---|--:|--:|--:|\n${perCase.join("\n")}`);
    if (probes.length > 0) console.log(`\nprobe (MB):\n${probes.join("\n")}`);
    if (errors.length > 0) console.log(`\nerrors:\n${errors.slice(0, 10).join("\n")}`);
    return errors.length > 0 ? 1 : 0;
  } finally {
    await server.stop();
    cleanupAll();
  }
}

try {
  process.exit(await main());
} catch (error) {
  console.error(`memory bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  cleanupAll();
  process.exit(1);
}

/**
 * `bun run bench`: Switchyard against a bare Bun proxy and the upstream itself, all on
 * 127.0.0.1, in one run (on a small noisy machine only ratios from the same run mean
 * anything). Prints Markdown — one table per TRANSLATION_MODE plus a "where the time
 * goes" table — and writes it to test/bench/last-results.md. Exits 1 when any request
 * failed. `--quick` runs a much shorter version (a smoke test of the bench itself).
 *
 * Processes: the mock upstreams (openai-chat, anthropic-messages), the bare proxy and
 * two Switchyards (pool and inline, on one throwaway PostgreSQL) are children; this
 * process only generates load. BENCH_SERVER_PROCESSES=2 adds the default served by two
 * server processes (SERVER_PROCESSES=2); BENCH_TRACING=1 adds it with request traces exported
 * to a collector stand-in (otlp-sink.ts). Latency loops interleave their targets request by request
 * and throughput runs in interleaved slices, so drift on the machine hits all alike.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { UpstreamProtocol } from "../support/mock-upstreams";
import { cleanupAll, firstLineWithin, spawnChild, waitForPing } from "./children";
import { chatTarget, measureFirstByte, measureLatency, measureThroughput, requestOnce, runLanes, type Target } from "./load";
import { renderReport, type ModeResult, type PathResult, type Probe } from "./report";
import { PACED_STREAM_SUFFIX, startDatabase, startSwitchyard, type SwitchyardProcess } from "./switchyard-process";
import { measurePolicyCosts, policyPaths, renderPolicyCosts, totalCpuUs } from "./policy-paths";
import { cpuTicks, postgresTicks, processTreeTicks, threadDelta, TICKS_PER_SECOND } from "./process-cpu";
import { jitTicks, warmUntilJitQuiet, type WarmupResult } from "./jit-warmup";

const quick = process.argv.includes("--quick");
const SETTINGS = quick
  ? { steadyWarmupMs: 500, latencyRounds: 200, latencyWarmup: 50, probeRounds: 100, ttfbRounds: 100, ttfbWarmup: 20, lanes: 64, sliceMs: 500, slices: 1, streamSlices: 1, warmupMs: 200 }
  : { steadyWarmupMs: 6_000, latencyRounds: 2000, latencyWarmup: 200, probeRounds: 1000, ttfbRounds: 1000, ttfbWarmup: 100, lanes: 64, sliceMs: 2500, slices: 4, streamSlices: 2, warmupMs: 500 };
/** The speed issue measures streams under load at 16 connections. */
const STREAM_LANES = 16;

const MOCK_KEY = "bench-mock-key";
const HERE = import.meta.dir;
/** One request per target before measuring: the answer must be a real chat completion (or stream). */
async function sanityCheck(target: Target, stream: boolean): Promise<void> {
  const response = await fetch(target.url, { method: "POST", headers: target.headers, body: target.body });
  const text = await response.text();
  const fail = (why: string) => new Error(`sanity check of "${target.name}" failed: ${why}\n${response.status} ${text.slice(0, 500)}`);
  if (response.status !== 200) throw fail("status is not 200");
  if (stream) {
    if (!text.includes("data: ") || !text.includes('"chat.completion.chunk"')) throw fail("not a chat-completions event stream");
    return;
  }
  const parsed: unknown = JSON.parse(text);
  const choices = typeof parsed === "object" && parsed !== null && "choices" in parsed ? parsed.choices : undefined;
  if (!Array.isArray(choices) || choices.length === 0) throw fail("no choices in the chat completion");
}

function machine(): string {
  const nproc = spawnSync("nproc", { encoding: "utf8" }).stdout.trim() || String(navigator.hardwareConcurrency);
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? "unknown CPU";
  return `${nproc} cores (nproc; ${cpu}), Bun ${Bun.version}, ${process.platform}-${process.arch}`;
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const clock = performance.now();
  const say = (message: string) => console.error(`[bench ${((performance.now() - clock) / 1000).toFixed(1)}s] ${message}`);
  const switchyards: SwitchyardProcess[] = [];
  try {
    say("starting mock upstreams, bare proxy, PostgreSQL and the Switchyard variants");
    const mockChild = spawnChild("mock upstreams", [process.execPath, join(HERE, "start-mock.ts"), MOCK_KEY]);
    const mockUrls = JSON.parse(await firstLineWithin(mockChild, 30_000)) as Record<string, string>;
    const openaiBase = mockUrls["openai-chat"];
    const anthropicBase = mockUrls["anthropic-messages"];
    if (openaiBase === undefined || anthropicBase === undefined) throw new Error(`mock child printed ${JSON.stringify(mockUrls)}`);
    const mocks: { protocol: UpstreamProtocol; baseUrl: string }[] = [
      { protocol: "openai-chat", baseUrl: openaiBase },
      { protocol: "anthropic-messages", baseUrl: anthropicBase },
    ];

    const proxyChild = spawnChild("bare proxy", [process.execPath, join(HERE, "bare-proxy.ts"), openaiBase]);
    const proxyUrl = await firstLineWithin(proxyChild, 30_000);
    await waitForPing(proxyUrl, proxyChild, 30_000);

    const database = await startDatabase();
    // The default (auto), the all-workers pool for comparison, and auto with metering off:
    // metering's cost is the ratio of the first and the last.
    const variants: Array<{ mode: string; env: Record<string, string> }> = [
      { mode: "auto", env: { TRANSLATION_MODE: "auto" } },
      { mode: "pool", env: { TRANSLATION_MODE: "pool" } },
      { mode: "auto, metering off", env: { TRANSLATION_MODE: "auto", METERING: "off" } },
    ];
    // BENCH_SERVER_PROCESSES=2 (off by default): the default again as that many server
    // processes on one port (SERVER_PROCESSES), for docs/operations.md "Server processes".
    // Its memory figures are the primary's, which serves nothing.
    const processes = process.env.BENCH_SERVER_PROCESSES;
    if (processes !== undefined && processes !== "" && processes !== "1") {
      variants.push({ mode: `auto, ${processes} processes`, env: { TRANSLATION_MODE: "auto", SERVER_PROCESSES: processes } });
    }
    // BENCH_TRACING=1 (off by default): the default again with request traces on, exported
    // over OTLP/HTTP (protobuf, the SDK's default batching) to a collector stand-in, side by
    // side with the default, whose tracing is off (docs/operations.md "Traces").
    if (process.env.BENCH_TRACING === "1") {
      const sink = spawnChild("OTLP collector stand-in", [process.execPath, join(HERE, "otlp-sink.ts")]);
      const endpoint = await firstLineWithin(sink, 30_000);
      variants.push({ mode: "auto, tracing on", env: { TRANSLATION_MODE: "auto", OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
    }
    for (const variant of variants) {
      switchyards.push(await startSwitchyard({ ...variant, database, mocks, mockKey: MOCK_KEY }));
    }
    const idleRssKb = new Map(switchyards.map((s) => [s.mode, s.memoryKb().rss]));

    // The mock's origin: its baseUrl is origin + "/v1".
    const mockOrigin = openaiBase.replace(/\/v1$/, "");
    const nonStream = (stream: boolean) => {
      const list: Target[] = [
        chatTarget("direct", mockOrigin, MOCK_KEY, "gpt-4o-mini", stream),
        chatTarget("proxy", proxyUrl, MOCK_KEY, "gpt-4o-mini", stream),
      ];
      for (const s of switchyards) {
        list.push(chatTarget(`${s.mode}:same`, s.url, s.apiKey, "mock-openai/gpt-4o-mini", stream));
        list.push(chatTarget(`${s.mode}:cross`, s.url, s.apiKey, "mock-anthropic/claude-sonnet-4-5", stream));
      }
      return list;
    };
    const plain = nonStream(false);
    const streaming = nonStream(true);
    for (const target of plain) await sanityCheck(target, false);
    for (const target of streaming) await sanityCheck(target, true);

    // Steady state, not JIT warm-up: code that runs per metering flush or per stream end
    // (tens of times a second, not per request) takes tens of seconds of load before the JIT
    // has compiled it; a long-running gateway is past that (jit-warmup.ts).
    say(`warming every path up at ${SETTINGS.lanes} connections, untimed: ${SETTINGS.steadyWarmupMs / 1000} s for the mock and the proxy, each Switchyard until its JIT is quiet`);
    for (const target of plain.slice(0, 2)) await runLanes(target, SETTINGS.lanes, SETTINGS.steadyWarmupMs / 2);
    for (const target of streaming.slice(0, 2)) await runLanes(target, STREAM_LANES, SETTINGS.steadyWarmupMs / 2);
    const warmups = new Map<string, WarmupResult>();
    for (const s of switchyards) {
      const own = [...plain, ...streaming].filter((target) => target.name.startsWith(`${s.mode}:`));
      const warmup = await warmUntilJitQuiet(s.pid, own, SETTINGS.lanes, { minMs: SETTINGS.steadyWarmupMs, maxMs: SETTINGS.steadyWarmupMs * 10 });
      say(`  ${s.mode}: ${warmup.seconds.toFixed(0)} s, JIT at ${(warmup.lastJitShare * 100).toFixed(1)} % of a core${warmup.quiet ? "" : " (cap reached)"}`);
      warmups.set(s.mode, warmup);
    }
    const jitBefore = new Map(switchyards.map((s) => [s.mode, jitTicks(s.pid)]));

    const measuredFrom = performance.now();
    say(`latency at concurrency 1: ${SETTINGS.latencyRounds} rounds over ${plain.length} paths`);
    const latency = await measureLatency(plain, SETTINGS.latencyRounds, SETTINGS.latencyWarmup);

    const probeTargets: Target[] = [{ name: "proxy:ping", url: `${proxyUrl}/ping`, method: "GET" }];
    for (const s of switchyards) {
      probeTargets.push({ name: `${s.mode}:ping`, url: `${s.url}/ping`, method: "GET" });
      probeTargets.push(chatTarget(`${s.mode}:unknown`, s.url, s.apiKey, "mock-openai/no-such-model", false, 404));
    }
    say(`probes (GET /ping, unknown model): ${SETTINGS.probeRounds} rounds`);
    const probes = await measureLatency(probeTargets, SETTINGS.probeRounds, SETTINGS.latencyWarmup);

    say(`streaming time to first byte: ${SETTINGS.ttfbRounds} rounds`);
    const firstByte = await measureFirstByte(streaming, SETTINGS.ttfbRounds, SETTINGS.ttfbWarmup);

    const seconds = (SETTINGS.sliceMs * SETTINGS.slices) / 1000;
    say(`throughput at ${SETTINGS.lanes} connections: ${seconds} s per path in ${SETTINGS.slices} interleaved slices`);
    // CPU of the processes that serve each path: the mock itself for "direct", the proxy's
    // process, and for a Switchyard its process tree plus the PostgreSQL cluster.
    const postgres = () => (database.postmasterPid === undefined ? 0 : postgresTicks(database.postmasterPid));
    const cpuOf = (target: Target): number => {
      if (target.name === "direct") return cpuTicks(mockChild.process.pid);
      if (target.name === "proxy" || target.name.startsWith("proxy:")) return cpuTicks(proxyChild.process.pid);
      const server = switchyards.find((s) => target.name.startsWith(`${s.mode}:`));
      return server === undefined ? 0 : processTreeTicks(server.pid) + postgres();
    };
    const throughput = await measureThroughput(plain, SETTINGS, cpuOf);

    // Streams under load: the same-protocol paths only (the proxy forwards the mock's bytes).
    const streamTargets = streaming.filter((target) => target.name === "direct" || target.name === "proxy" || target.name.endsWith(":same"));
    say(`stream throughput at ${STREAM_LANES} connections: ${streamTargets.length} paths, ${SETTINGS.streamSlices} slices each`);
    const streamThroughput = await measureThroughput(streamTargets, { ...SETTINGS, lanes: STREAM_LANES, slices: SETTINGS.streamSlices }, cpuOf);

    // A stream as providers send one (PACED_STREAM_SUFFIX), through the proxy and the default
    // Switchyard: what each chunk costs, which the one-chunk stream above never shows.
    const pacedTargets = [
      chatTarget("proxy:paced", proxyUrl, MOCK_KEY, `gpt-4o-mini@${PACED_STREAM_SUFFIX}`, true),
      chatTarget(`${switchyards[0]!.mode}:paced`, switchyards[0]!.url, switchyards[0]!.apiKey, `mock-openai/gpt-4o-mini@${PACED_STREAM_SUFFIX}`, true),
    ];
    for (const target of pacedTargets) await sanityCheck(target, true);
    for (const target of pacedTargets) await runLanes(target, STREAM_LANES, SETTINGS.steadyWarmupMs / 2);
    say(`paced streams (100 chunks, 1 ms apart) at ${STREAM_LANES} connections: ${pacedTargets.length} paths, ${SETTINGS.streamSlices} slices each`);
    const pacedThroughput = await measureThroughput(pacedTargets, { ...SETTINGS, lanes: STREAM_LANES, slices: SETTINGS.streamSlices }, cpuOf);

    // The compiler's share while the paths above were measured (the policy paths warm up below).
    const measuredSeconds = (performance.now() - measuredFrom) / 1000;
    const jitShare = new Map(switchyards.map((s) => [s.mode, threadDelta(jitBefore.get(s.mode)!, jitTicks(s.pid)) / TICKS_PER_SECOND / measuredSeconds]));
    // The policy engine's cost, on the default variant: the metered path with no policy,
    // with a budget, a rate limit and a guardrail, and a stream with a redact pattern.
    const metered = switchyards[0]!;
    const policyTargets = await policyPaths(metered.url, metered.apiKey);
    for (const { target } of policyTargets) await sanityCheck(target, target.body?.includes('"stream":true') ?? false);
    // The policy paths run code the plain paths never did (the guardrail's scan, the budget
    // and rate-limit counters): warmed like the rest until the compiler is quiet.
    const policyWarmup = await warmUntilJitQuiet(metered.pid, policyTargets.map(({ target }) => target), SETTINGS.lanes, { minMs: SETTINGS.steadyWarmupMs, maxMs: SETTINGS.steadyWarmupMs * 10 });
    say(`  policy paths warmed ${policyWarmup.seconds.toFixed(0)} s, JIT at ${(policyWarmup.lastJitShare * 100).toFixed(1)} % of a core${policyWarmup.quiet ? "" : " (cap reached)"}`);
    say(`policy engine: ${policyTargets.length} paths on Switchyard (${metered.mode}), ${seconds} s each in ${SETTINGS.slices} interleaved slices`);
    const policyCosts = await measurePolicyCosts(policyTargets, metered.pid, database.postmasterPid, SETTINGS);

    const memory = new Map(switchyards.map((s) => [s.mode, s.memoryKb()]));
    // Memory once the load is over: every gateway has had nothing to do for 10 s.
    say("resident memory 10 s after the last load");
    await Bun.sleep(10_000);
    const settledRssKb = new Map(switchyards.map((s) => [s.mode, s.memoryKb().rss]));
    // A last look that each Switchyard still serves (a crash mid-run shows up as errors too).
    const problems: string[] = [];
    for (const s of switchyards) {
      const error = await requestOnce(chatTarget("final", s.url, s.apiKey, "mock-openai/gpt-4o-mini", false));
      if (error !== undefined) problems.push(`Switchyard (${s.mode}) no longer serves after the run: ${error}`);
    }

    const path = (name: string, label: string): PathResult => ({
      label,
      latency: latency.get(name)!,
      firstByte: firstByte.get(name)!,
      throughput: throughput.get(name)!,
      streamThroughput: streamThroughput.get(name),
    });
    const modes: ModeResult[] = switchyards.map((s) => ({
      mode: s.mode,
      same: path(`${s.mode}:same`, "Switchyard, same protocol (chat → openai-chat)"),
      cross: path(`${s.mode}:cross`, "Switchyard, cross protocol (chat → anthropic-messages)"),
      idleRssKb: idleRssKb.get(s.mode) ?? Number.NaN,
      peakRssKb: memory.get(s.mode)?.peak ?? Number.NaN,
      settledRssKb: settledRssKb.get(s.mode) ?? Number.NaN,
      warmup: warmups.get(s.mode)!,
      jitShareWhileMeasured: jitShare.get(s.mode) ?? Number.NaN,
      exited: !Number.isFinite(memory.get(s.mode)?.rss ?? Number.NaN),
      stderr: s.output(),
    }));
    const probeList: Probe[] = [...probes].map(([name, samples]) => ({ name, samples }));
    const report = renderReport({
      date: startedAt,
      machine: machine(),
      database: database.kind,
      settings: SETTINGS,
      quick,
      direct: path("direct", "direct to mock"),
      proxy: path("proxy", "bare Bun proxy"),
      modes,
      probes: probeList,
      problems,
      wallSeconds: (performance.now() - clock) / 1000,
      streamLanes: STREAM_LANES,
      pacedStream: { proxy: pacedThroughput.get("proxy:paced")!, switchyard: pacedThroughput.get(`${switchyards[0]!.mode}:paced`)! },
      policy:
        policyCosts.length >= 2
          ? { none: { rps: policyCosts[0]!.rps, cpuUs: totalCpuUs(policyCosts[0]!) }, governed: { rps: policyCosts[1]!.rps, cpuUs: totalCpuUs(policyCosts[1]!) } }
          : undefined,
    });
    const markdown = `${report.markdown}\n${renderPolicyCosts(metered.mode, policyCosts)}\n`;
    console.log(markdown);
    writeFileSync(join(HERE, "last-results.md"), markdown);
    say(`wrote test/bench/last-results.md`);
    return report.errors + policyCosts.reduce((sum, cost) => sum + cost.errors, 0) > 0 ? 1 : 0;
  } finally {
    await Promise.all(switchyards.map((s) => s.stop()));
    cleanupAll();
  }
}

// However the servers misbehave (a request that never ends), the bench ends.
const WATCHDOG_MS = quick ? 120_000 : 600_000;
setTimeout(() => {
  console.error(`bench failed: still running after ${WATCHDOG_MS / 1000} s (a request hung?)`);
  cleanupAll();
  process.exit(1);
}, WATCHDOG_MS).unref();

try {
  process.exit(await main());
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  cleanupAll();
  process.exit(1);
}

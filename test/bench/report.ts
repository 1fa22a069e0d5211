/** The bench's Markdown: one table per TRANSLATION_MODE, the issue's targets, and where the time goes. */
import type { WarmupResult } from "./jit-warmup";
import { percentileMs, type ErrorTally, type Samples, type Throughput } from "./load";

export interface PathResult {
  label: string;
  latency: Samples;
  firstByte: Samples;
  throughput: Throughput;
  /** Streams at STREAM_LANES connections (measured for the direct, proxy and same-protocol paths only). */
  streamThroughput?: Throughput;
}

export interface ModeResult {
  mode: string;
  same: PathResult;
  cross: PathResult;
  idleRssKb: number;
  peakRssKb: number;
  /** Resident memory 10 s after the last load (the idle collector runs after 2 s of quiet). */
  settledRssKb: number;
  /** The untimed load before any measurement, until the JIT compiler fell quiet. */
  warmup: WarmupResult;
  /** The JIT compiler threads' share of one core over all the measured throughput slices. */
  jitShareWhileMeasured: number;
  exited: boolean;
  /** The tail of the process's output (LOG_LEVEL=warn: only warnings and errors). */
  stderr: string;
}

export interface Probe {
  name: string;
  samples: Samples;
}

export interface ReportInput {
  date: Date;
  machine: string;
  database: string;
  settings: { steadyWarmupMs: number; latencyRounds: number; probeRounds: number; ttfbRounds: number; lanes: number; sliceMs: number; slices: number; warmupMs: number };
  quick: boolean;
  direct: PathResult;
  proxy: PathResult;
  modes: ModeResult[];
  probes: Probe[];
  /** Failures outside the measured requests (a server that stopped serving). */
  problems: string[];
  wallSeconds: number;
  /** The governed key against the same key shape without policies, same Switchyard, same run. */
  policy?: { none: { rps: number; cpuUs: number }; governed: { rps: number; cpuUs: number } };
  streamLanes: number;
  /** Streams of 100 chunks 1 ms apart at streamLanes connections, the bare proxy and the default Switchyard (informational). */
  pacedStream?: { proxy: Throughput; switchyard: Throughput };
}

/** The speed issue's targets, each a ratio measured in one run. */
const TARGETS = {
  meteredCpuVsProxy: 2.5,
  crossCpuVsSame: 1.15,
  meteredCpuVsUnmetered: 1.4,
  p99VsProxy: 2.5,
  streamFirstByteOverDirectMs: 0.3,
  streamRpsVsProxy: 0.6,
  streamCpuVsProxy: 2.0,
  governedRps: 0.9,
  governedCpu: 1.25,
  peakRssMb: 150,
  settledRssVsIdle: 1.1,
};

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(3) : "n/a");
const signedMs = (value: number) => (Number.isFinite(value) ? `${value >= 0 ? "+" : "−"}${Math.abs(value).toFixed(3)}` : "n/a");
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : "n/a");
const integer = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "n/a");
const mb = (kb: number) => (Number.isFinite(kb) ? `${(kb / 1024).toFixed(0)} MB` : "n/a");
const verdict = (pass: boolean) => (pass ? "PASS" : "**MISS**");

const p50 = (samples: Samples) => percentileMs(samples.ns, 0.5);
const p99 = (samples: Samples) => percentileMs(samples.ns, 0.99);
const rps = (path: PathResult) => path.throughput.completed / path.throughput.seconds;
const errorsOf = (path: PathResult) => path.latency.errors.count + path.firstByte.errors.count + path.throughput.errors.count;

function firstError(path: PathResult): string | undefined {
  const tallies: ErrorTally[] = [path.latency.errors, path.firstByte.errors, path.throughput.errors];
  return tallies.find((tally) => tally.first !== undefined)?.first;
}

function pathRow(path: PathResult, direct: PathResult, proxy: PathResult): string {
  const isDirect = path === direct;
  const overDirect = isDirect ? "—" : `${signedMs(p50(path.latency) - p50(direct.latency))} / ${signedMs(p99(path.latency) - p99(direct.latency))}`;
  const overProxy =
    isDirect || path === proxy ? "—" : `${signedMs(p50(path.latency) - p50(proxy.latency))} / ${signedMs(p99(path.latency) - p99(proxy.latency))}`;
  return (
    `| ${path.label} | ${ms(p50(path.latency))} | ${ms(p99(path.latency))} | ${overDirect} | ${overProxy} | ` +
    `${integer(rps(path))} | ${ratio(rps(path) / rps(proxy))} | ${ms(p50(path.firstByte))} | ${errorsOf(path)} |`
  );
}

function logLines(text: string): string[] {
  return text.split("\n").filter((line) => /"level":"(warn|error)"/.test(line));
}

function modeSection(input: ReportInput, mode: ModeResult): string[] {
  const { direct, proxy } = input;
  const lines = [
    `### Switchyard (${mode.mode})`,
    "",
    "| path | p50 ms | p99 ms | added p50 / p99 over direct, ms | added p50 / p99 over bare proxy, ms | rps @ " +
      `${input.settings.lanes} conns | rps ÷ bare proxy | stream TTFB p50 ms | errors |`,
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ...[direct, proxy, mode.same, mode.cross].map((path) => pathRow(path, direct, proxy)),
    "",
  ];
  const logged = logLines(mode.stderr);
  lines.push(
    `Switchyard process memory: peak RSS ${mb(mode.peakRssKb)} (${mode.exited ? "**the process exited during the run**; last VmHWM sample" : "VmHWM at the end of the run"}), ${mb(mode.idleRssKb)} idle after start, ${mb(mode.settledRssKb)} 10 s after the last load. ` +
      `JIT compiler threads while measured: ${(mode.jitShareWhileMeasured * 100).toFixed(1)} % of a core (threads that exited meanwhile not counted).` +
      (logged.length > 0 ? ` It logged ${logged.length} warn/error lines, e.g. \`${logged[0]!.slice(0, 300)}\`.` : " It logged no warnings or errors."),
    "",
  );
  return lines;
}

function probeSection(input: ReportInput): string[] {
  const probe = (name: string) => input.probes.find((p) => p.name === name)?.samples;
  const cell = (samples: Samples | undefined) => (samples === undefined ? "—" : ms(p50(samples)));
  const lines = [
    "### Where the time goes (concurrency 1, p50 ms)",
    "",
    `| probe | bare Bun proxy | ${input.modes.map((m) => `Switchyard ${m.mode}`).join(" | ")} |`,
    `|---|--:|${input.modes.map(() => "--:").join("|")}|`,
    `| GET /ping (Bun.serve; for Switchyard also Elysia routing and its request hooks) | ${cell(probe("proxy:ping"))} | ${input.modes.map((m) => cell(probe(`${m.mode}:ping`))).join(" | ")} |`,
    `| chat request for an unknown model: auth + body + decode + plan, 404, no upstream call | — | ${input.modes.map((m) => cell(probe(`${m.mode}:unknown`))).join(" | ")} |`,
    `| same protocol, full request | ${cell(input.proxy.latency)} | ${input.modes.map((m) => cell(m.same.latency)).join(" | ")} |`,
    `| cross protocol, full request | — | ${input.modes.map((m) => cell(m.cross.latency)).join(" | ")} |`,
    `| direct to mock (reference) | ${cell(input.direct.latency)} | ${input.modes.map(() => "").join(" | ")} |`,
    "",
  ];
  return lines;
}

export function renderReport(input: ReportInput): { markdown: string; errors: number } {
  const paths = [input.direct, input.proxy, ...input.modes.flatMap((m) => [m.same, m.cross])];
  const probeErrors = input.probes.reduce((sum, p) => sum + p.samples.errors.count, 0);
  const errors = paths.reduce((sum, path) => sum + errorsOf(path), 0) + probeErrors + input.problems.length;
  const { settings } = input;
  const lines = [
    `## Benchmark${input.quick ? " (--quick: a smoke run, not for the README)" : ""}`,
    "",
    `${input.date.toISOString().slice(0, 16).replace("T", " ")} UTC · ${input.machine} · database: ${input.database}.`,
    "",
  ];
  if (errors > 0) {
    lines.push(`> **⚠ ${errors} REQUESTS FAILED — THESE NUMBERS ARE NOT VALID.**`);
    for (const problem of input.problems) lines.push(`> ${problem.slice(0, 300)}`);
    for (const path of paths) {
      const first = firstError(path);
      if (first !== undefined) lines.push(`> ${path.label}: ${errorsOf(path)} failed, first: \`${first.slice(0, 300)}\``);
    }
    for (const probe of input.probes) {
      if (probe.samples.errors.first !== undefined) lines.push(`> probe ${probe.name}: ${probe.samples.errors.count} failed, first: \`${probe.samples.errors.first.slice(0, 300)}\``);
    }
    lines.push("");
  }
  lines.push(
    "Everything on 127.0.0.1, one run: the mock upstreams (test/support/mock-upstreams), a bare Bun proxy " +
      "(test/bench/bare-proxy.ts: forwards the bytes, no auth, no parsing) and both Switchyards (`bun src/main.ts`, default pool size) " +
      "are separate processes; the load generator is Bun `fetch` with keep-alive from one more process. " +
      `Before any measurement every path gets untimed load at ${settings.lanes} connections: ${(settings.steadyWarmupMs / 1000).toFixed(1)} s for the mock and the proxy, and each Switchyard ` +
      `until its JIT compiler threads used under 2 % of a core over a round of its paths (at least ${(settings.steadyWarmupMs / 1000).toFixed(1)} s; ` +
      `${input.modes.map((m) => `${m.mode} ${m.warmup.seconds.toFixed(0)} s${m.warmup.quiet ? "" : ", cap reached"}`).join(", ")}): a long-running gateway's steady state, not its warm-up. ` +
      `Latency: non-streaming chat completions at concurrency 1, ${settings.latencyRounds} requests per path, the paths interleaved request by request; ` +
      "added = p50 (p99) via − p50 (p99) direct. " +
      `Throughput: ${settings.lanes} concurrent connections, ${((settings.sliceMs * settings.slices) / 1000).toFixed(1)} s per path in ${settings.slices} interleaved slices (each after ${settings.warmupMs} ms of warm-up). ` +
      `Stream TTFB: \`stream: true\`, from sending to the first body chunk, ${settings.ttfbRounds} requests per path. ` +
      "Only ratios within this run are meaningful.",
    "",
  );
  lines.push(...speedTargets(input));
  for (const mode of input.modes) lines.push(...modeSection(input, mode));
  lines.push(...meteringSection(input));
  lines.push(...probeSection(input));
  lines.push(`Total errors: ${errors === 0 ? "none" : `**${errors}**`}. Wall time ${input.wallSeconds.toFixed(0)} s.`, "");
  return { markdown: lines.join("\n"), errors };
}

/** Metering's cost: requests per second with metering on over the same build with METERING=off, same run. */
function meteringSection(input: ReportInput): string[] {
  const on = input.modes.find((m) => m.mode === "auto");
  const off = input.modes.find((m) => m.mode === "auto, metering off");
  if (!on || !off) return [];
  const rows = (["same", "cross"] as const).map((which) => {
    const ratio = rps(on[which]) / rps(off[which]);
    return `| ${which === "same" ? "same protocol" : "cross protocol"} | ${Math.round(rps(on[which])).toLocaleString("en-US")} | ${Math.round(rps(off[which])).toLocaleString("en-US")} | ${ratio.toFixed(2)}× | ${ratio >= 0.8 ? "PASS" : "**MISS**"} |`;
  });
  return [
    "### Metering on vs off (target: on ≥ 0.8× off)",
    "",
    "| path | rps, metering on | rps, metering off | on ÷ off | result |",
    "|---|--:|--:|--:|---|",
    ...rows,
    "",
  ];
}

/** CPU µs per request of the path's server processes (gateway + PostgreSQL for Switchyard), over the throughput slices. */
export const cpuUsPerRequest = (throughput: Throughput) => ((throughput.cpuTicks / 100) * 1e6) / Math.max(1, throughput.completed);

/** The speed issue's targets, for the default Switchyard (auto) against the bare proxy and itself with metering off. */
function speedTargets(input: ReportInput): string[] {
  const on = input.modes.find((m) => m.mode === "auto");
  const off = input.modes.find((m) => m.mode === "auto, metering off");
  if (!on || !off) return [];
  const { proxy, direct } = input;
  const cpu = (path: PathResult) => cpuUsPerRequest(path.throughput);
  const p99Load = (path: PathResult) => percentileMs(path.throughput.ns, 0.99);
  const streamRps = (path: PathResult) => (path.streamThroughput === undefined ? Number.NaN : path.streamThroughput.completed / path.streamThroughput.seconds);
  const row = (what: string, measured: string, value: number, pass: boolean) => `| ${what} | ${measured} | ${Number.isFinite(value) ? verdict(pass) : "n/a"} |`;
  const us = (value: number) => `${value.toFixed(1)} µs`;
  const lines = [
    "### Targets of the speed issue (Switchyard auto, metering on unless said)",
    "",
    "CPU is user + system time of the serving processes from /proc over the throughput slices, divided by the requests served: " +
      "the gateway's process tree plus the PostgreSQL cluster for Switchyard, the proxy's process for the bare proxy.",
    "",
    "| target | measured | result |",
    "|---|---|---|",
  ];
  const meteredVsProxy = cpu(on.same) / cpu(proxy);
  lines.push(row(`CPU per request, same protocol, ≤ ${TARGETS.meteredCpuVsProxy}× the bare proxy's`, `${us(cpu(on.same))} vs ${us(cpu(proxy))}: ${ratio(meteredVsProxy)}`, meteredVsProxy, meteredVsProxy <= TARGETS.meteredCpuVsProxy));
  const crossVsSame = cpu(on.cross) / cpu(on.same);
  lines.push(row(`CPU per request, cross ÷ same protocol ≤ ${TARGETS.crossCpuVsSame}×`, `${us(cpu(on.cross))} vs ${us(cpu(on.same))}: ${ratio(crossVsSame)}`, crossVsSame, crossVsSame <= TARGETS.crossCpuVsSame));
  const meteredVsOff = cpu(on.same) / cpu(off.same);
  lines.push(row(`CPU per request, metered ÷ unmetered ≤ ${TARGETS.meteredCpuVsUnmetered}×`, `${us(cpu(on.same))} vs ${us(cpu(off.same))}: ${ratio(meteredVsOff)}`, meteredVsOff, meteredVsOff <= TARGETS.meteredCpuVsUnmetered));
  const p99Ratio = p99Load(on.same) / p99Load(proxy);
  lines.push(row(`p99 at ${input.settings.lanes} connections ≤ ${TARGETS.p99VsProxy}× the bare proxy's`, `${ms(p99Load(on.same))} ms vs ${ms(p99Load(proxy))} ms: ${ratio(p99Ratio)}`, p99Ratio, p99Ratio <= TARGETS.p99VsProxy));
  const firstByteOver = p50(on.same.firstByte) - p50(direct.firstByte);
  lines.push(row(`stream time to first byte at 1 connection ≤ ${TARGETS.streamFirstByteOverDirectMs} ms over the mock direct (p50)`, `${ms(p50(on.same.firstByte))} ms vs ${ms(p50(direct.firstByte))} ms: ${signedMs(firstByteOver)} ms`, firstByteOver, firstByteOver <= TARGETS.streamFirstByteOverDirectMs));
  const streamRatio = streamRps(on.same) / streamRps(proxy);
  lines.push(row(`stream rps at ${input.streamLanes} connections ≥ ${TARGETS.streamRpsVsProxy}× the bare proxy's`, `${integer(streamRps(on.same))} vs ${integer(streamRps(proxy))}: ${ratio(streamRatio)}`, streamRatio, streamRatio >= TARGETS.streamRpsVsProxy));
  const streamCpu = (path: PathResult) => (path.streamThroughput === undefined ? Number.NaN : cpuUsPerRequest(path.streamThroughput));
  const streamCpuRatio = streamCpu(on.same) / streamCpu(proxy);
  lines.push(row(`CPU per stream at ${input.streamLanes} connections (gateway + PostgreSQL) ≤ ${TARGETS.streamCpuVsProxy}× the bare proxy's`, `${us(streamCpu(on.same))} vs ${us(streamCpu(proxy))}: ${ratio(streamCpuRatio)}`, streamCpuRatio, streamCpuRatio <= TARGETS.streamCpuVsProxy));
  if (input.pacedStream !== undefined) {
    // Not the issue's row (its stream is the mock's default, whole in one chunk): the same measure on a stream as providers send one.
    const paced = cpuUsPerRequest(input.pacedStream.switchyard) / cpuUsPerRequest(input.pacedStream.proxy);
    lines.push(`| (informational) the same on a stream of 100 chunks 1 ms apart, as providers stream tokens | ${us(cpuUsPerRequest(input.pacedStream.switchyard))} vs ${us(cpuUsPerRequest(input.pacedStream.proxy))}: ${ratio(paced)} | ${Number.isFinite(paced) ? (paced <= TARGETS.streamCpuVsProxy ? "within" : "over") : "n/a"} |`);
  }
  if (input.policy !== undefined) {
    const { none, governed } = input.policy;
    const rpsRatio = governed.rps / none.rps;
    const cpuRatio = governed.cpuUs / none.cpuUs;
    lines.push(row(`one key with a budget, a rate limit and a guardrail: rps ≥ ${TARGETS.governedRps}× the same key shape without`, `${integer(governed.rps)} vs ${integer(none.rps)}: ${ratio(rpsRatio)}`, rpsRatio, rpsRatio >= TARGETS.governedRps));
    lines.push(row(`… and CPU per request (gateway + PostgreSQL) ≤ ${TARGETS.governedCpu}×`, `${us(governed.cpuUs)} vs ${us(none.cpuUs)}: ${ratio(cpuRatio)}`, cpuRatio, cpuRatio <= TARGETS.governedCpu));
  }
  const peakMb = on.peakRssKb / 1024;
  lines.push(row(`peak RSS at ${input.settings.lanes} connections ≤ ${TARGETS.peakRssMb} MB`, mb(on.peakRssKb), peakMb, peakMb <= TARGETS.peakRssMb));
  const settled = on.settledRssKb / on.idleRssKb;
  lines.push(row(`RSS 10 s after load within ${Math.round((TARGETS.settledRssVsIdle - 1) * 100)} % of idle`, `${mb(on.settledRssKb)} vs ${mb(on.idleRssKb)} idle: ${ratio(settled)}`, settled, settled <= TARGETS.settledRssVsIdle));
  lines.push("");
  return lines;
}

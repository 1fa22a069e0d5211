/**
 * The load generator: plain `fetch` (keep-alive by default in Bun) from this process.
 * Latency and time-to-first-byte loops run at concurrency 1 and interleave their targets
 * request by request, so a noisy moment on this machine hits every target alike;
 * throughput runs a fixed number of lanes, each awaiting its previous request.
 */

export interface Target {
  name: string;
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** The status that counts as success (default 200). */
  expectStatus?: number;
  /** Bearer tokens runLanes' requests take in turn: load spread over several accounts. */
  laneTokens?: readonly string[];
}

export interface ErrorTally {
  count: number;
  /** The first failure, for the report. */
  first?: string;
}

export interface Samples {
  /** Nanoseconds, one per successful request. */
  ns: number[];
  errors: ErrorTally;
}

const BENCH_MESSAGES = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Say hello to the benchmark." },
];

/** The request every bench sends: a short chat completion (streamed or not) at `baseUrl`/v1/chat/completions. */
export function chatTarget(name: string, baseUrl: string, token: string, model: string, stream = false, expectStatus = 200): Target {
  return {
    name,
    url: `${baseUrl}/v1/chat/completions`,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: BENCH_MESSAGES, max_tokens: 64, ...(stream ? { stream: true } : {}) }),
    expectStatus,
  };
}

function noteError(tally: ErrorTally, message: string): void {
  tally.count++;
  tally.first ??= message;
}

function init(target: Target): RequestInit {
  return { method: target.method ?? "POST", headers: target.headers, body: target.body };
}

/** One request, body read to the end. Resolves with an error message, or undefined when it succeeded. */
export async function requestOnce(target: Target): Promise<string | undefined> {
  try {
    const response = await fetch(target.url, init(target));
    const text = await response.text();
    const expected = target.expectStatus ?? 200;
    return response.status === expected ? undefined : `HTTP ${response.status} (expected ${expected}): ${text.slice(0, 200)}`;
  } catch (error) {
    return `fetch failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * One streaming request: the time from sending until the first body chunk, then the rest
 * of the body is drained (and must arrive without error).
 */
async function firstByteOnce(target: Target): Promise<{ ns: number } | { error: string }> {
  const start = Bun.nanoseconds();
  try {
    const response = await fetch(target.url, init(target));
    const expected = target.expectStatus ?? 200;
    if (response.status !== expected || response.body === null) {
      return { error: `HTTP ${response.status} (expected ${expected}): ${(await response.text()).slice(0, 200)}` };
    }
    const reader = response.body.getReader();
    const first = await reader.read();
    const ns = Bun.nanoseconds() - start;
    if (first.done) return { error: "stream ended without a body" };
    while (!(await reader.read()).done) {
      // drain
    }
    return { ns };
  } catch (error) {
    return { error: `fetch failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Round robin over targets, `rounds` times, one request in flight; the starting target rotates each round. */
async function interleaved(
  targets: readonly Target[],
  rounds: number,
  measure: (target: Target) => Promise<{ ns: number } | { error: string }>,
): Promise<Map<string, Samples>> {
  const results = new Map<string, Samples>(targets.map((t) => [t.name, { ns: [], errors: { count: 0 } }]));
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < targets.length; offset++) {
      const target = targets[(round + offset) % targets.length]!;
      const samples = results.get(target.name)!;
      const outcome = await measure(target);
      if ("ns" in outcome) samples.ns.push(outcome.ns);
      else noteError(samples.errors, outcome.error);
    }
  }
  return results;
}

async function timedRequest(target: Target): Promise<{ ns: number } | { error: string }> {
  const start = Bun.nanoseconds();
  const error = await requestOnce(target);
  return error === undefined ? { ns: Bun.nanoseconds() - start } : { error };
}

/** Warm-up rounds are not timed, but their failures count. */
async function withWarmup(
  targets: readonly Target[],
  rounds: number,
  warmup: number,
  measure: (target: Target) => Promise<{ ns: number } | { error: string }>,
): Promise<Map<string, Samples>> {
  const warm = await interleaved(targets, warmup, measure);
  const results = await interleaved(targets, rounds, measure);
  for (const [name, samples] of results) {
    const tally = warm.get(name)?.errors;
    if (tally === undefined || tally.count === 0) continue;
    samples.errors.count += tally.count;
    samples.errors.first = tally.first ?? samples.errors.first;
  }
  return results;
}

/** Full-response latency at concurrency 1, after `warmup` untimed rounds. */
export function measureLatency(targets: readonly Target[], rounds: number, warmup: number): Promise<Map<string, Samples>> {
  return withWarmup(targets, rounds, warmup, timedRequest);
}

/** Streaming time to first body byte at concurrency 1, after `warmup` untimed rounds. */
export function measureFirstByte(targets: readonly Target[], rounds: number, warmup: number): Promise<Map<string, Samples>> {
  return withWarmup(targets, rounds, warmup, firstByteOnce);
}

export interface Throughput {
  completed: number;
  seconds: number;
  errors: ErrorTally;
  /** Every completed request's latency in nanoseconds (the tail under load). */
  ns: number[];
  /** CPU ticks (1/100 s) of the target's server processes over the measured time, when read. */
  cpuTicks: number;
}

/** `lanes` concurrent request loops for `durationMs`; every request started before the deadline is counted when it ends. */
export async function runLanes(target: Target, lanes: number, durationMs: number): Promise<Throughput> {
  const errors: ErrorTally = { count: 0 };
  const ns: number[] = [];
  const start = performance.now();
  const deadline = start + durationMs;
  // One target per token, made once; every request takes the next, whichever lane sends it.
  const tokens = target.laneTokens ?? [];
  const rotation = tokens.length === 0 ? [target] : tokens.map((token) => ({ ...target, headers: { ...target.headers, authorization: `Bearer ${token}` } }));
  let sent = 0;
  const lane = async () => {
    while (performance.now() < deadline) {
      const begun = Bun.nanoseconds();
      const error = await requestOnce(rotation[sent++ % rotation.length]!);
      if (error === undefined) ns.push(Bun.nanoseconds() - begun);
      else noteError(errors, error);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return { completed: ns.length, seconds: (performance.now() - start) / 1000, errors, ns, cpuTicks: 0 };
}

/** `requests` requests over `lanes` concurrent loops (runLanes runs for a time; this for a count); throws at the first that fails. */
export async function sendRequests(target: Target, requests: number, lanes: number): Promise<void> {
  let left = requests;
  const lane = async () => {
    while (left-- > 0) {
      const failure = await requestOnce(target);
      if (failure !== undefined) throw new Error(`${target.name}: ${failure}`);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

/**
 * Requests per second at `lanes` connections, `slices` interleaved slices per target
 * (A B C, A B C, …) so slow drift on the machine spreads over all of them; each slice
 * is preceded by a short untimed warm-up at the same concurrency.
 */
export async function measureThroughput(
  targets: readonly Target[],
  options: { lanes: number; sliceMs: number; slices: number; warmupMs: number },
  /** CPU ticks so far of the processes that serve `target` (read around each slice), if counted. */
  cpuOf?: (target: Target) => number,
): Promise<Map<string, Throughput>> {
  const totals = new Map<string, Throughput>(targets.map((t) => [t.name, { completed: 0, seconds: 0, errors: { count: 0 }, ns: [], cpuTicks: 0 }]));
  for (let slice = 0; slice < options.slices; slice++) {
    for (const target of targets) {
      const warm = await runLanes(target, options.lanes, options.warmupMs);
      const cpuBefore = cpuOf?.(target) ?? 0;
      const run = await runLanes(target, options.lanes, options.sliceMs);
      const total = totals.get(target.name)!;
      total.cpuTicks += (cpuOf?.(target) ?? 0) - cpuBefore;
      for (const ns of run.ns) total.ns.push(ns);
      total.completed += run.completed;
      total.seconds += run.seconds;
      for (const tally of [warm.errors, run.errors]) {
        total.errors.count += tally.count;
        total.errors.first ??= tally.first;
      }
    }
  }
  return totals;
}

/** Nearest-rank percentile of nanosecond samples, in milliseconds (NaN when there are none). */
export function percentileMs(ns: readonly number[], quantile: number): number {
  if (ns.length === 0) return Number.NaN;
  const sorted = Float64Array.from(ns).sort();
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(quantile * sorted.length)));
  return sorted[rank - 1]! / 1e6;
}

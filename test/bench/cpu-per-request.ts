/**
 * `bun test/bench/cpu-per-request.ts`: where the CPU of one request goes. Runs the bare
 * proxy and one or more Switchyard variants at 64 connections in interleaved slices (like
 * run-bench.ts) and reads each process's CPU time from /proc/<pid>/stat around every
 * slice: the load generator (this process), the mock upstream, the gateway, and
 * PostgreSQL (all its processes). Prints requests per second and CPU µs per request for
 * each, then the gateway's CPU by thread (its JavaScript thread, Bun's HTTP-client thread,
 * the GC's threads) and how much of the machine sat idle. On a machine this small the throughput of every path is bounded by the sum of
 * those columns, so they say which process to work on; absolute values drift with the
 * machine, so compare rows of one run.
 *
 *   VARIANTS='off:{"METERING":"off"};on:{}' bun test/bench/cpu-per-request.ts
 *   env: VARIANTS  label:JSON-env pairs separated by ";" (default: metering on and off)
 *        CROSS=1   request mock-anthropic (cross protocol) instead of mock-openai
 *        STREAM=1  streamed chat completions instead of whole answers
 *        LANES     connections (64)
 *        SLICES, SLICE_MS  interleaved slices per path and their length (3, 2500)
 *        WARMUP_MS  untimed load per path before the first slice (6000); a Switchyard
 *                   gets more, until its JIT compiler threads fall quiet (jit-warmup.ts),
 *                   so per-flush metering code is compiled, as in a long-running gateway
 *        PG_STATEMENTS=1  PostgreSQL's statements per request for each Switchyard (pg-statements.ts)
 *        ACCOUNTS  accounts each Switchyard gets, a key each (1); the requests take the keys in
 *                  turn, so a metering flush carries rows of many accounts, as real traffic's does
 *   A variant's BUN_FLAGS go to `bun` before the script: `{"BUN_FLAGS":"--cpu-prof --cpu-prof-dir=/tmp/prof"}`
 *   writes a CPU profile of that gateway when it stops.
 *   A variant's SWITCHYARD_ROOT runs another checkout's `src/main.ts` (e.g. a `git worktree`
 *   of an older commit, its node_modules linked), so two commits are compared in one run:
 *     VARIANTS='before:{"SWITCHYARD_ROOT":"../before"};after:{}' bun test/bench/cpu-per-request.ts
 */
import { cleanupAll } from "./children";
import { warmUntilJitQuiet } from "./jit-warmup";
import { chatTarget, runLanes } from "./load";
import { cpuTicks, idleTicks, postgresTicks, threadTicks, TICKS_PER_SECOND } from "./process-cpu";
import { StatementTally } from "./pg-statements";
import { parseVariants, startBenchUpstreams, startDatabase, startSwitchyard, type SwitchyardProcess } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";

interface Tally {
  completed: number;
  seconds: number;
  errors: number;
  ticks: { loadgen: number; mock: number; gateway: number; postgres: number };
  /** The gateway's CPU ticks by thread, and the machine's idle ticks. */
  threads: Map<string, number>;
  idle: number;
}

async function main(): Promise<void> {
  const slices = Number(process.env.SLICES ?? 3);
  const sliceMs = Number(process.env.SLICE_MS ?? 2_500);
  const { mockChild, proxyChild, proxyUrl, mocks } = await startBenchUpstreams(MOCK_KEY);
  const database = await startDatabase();
  const switchyards: SwitchyardProcess[] = [];
  for (const variant of parseVariants(process.env.VARIANTS ?? 'metering off:{"METERING":"off"};metering on:{}')) {
    // A variant's BUN_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") go to `bun` itself.
    const { BUN_FLAGS: bunFlags, ...env } = variant.env;
    switchyards.push(await startSwitchyard({ ...variant, env, bunFlags: bunFlags?.split(" ").filter(Boolean), database, mocks, mockKey: MOCK_KEY, accounts: Number(process.env.ACCOUNTS ?? 1) }));
  }
  const model = process.env.CROSS === "1" ? "mock-anthropic/claude-sonnet-4-5" : "mock-openai/gpt-4o-mini";
  const stream = process.env.STREAM === "1";
  const lanes = Number(process.env.LANES ?? 64);
  const paths = [
    { target: chatTarget("bare proxy", proxyUrl, MOCK_KEY, "gpt-4o-mini", stream), pid: proxyChild.process.pid },
    ...switchyards.map((s) => ({ target: { ...chatTarget(s.mode, s.url, s.apiKey, model, stream), laneTokens: s.apiKeys }, pid: s.pid })),
  ];
  const tallies = new Map<string, Tally>(paths.map((p) => [p.target.name, { completed: 0, seconds: 0, errors: 0, ticks: { loadgen: 0, mock: 0, gateway: 0, postgres: 0 }, threads: new Map(), idle: 0 }]));
  const statements = await StatementTally.open(database.adminUrl);
  const databaseOf = new Map(switchyards.map((s) => [s.mode, s.databaseName]));
  const sample = (pid: number) => ({ loadgen: cpuTicks(process.pid), mock: cpuTicks(mockChild.process.pid), gateway: cpuTicks(pid), postgres: postgresTicks(database.postmasterPid) });
  try {
    // The bare proxy gets WARMUP_MS of load; each Switchyard at least that, until its JIT
    // compiler falls quiet (jit-warmup.ts), so the slices measure a steady state.
    const warmupMs = Number(process.env.WARMUP_MS ?? 6_000);
    for (const [index, { target, pid }] of paths.entries()) {
      if (index === 0) await runLanes(target, lanes, warmupMs);
      else {
        const warmup = await warmUntilJitQuiet(pid, [target], lanes, { minMs: warmupMs, maxMs: Math.max(warmupMs, 60_000) });
        console.error(`${target.name}: warmed ${warmup.seconds.toFixed(0)} s, JIT at ${(warmup.lastJitShare * 100).toFixed(1)} % of a core${warmup.quiet ? "" : " (cap reached)"}`);
      }
    }
    for (let slice = 0; slice < slices; slice++) {
      for (const { target, pid } of paths) {
        await runLanes(target, lanes, 400); // warm-up, untimed
        const before = sample(pid);
        const statementsBefore = await statements?.snapshot();
        const [threadsBefore, idleBefore] = [threadTicks(pid), idleTicks()];
        const run = await runLanes(target, lanes, sliceMs);
        const after = sample(pid);
        const databaseName = databaseOf.get(target.name);
        if (statements && statementsBefore && databaseName) statements.add(databaseName, statementsBefore, await statements.snapshot());
        const [threadsAfter, idleAfter] = [threadTicks(pid), idleTicks()];
        const tally = tallies.get(target.name)!;
        tally.idle += idleAfter - idleBefore;
        for (const [thread, ticks] of threadsAfter) tally.threads.set(thread, (tally.threads.get(thread) ?? 0) + ticks - (threadsBefore.get(thread) ?? 0));
        tally.completed += run.completed;
        tally.seconds += run.seconds;
        tally.errors += run.errors.count;
        for (const key of Object.keys(tally.ticks) as Array<keyof Tally["ticks"]>) tally.ticks[key] += after[key] - before[key];
      }
    }
    const proxyRps = tallies.get("bare proxy")!.completed / tallies.get("bare proxy")!.seconds;
    console.log(`| path | rps @ ${lanes}${stream ? ", streamed" : ""} | ÷ bare proxy | CPU µs/request: load generator | mock | gateway | PostgreSQL | errors |`);
    console.log(`|---|--:|--:|--:|--:|--:|--:|--:|`);
    for (const [name, tally] of tallies) {
      const rps = tally.completed / tally.seconds;
      const us = (ticks: number) => ((ticks / TICKS_PER_SECOND) * 1e6 / Math.max(1, tally.completed)).toFixed(1);
      console.log(`| ${name} | ${Math.round(rps).toLocaleString("en-US")} | ${(rps / proxyRps).toFixed(2)}× | ${us(tally.ticks.loadgen)} | ${us(tally.ticks.mock)} | ${us(tally.ticks.gateway)} | ${us(tally.ticks.postgres)} | ${tally.errors} |`);
    }
    // Is one thread the bottleneck, or the machine? A main thread near 100 % of a core says
    // the first; idle cores near 0 say the second.
    console.log(`\n| path | gateway main thread: % of a core | µs/request | HTTP client thread µs/request | GC threads µs/request | other threads µs/request | machine idle, cores |`);
    console.log(`|---|--:|--:|--:|--:|--:|--:|`);
    for (const [name, tally] of tallies) {
      const us = (ticks: number) => ((ticks / TICKS_PER_SECOND) * 1e6 / Math.max(1, tally.completed)).toFixed(1);
      const main = tally.threads.get("main") ?? 0;
      const http = tally.threads.get("HTTP Client") ?? 0;
      const gc = tally.threads.get("HeapHelper") ?? 0;
      const other = [...tally.threads.values()].reduce((sum, ticks) => sum + ticks, 0) - main - http - gc;
      const share = (ticks: number) => ((100 * ticks) / TICKS_PER_SECOND / tally.seconds).toFixed(0);
      console.log(`| ${name} | ${share(main)} % | ${us(main)} | ${us(http)} | ${us(gc)} | ${us(other)} | ${(tally.idle / TICKS_PER_SECOND / tally.seconds).toFixed(2)} |`);
    }
    // The "other" column by thread name (JIT compilers, Bun's thread pool, translation workers …).
    for (const [name, tally] of tallies) {
      const others = [...tally.threads].filter(([thread]) => !["main", "HTTP Client", "HeapHelper"].includes(thread)).sort((a, b) => b[1] - a[1]);
      const us = (ticks: number) => ((ticks / TICKS_PER_SECOND) * 1e6 / Math.max(1, tally.completed)).toFixed(1);
      console.log(`${name}, other threads in µs/request: ${others.slice(0, 5).map(([thread, ticks]) => `${thread} ${us(ticks)}`).join(", ") || "none"}`);
    }
    if (statements) {
      console.log(`\n| path | PostgreSQL statement calls/request | µs/request | µs/call | statement |`);
      console.log(`|---|--:|--:|--:|---|`);
      for (const [name, databaseName] of databaseOf) if (databaseName) console.log(statements.report(databaseName, name, tallies.get(name)!.completed));
    }
  } finally {
    await Promise.all(switchyards.map((s) => s.stop()));
    await statements?.close();
    cleanupAll();
  }
}

await main();
process.exit(0);

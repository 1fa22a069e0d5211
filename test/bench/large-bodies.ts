/**
 * `npx bun test/bench/large-bodies.ts`: what one client's bodies of nearly the inference
 * limit (32 MiB) cost the server's request thread, which every other request shares: its
 * CPU per large request, the translation worker's, and how late the server's own event-loop
 * timer fired meanwhile (`switchyard_event_loop_delay_seconds` on /metrics: a ready answer
 * of another client waits that long). A hostile or careless tenant sending such bodies must
 * not stall the others. A measurement, not a test.
 *
 * Each case sends REQUESTS bodies one after another (the fuzz suite's heavy bodies,
 * test/fuzz/heavy-bodies.ts), with a pause between them, to one default server per variant.
 *
 *   env: VARIANTS  label:JSON-env pairs separated by ";" (default: one default server;
 *                  `{"SWITCHYARD_ROOT":"<dir>"}` runs another checkout, for a before/after)
 *        CASES     comma-separated parts of the case names to run (default: the three
 *                  nearly-the-limit bodies, ASCII same protocol and translated, and non-ASCII)
 *        REQUESTS  large requests a case (3)
 */
import { join } from "node:path";
import { heavyCases } from "../fuzz/heavy-bodies";
import { cleanupAll } from "./children";
import { TICKS_PER_SECOND, threadTicks } from "./process-cpu";
import { parseVariants, startBenchUpstreams, startDatabase, startSwitchyard } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";
const LIMIT = 32 * 1024 * 1024;
const REQUESTS = Number(process.env.REQUESTS ?? 3);
const CASES = (process.env.CASES ?? "ASCII, same protocol,ASCII, translated,non-ASCII").split(",");
/** Buckets of the delay histogram reported: late by more than each. */
const LATE_BEYOND_SECONDS = ["0.05", "0.1", "0.25"];

interface LoopDelay {
  sum: number;
  count: number;
  /** Observations at or under each bucket bound ("le"). */
  atMost: Map<string, number>;
}

async function loopDelay(url: string): Promise<LoopDelay> {
  const text = await fetch(`${url}/metrics`).then((response) => response.text());
  const delay: LoopDelay = { sum: 0, count: 0, atMost: new Map() };
  for (const line of text.split("\n")) {
    if (!line.startsWith("switchyard_event_loop_delay_seconds")) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    const bucket = /le="([^"]+)"/.exec(line);
    if (bucket) delay.atMost.set(bucket[1]!, value);
    else if (line.startsWith("switchyard_event_loop_delay_seconds_sum")) delay.sum = value;
    else if (line.startsWith("switchyard_event_loop_delay_seconds_count")) delay.count = value;
  }
  return delay;
}

/** CPU ms per large request by thread name, the busiest first, threads under 5 ms left out. */
function cpuByThread(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after]
    .map(([thread, ticks]) => [thread, (((ticks - (before.get(thread) ?? 0)) * 1000) / TICKS_PER_SECOND) / REQUESTS] as [string, number])
    .filter(([, ms]) => ms >= 5)
    .sort((a, b) => b[1] - a[1]);
}

async function main(): Promise<void> {
  const { mocks } = await startBenchUpstreams(MOCK_KEY);
  const database = await startDatabase();
  const cases = heavyCases(LIMIT, "mock-openai/gpt-4o-mini", "mock-anthropic/claude-sonnet-4-5").filter((heavy) => CASES.some((part) => heavy.name.includes(part)));
  const rows: string[] = [];
  for (const variant of parseVariants(process.env.VARIANTS ?? "default:{}")) {
    const server = await startSwitchyard({ ...variant, database, mocks, mockKey: MOCK_KEY });
    try {
      for (const heavy of cases) {
        const body = heavy.body();
        await Bun.sleep(300);
        const [delayBefore, ticksBefore] = [await loopDelay(server.url), threadTicks(server.pid)];
        const started = performance.now();
        for (let request = 0; request < REQUESTS; request++) {
          const response = await fetch(`${server.url}${heavy.path}`, {
            method: "POST",
            headers: { authorization: `Bearer ${server.apiKey}`, "x-api-key": server.apiKey, "anthropic-version": "2023-06-01", "content-type": "application/json" },
            body,
          });
          await response.arrayBuffer();
          if (!heavy.expect.includes(response.status)) throw new Error(`${variant.mode}, ${heavy.name}: status ${response.status}`);
          await Bun.sleep(100);
        }
        const wallMs = (performance.now() - started) / REQUESTS;
        await Bun.sleep(300);
        const [delayAfter, ticksAfter] = [await loopDelay(server.url), threadTicks(server.pid)];
        const lateBeyond = LATE_BEYOND_SECONDS.map((bound) => delayAfter.count - delayAfter.atMost.get(bound)! - (delayBefore.count - delayBefore.atMost.get(bound)!));
        const threads = cpuByThread(ticksBefore, ticksAfter);
        const main = threads.find(([thread]) => thread === "main")?.[1] ?? 0;
        const worker = threads.filter(([thread]) => thread.startsWith("translate")).reduce((sum, [, ms]) => sum + ms, 0);
        rows.push(
          `| ${variant.mode} | ${heavy.name} | ${wallMs.toFixed(0)} | ${main.toFixed(0)} | ${worker.toFixed(0)} | ${(((delayAfter.sum - delayBefore.sum) * 1000) / REQUESTS).toFixed(0)} | ${lateBeyond.join(" / ")} | ${threads.map(([thread, ms]) => `${thread} ${ms.toFixed(0)}`).join(", ")} |`,
        );
        console.error(rows.at(-1));
      }
    } finally {
      await server.stop();
    }
  }
  console.log(`\nLarge bodies (${REQUESTS} a case, one after another; ms per large request; the event loop's lateness from the server's own histogram, a 5 ms timer)\n`);
  console.log(`| variant | case | wall | request thread CPU | translation workers' CPU | event loop late, sum | times late > ${LATE_BEYOND_SECONDS.map((s) => `${Number(s) * 1000}`).join(" / ")} ms | CPU by thread |`);
  console.log("|---|---|--:|--:|--:|--:|--:|---|");
  for (const row of rows) console.log(row);
}

try {
  await main();
} finally {
  cleanupAll();
}
process.exit(0);

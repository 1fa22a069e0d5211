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
 * With ANSWERS=1 the other direction: small requests whose upstream (an openai-chat one,
 * served by this script) answers each with a whole chat completion of ANSWER_MIB, ASCII or
 * not, to a chat client (same protocol) and a Messages client (translated). A customer's own
 * base URL (BYOK `api_base`) makes such answers the customer's choice.
 *
 *   env: VARIANTS  label:JSON-env pairs separated by ";" (default: one default server;
 *                  `{"SWITCHYARD_ROOT":"<dir>"}` runs another checkout, for a before/after)
 *        CASES     comma-separated parts of the case names to run (default: the three
 *                  nearly-the-limit bodies, ASCII same protocol and translated, and non-ASCII;
 *                  with ANSWERS=1 all four answer cases)
 *        REQUESTS  large requests a case (3)
 *        ANSWERS   1: large answers instead of large requests; ANSWER_MIB their size (30)
 *   A variant's BUN_FLAGS go to `bun` before the script: `{"BUN_FLAGS":"--cpu-prof --cpu-prof-dir=/tmp/prof"}`
 *   writes a CPU profile of that server when it stops.
 */
import { join } from "node:path";
import { heavyCases } from "../fuzz/heavy-bodies";
import { cleanupAll } from "./children";
import { TICKS_PER_SECOND, threadTicks } from "./process-cpu";
import { parseVariants, startBenchUpstreams, startDatabase, startSwitchyard } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";
const LIMIT = 32 * 1024 * 1024;
const REQUESTS = Number(process.env.REQUESTS ?? 3);
const ANSWERS = process.env.ANSWERS === "1";
const ANSWER_BYTES = Number(process.env.ANSWER_MIB ?? 30) * 1024 * 1024;
const CASES = (process.env.CASES ?? (ANSWERS ? "answer" : "ASCII, same protocol,ASCII, translated,non-ASCII")).split(",");
const SAME_MODEL = "mock-openai/gpt-4o-mini";
const CROSS_MODEL = "mock-anthropic/claude-sonnet-4-5";
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

/** A case of this script: what is sent, where, and which answer the upstream gives it. */
interface LargeCase {
  name: string;
  path: string;
  body: () => string;
  expect: readonly number[];
  /** The content the upstream's answer is filled with (ANSWERS=1). */
  fill?: string;
}

/** Chat and Messages clients asking the openai-chat upstream, whose answer is filled with `fill`. */
function answerCases(): LargeCase[] {
  const chat = () => JSON.stringify({ model: SAME_MODEL, messages: [{ role: "user", content: "hi" }] });
  const messages = () => JSON.stringify({ model: SAME_MODEL, max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
  return [
    { name: "answer ASCII, same protocol (chat)", path: "/v1/chat/completions", body: chat, expect: [200], fill: "x" },
    { name: "answer ASCII, translated (Messages client)", path: "/v1/messages", body: messages, expect: [200], fill: "x" },
    { name: "answer non-ASCII, same protocol (chat)", path: "/v1/chat/completions", body: chat, expect: [200], fill: "é" },
    { name: "answer non-ASCII, translated (Messages client)", path: "/v1/messages", body: messages, expect: [200], fill: "é" },
  ];
}

/** A chat completion of about `bytes` (UTF-8) whose content is `fill` repeated. */
function chatAnswer(bytes: number, fill: string): Uint8Array {
  const head = '{"id":"chatcmpl-large","object":"chat.completion","created":1767225600,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"';
  const tail = '"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":100,"total_tokens":109}}';
  return new TextEncoder().encode(head + fill.repeat(Math.floor((bytes - head.length - tail.length) / Buffer.byteLength(fill))) + tail);
}

/** An openai-chat upstream answering every call with the current case's large answer. */
function startAnswerUpstream(): { baseUrl: string; answerWith(fill: string): void; stop(): void } {
  let answer: Uint8Array = new Uint8Array();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      await request.arrayBuffer();
      return new Response(answer, { headers: { "content-type": "application/json" } });
    },
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    answerWith: (fill) => {
      answer = chatAnswer(ANSWER_BYTES, fill);
    },
    stop: () => server.stop(true),
  };
}

async function main(): Promise<void> {
  const started = await startBenchUpstreams(MOCK_KEY);
  const answerUpstream = ANSWERS ? startAnswerUpstream() : undefined;
  const mocks = answerUpstream ? started.mocks.map((mock) => (mock.protocol === "openai-chat" ? { ...mock, baseUrl: answerUpstream.baseUrl } : mock)) : started.mocks;
  const database = await startDatabase();
  const cases: LargeCase[] = (ANSWERS ? answerCases() : heavyCases(LIMIT, SAME_MODEL, CROSS_MODEL)).filter((heavy) => CASES.some((part) => heavy.name.includes(part)));
  const rows: string[] = [];
  for (const variant of parseVariants(process.env.VARIANTS ?? "default:{}")) {
    // A variant's BUN_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") go to `bun` itself.
    const { BUN_FLAGS: bunFlags, ...env } = variant.env;
    const server = await startSwitchyard({ mode: variant.mode, env, bunFlags: bunFlags?.split(" ").filter(Boolean), database, mocks, mockKey: MOCK_KEY });
    try {
      for (const heavy of cases) {
        const body = heavy.body();
        if (heavy.fill !== undefined) answerUpstream?.answerWith(heavy.fill);
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
  answerUpstream?.stop();
  console.log(`\nLarge ${ANSWERS ? `answers of ${ANSWER_BYTES / 1024 / 1024} MiB` : "bodies"} (${REQUESTS} a case, one after another; ms per large request; the event loop's lateness from the server's own histogram, a 5 ms timer)\n`);
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

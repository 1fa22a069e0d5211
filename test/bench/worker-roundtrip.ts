/**
 * What a WorkerPool round trip costs next to calling the same function directly.
 *
 *   bun test/bench/worker-roundtrip.ts [--size N]
 *
 * Two handlers: identity (transport alone) and JSON parse + stringify (the least a
 * translation does). Payloads are chat-completion-like JSON of about 1 KB and 32 KB.
 * "sequential" awaits each call before the next (latency, one worker busy);
 * "64 in flight" keeps 64 calls outstanding over the whole pool (throughput).
 * Prints a markdown table.
 *
 * An interval keeps the event loop referenced throughout, as a server's listener does:
 * with nothing else alive Bun polls for the unref'd workers' messages in a busy loop,
 * which makes round trips look about a third faster than they are in production.
 */
import { WorkerPool, defaultWorkerPoolSize } from "../../src/workers";
import { identityHandler, jsonHandler } from "../workers/fixtures/bench-handlers";

const sizeFlag = process.argv.indexOf("--size");
const poolSize = sizeFlag >= 0 ? Number(process.argv[sizeFlag + 1]) : defaultWorkerPoolSize();

function chatPayload(targetBytes: number): string {
  const messages: { role: string; content: string }[] = [{ role: "system", content: "You are terse." }];
  let text = JSON.stringify({ model: "openai/gpt-4.1-mini", stream: true, messages });
  for (let turn = 0; text.length < targetBytes; turn++) {
    messages.push({ role: turn % 2 === 0 ? "user" : "assistant", content: `Turn ${turn}: ${"lorem ipsum dolor sit amet ".repeat(3)}` });
    text = JSON.stringify({ model: "openai/gpt-4.1-mini", stream: true, messages });
  }
  return text;
}

interface Latency {
  meanUs: number;
  p50Us: number;
  p99Us: number;
}

function summarize(samplesNs: Float64Array): Latency {
  const sorted = Float64Array.from(samplesNs).sort();
  let total = 0;
  for (const sample of sorted) total += sample;
  const at = (quantile: number) => sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))]! / 1_000;
  return { meanUs: total / sorted.length / 1_000, p50Us: at(0.5), p99Us: at(0.99) };
}

function measureDirect(handler: (payload: string) => string, payload: string, iterations: number): Latency {
  let sink = 0;
  for (let index = 0; index < iterations; index++) sink += handler(payload).length;
  const samples = new Float64Array(iterations);
  for (let index = 0; index < iterations; index++) {
    const start = Bun.nanoseconds();
    sink += handler(payload).length;
    samples[index] = Bun.nanoseconds() - start;
  }
  if (sink === -1) console.log("unreachable");
  return summarize(samples);
}

async function measureSequential(pool: WorkerPool, payload: string, iterations: number): Promise<Latency> {
  for (let index = 0; index < iterations; index++) await pool.call(payload);
  const samples = new Float64Array(iterations);
  for (let index = 0; index < iterations; index++) {
    const start = Bun.nanoseconds();
    await pool.call(payload);
    samples[index] = Bun.nanoseconds() - start;
  }
  return summarize(samples);
}

/** Calls per second with `window` calls kept in flight. */
async function measureThroughput(pool: WorkerPool, payload: string, total: number, window: number): Promise<number> {
  const start = Bun.nanoseconds();
  let issued = 0;
  const lane = async () => {
    while (issued < total) {
      issued++;
      await pool.call(payload);
    }
  };
  await Promise.all(Array.from({ length: window }, lane));
  return total / ((Bun.nanoseconds() - start) / 1e9);
}

const format = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));

const handlers = [
  { name: "identity", handler: identityHandler, workerUrl: new URL("../workers/fixtures/identity.worker.ts", import.meta.url) },
  { name: "JSON parse+stringify", handler: jsonHandler, workerUrl: new URL("../workers/fixtures/json.worker.ts", import.meta.url) },
];
const payloads = [
  { label: "1 KB", text: chatPayload(1_024), iterations: 20_000 },
  { label: "32 KB", text: chatPayload(32 * 1_024), iterations: 4_000 },
];

const keepAlive = setInterval(() => {}, 60_000);
console.log(`Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores, pool size ${poolSize}`);
console.log("");
console.log("| handler | payload | direct call µs (mean) | pool round trip µs (mean / p50 / p99) | overhead µs | 64 in flight, calls/s |");
console.log("|---|---|---|---|---|---|");
for (const { name, handler, workerUrl } of handlers) {
  const pool = new WorkerPool({ workerUrl, size: poolSize, name: "bench" });
  await pool.ready();
  for (const payload of payloads) {
    const direct = measureDirect(handler, payload.text, payload.iterations);
    const roundTrip = await measureSequential(pool, payload.text, payload.iterations);
    const throughput = await measureThroughput(pool, payload.text, payload.iterations * 2, 64);
    console.log(
      `| ${name} | ${payload.label} (${payload.text.length} B) | ${format(direct.meanUs)} | ` +
        `${format(roundTrip.meanUs)} / ${format(roundTrip.p50Us)} / ${format(roundTrip.p99Us)} | ` +
        `${format(roundTrip.meanUs - direct.meanUs)} | ${Math.round(throughput).toLocaleString("en-US")} |`,
    );
  }
  await pool.close();
}
clearInterval(keepAlive);

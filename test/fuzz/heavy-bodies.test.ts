import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { MockUpstreamSet } from "../support/mock-upstreams";
import type { SpawnedServer } from "../support/spawn-server";
import { startFuzzServer, stopFuzzServer, type FuzzServer } from "./fuzz-server";
import { chunkedBody, rawHttp } from "../support/raw-http";
import { heavyCases, type HeavyCase } from "./heavy-bodies";

/**
 * The heaviest bodies a client can send (heavy-bodies.ts: nearly the 32 MiB limit, ASCII
 * and not, declared and chunked, translated, twice the limit, 100k-deep JSON, hundreds of
 * thousands of small parts), three at a time, against one spawned server with the default
 * limits: each gets its right answer, the process lives, and its resident memory stays
 * bounded. Without the body budget (src/http/body-budget.ts) and the workers' collection
 * after large calls, the same cases took it past 1.1 GB; `npx bun test/bench/memory.ts`
 * measures it precisely (test/bench/HISTORY.md).
 */

const LANES = 3;
const LIMIT = 32 * 1024 * 1024;
/** Far above the figure measured (test/bench/HISTORY.md), far below the figure before the budget. */
const PEAK_RSS_CEILING_MB = 640;

let running: FuzzServer | undefined;
let server: SpawnedServer;
let mocks: MockUpstreamSet;
let apiKey: string;
beforeAll(async () => {
  running = await startFuzzServer({ ADMIN_TOKEN: "heavy-operator" });
  ({ server, mocks } = running);
  const created = await fetch(`${server.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: "Bearer heavy-operator", "content-type": "application/json" },
    body: JSON.stringify({ email: "heavy@example.test", credit_micro_usd: 1_000_000_000 }),
  });
  apiKey = ((await created.json()) as { api_key: string }).api_key;
});
afterAll(() => stopFuzzServer(running), 20_000);

function peakRssMb(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1]) / 1024;
}

async function send(heavy: HeavyCase): Promise<{ status: number; text: string }> {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  if (!heavy.chunked) {
    const response = await fetch(server.url + heavy.path, { method: "POST", headers, body: heavy.body() });
    return { status: response.status, text: await response.text() };
  }
  let head = `POST ${heavy.path} HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nTransfer-Encoding: chunked`;
  for (const [name, value] of Object.entries(headers)) head += `\r\n${name}: ${value}`;
  const response = await rawHttp(server.url, head, chunkedBody(heavy.body(), 64 * 1024), 60_000);
  return { status: response.status, text: response.body };
}

test(`the heavy bodies, ${LANES} at a time: each answered in its protocol, the process alive, its peak RSS bounded`, async () => {
  const queue = heavyCases(LIMIT, "mock-openai/gpt-4o-mini", "mock-anthropic/claude-haiku-4-5");
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      for (let heavy = queue.shift(); heavy !== undefined; heavy = queue.shift()) {
        // The mocks record what they receive: forget the last body before the next.
        for (const mock of mocks.list) mock.requests.length = 0;
        const { status, text } = await send(heavy);
        if (!heavy.expect.includes(status)) failures.push(`${heavy.name}: ${status} ${text.slice(0, 200)}`);
        else if (status >= 400) {
          const body = JSON.parse(text) as { error?: { message?: string } };
          if (typeof body.error?.message !== "string") failures.push(`${heavy.name}: ${status} is not an OpenAI/Anthropic error: ${text.slice(0, 200)}`);
        }
      }
    }),
  );
  expect(failures).toEqual([]);
  expect(server.process.exitCode).toBeNull();
  expect((await fetch(`${server.url}/ping`)).status).toBe(200);
  const peak = peakRssMb(server.process.pid);
  console.log(`heavy bodies: the server's peak RSS ${peak.toFixed(0)} MB`);
  expect(peak).toBeLessThan(PEAK_RSS_CEILING_MB);
}, 120_000);

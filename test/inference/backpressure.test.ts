/**
 * Clients that stop reading a large, fast stream: the gateway reads the upstream only as
 * fast as its client reads (bounded memory per stream), and after STREAM_STALL_TIMEOUT_MS
 * without a read it aborts the upstream, records the request as cancelled with the output
 * produced so far and ends the stream with its protocol's error frame. Real sockets: a raw TCP client that reads a
 * few KB and then stops, a spawned server whose RSS is read from /proc, and mocks that
 * generate the stream only as it is pulled (`streamedBytes` says how far they got).
 */
import { DEFAULT_MAX_OUTPUT_TOKENS } from "../../src/admission/cost-ceiling";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { MOCK_KEY, spawnServerOnMocks } from "../support/inference-harness";
import { startAllMockUpstreams, type MockUpstream, type MockUpstreamSet } from "../support/mock-upstreams";
import type { SpawnedServer } from "../support/spawn-server";
import { createTestDatabase } from "../support/test-database";
import { UPSTREAM, closeClients, database, normaliseRow, requestFor, type Protocol } from "../metering/metering-support";

/** ~1.2 KB per frame: a 180 MB (chat) to 270 MB (Responses) answer. */
const FLOOD_FRAMES = 150_000;
/**
 * What a stalled stream may have pulled from its upstream: the kernel's socket buffers on
 * both of the gateway's connections (autotuned, up to tcp_rmem/tcp_wmem's maximum, 32 MB and
 * 4 MB here) and the gateway's own small per-stream buffer.
 */
const PULLED_AT_MOST = 48 * 1024 * 1024;
const MB = 1024 * 1024;

interface StalledClient {
  socket: Socket;
  received(): number;
  /** Everything received; resolves when the server closes the connection. */
  closed: Promise<string>;
}

/** POSTs over a raw socket, reads until `readBytes` have arrived, then stops reading. */
function stallingClient(baseUrl: string, apiKey: string, client: Protocol, model: string, requestId: string, readBytes: number): Promise<StalledClient> {
  const { path, body } = requestFor(client, model, { stream: true });
  const payload = JSON.stringify(body);
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = 0;
    let stopped = false;
    // The head and the first KB of the stream are kept; the rest only counted, and the tail kept.
    let head = "";
    let tail = "";
    const closed = new Promise<string>((done) => socket.on("close", () => done(head + tail)));
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (head.length < 4096) head += chunk.toString("latin1");
      else tail = (tail + chunk.toString("latin1")).slice(-4096);
      if (received >= readBytes && !stopped) {
        stopped = true;
        socket.pause();
        resolve({ socket, received: () => received, closed });
      }
    });
    socket.on("close", () => reject(new Error(`closed after ${received} bytes`)));
    socket.on("connect", () =>
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${apiKey}\r\nx-request-id: ${requestId}\r\n` +
          `Content-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
      ),
    );
  });
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
  return Number(line!.split(/\s+/)[1]) * 1024;
}

/** The mock request serving a stream, found by the requests it received since `before`. */
function lastRequest(mock: MockUpstream, before: number) {
  expect(mock.requests.length).toBe(before + 1);
  return mock.requests[before]!;
}

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let mocks: MockUpstreamSet;
beforeAll(async () => {
  db = await createTestDatabase();
  mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
});
afterAll(async () => {
  await closeClients();
  await mocks.close();
  await db.drop();
});

async function startServer(env: Record<string, string>) {
  const server = await spawnServerOnMocks(mocks, { DATABASE_URL: db.url, ADMIN_TOKEN: "op", LOG_LEVEL: "warn", SHUTDOWN_GRACE_MS: "1000", ...env });
  const created = await fetch(`${server.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: "Bearer op", "content-type": "application/json" },
    body: JSON.stringify({ email: `bp-${crypto.randomUUID()}@example.test`, credit_micro_usd: 100_000_000 }),
  }).then((r) => r.json() as Promise<any>);
  return { server, apiKey: created.api_key as string };
}

async function stop(server: SpawnedServer) {
  server.process.kill("SIGTERM");
  await server.exited;
}

/** How each client protocol's terminal error frame starts. */
const ERROR_FRAME_START: Record<Protocol, string> = {
  "openai-chat": 'data: {"error":{',
  "openai-responses": "event: response.failed",
  "anthropic-messages": "event: error",
  "google-generate-content": 'data: {"error":{',
};

// Passthrough and translated streams, every client protocol.
const PAIRS: Array<[Protocol, Protocol]> = [
  ["openai-chat", "openai-chat"],
  ["anthropic-messages", "openai-chat"],
  ["openai-responses", "google-generate-content"],
  ["google-generate-content", "anthropic-messages"],
  ["anthropic-messages", "anthropic-messages"],
  ["openai-chat", "openai-responses"],
];

describe("a client that stops reading", () => {
  // "pool": a passthrough's accounting copy is decoded by a worker, asynchronously.
  test.each(["auto", "pool"])("holds its upstream back: the gateway reads a bounded amount and its memory stays flat (TRANSLATION_MODE=%s)", async (translationMode) => {
    const { server, apiKey } = await startServer({ STREAM_STALL_TIMEOUT_MS: "60000", TRANSLATION_MODE: translationMode });
    try {
      const baseline = rssBytes(server.process.pid);
      const clients: StalledClient[] = [];
      const upstreams: Array<ReturnType<typeof lastRequest>> = [];
      for (const [client, upstream] of PAIRS) {
        const mock = mocks[UPSTREAM[upstream].mock];
        const before = mock.requests.length;
        mock.queueScenarios({ kind: "flood", floodFrames: FLOOD_FRAMES });
        clients.push(await stallingClient(server.url, apiKey, client, UPSTREAM[upstream].model, `bp-${crypto.randomUUID()}`, 64 * 1024 + Math.floor(Math.random() * 64 * 1024)));
        upstreams.push(lastRequest(mock, before));
      }
      // Long enough for an unbounded relay to pull the whole answer (it does in well under a second).
      await Bun.sleep(2_000);
      // Then until the counts have not moved for half a second (the buffers are full; on a
      // loaded machine that takes longer), bounded: a relay that keeps pulling fails below.
      const counts = () => upstreams.map((request) => request.streamedBytes).join();
      for (let steady = 0, polls = 0, last = counts(); steady < 5 && polls < 150; polls++) {
        await Bun.sleep(100);
        steady = counts() === last ? steady + 1 : 0;
        last = counts();
      }
      const pulled = upstreams.map((request) => request.streamedBytes);
      await Bun.sleep(500);
      const growth = rssBytes(server.process.pid) - baseline;
      console.log(`upstream bytes pulled per stream (MB): ${pulled.map((b) => (b / MB).toFixed(1)).join(", ")}; gateway RSS growth ${(growth / MB).toFixed(0)} MB`);
      for (const [index, request] of upstreams.entries()) {
        expect(request.streamedBytes).toBeLessThan(PULLED_AT_MOST);
        // And it stopped: nothing more is pulled while the client does not read.
        expect(request.streamedBytes).toBe(pulled[index]!);
      }
      // Six whole answers would be over 1 GB; what grows is the translation's short-lived garbage.
      expect(growth).toBeLessThan(160 * MB);
      // A client that reads again gets the rest of the stream.
      const resumed = clients[0]!;
      const at = resumed.received();
      resumed.socket.resume();
      for (let polls = 0; resumed.received() <= at + 8 * MB && polls < 200; polls++) await Bun.sleep(50);
      expect(resumed.received()).toBeGreaterThan(at + 8 * MB);
      for (const client of clients) client.socket.destroy();
    } finally {
      await stop(server);
    }
  }, 60_000);

  test("is ended after STREAM_STALL_TIMEOUT_MS: upstream aborted, request cancelled with the output produced so far, error frame last", async () => {
    const { server, apiKey } = await startServer({ STREAM_STALL_TIMEOUT_MS: "1000" });
    const sql = database(db.url);
    try {
      const stalled: Array<{ requestId: string; client: StalledClient; pair: [Protocol, Protocol]; since: number }> = [];
      for (const pair of PAIRS) {
        const [client, upstream] = pair;
        mocks[UPSTREAM[upstream].mock].queueScenarios({ kind: "flood", floodFrames: FLOOD_FRAMES });
        const requestId = `stall-${crypto.randomUUID()}`;
        const stalledClient = await stallingClient(server.url, apiKey, client, UPSTREAM[upstream].model, requestId, 64 * 1024);
        stalled.push({ requestId, client: stalledClient, pair, since: Date.now() });
      }
      for (const s of stalled) {
        // Settled once its client has not read for the deadline, while it still does not read.
        let record: any;
        while (!record && Date.now() - s.since < 10_000) {
          [record] = (await sql`select * from requests where request_id = ${s.requestId}`).map(normaliseRow);
          if (!record) await Bun.sleep(50);
        }
        expect(Date.now() - s.since).toBeGreaterThanOrEqual(900);
        expect(record).toMatchObject({ status: "cancelled", provider_id: UPSTREAM[s.pair[1]].providerId, billing_status: "computed" });
        expect(record.usage_evidence.source).toBe("estimated");
        // The 64 KB the client read, a token per byte, exceed what the upstream can bill: the
        // request's output ceiling (its max tokens, or the default the gateway sends) bounds it.
        expect(record.completion_tokens).toBeGreaterThanOrEqual(1_024);
        expect(record.completion_tokens).toBeLessThanOrEqual(DEFAULT_MAX_OUTPUT_TOKENS);
        expect(record.final_charge_micro_usd).toBeGreaterThan(0);
      }
      for (const s of stalled) {
        // Reading again, the client gets what was queued, then the error frame and the end:
        // the upstream was cut, far short of its answer.
        const resumedAt = Date.now();
        s.client.socket.resume();
        const text = await s.client.closed;
        console.log(`${s.pair.join(" ← ")}: ${(s.client.received() / MB).toFixed(1)} MB in all, the rest read in ${Date.now() - resumedAt} ms`);
        expect(s.client.received()).toBeLessThan(PULLED_AT_MOST);
        expect(text).toContain(ERROR_FRAME_START[s.pair[0]]);
        expect(text.endsWith("0\r\n\r\n")).toBe(true);
      }
      expect(server.output()).not.toContain("error");
    } finally {
      await stop(server);
    }
  }, 60_000);
});

import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { createTestDatabase } from "../helpers/test-database";
import { MOCK_KEY, spawnServerOnMocks } from "../helpers/inference-harness";
import { startAllMockUpstreams, type MockUpstreamSet } from "../helpers/mock-upstreams";
import { startOtlpCollector } from "../helpers/otlp-collector";
import type { SpawnedServer } from "../helpers/spawn-server";

/** The exporter as an operator meets it: the specification's default encoding, and a collector that never answers. */

const PROMPT = "exporter-canary-prompt 52e1";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let mocks: MockUpstreamSet;

beforeAll(async () => {
  database = await createTestDatabase();
  mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
});

afterAll(async () => {
  await mocks.close();
  await database.drop();
});

async function createAccount(server: SpawnedServer): Promise<string> {
  const created = await fetch(`${server.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: "Bearer op", "content-type": "application/json" },
    body: JSON.stringify({ email: `x${Date.now()}${Math.random()}@example.test`, credit_micro_usd: 100_000_000 }),
  }).then((r) => r.json() as Promise<{ api_key: string }>);
  return created.api_key;
}

function chat(server: SpawnedServer, apiKey: string): Promise<Response> {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: PROMPT }] }),
  });
}

test("by default spans go as OTLP protobuf to the traces endpoint as written", async () => {
  const collector = await startOtlpCollector();
  const server = await spawnServerOnMocks(mocks, {
    DATABASE_URL: database.url,
    ADMIN_TOKEN: "op",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/custom/traces`,
  });
  try {
    const response = await chat(server, await createAccount(server));
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id")!;
    server.process.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    expect(collector.received.length).toBeGreaterThan(0);
    for (const body of collector.received) {
      expect(body.path).toBe("/custom/traces");
      expect(body.contentType).toBe("application/x-protobuf");
    }
    // Protobuf carries strings as their UTF-8 bytes: the attributes are there, the prompt is not.
    const bytes = collector.received.map((body) => Buffer.from(body.bytes).toString("latin1")).join("");
    expect(bytes).toContain(requestId);
    expect(bytes).toContain("gen_ai.usage.output_tokens");
    expect(bytes).not.toContain(PROMPT);
  } finally {
    server.process.kill("SIGKILL");
    await collector.close();
  }
}, 60_000);

test("a collector that accepts connections and never answers: requests are served, and SIGTERM still ends the process", async () => {
  const held: Socket[] = [];
  const silent: Server = createServer((socket) => void held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as { port: number }).port;
  const server = await spawnServerOnMocks(mocks, {
    DATABASE_URL: database.url,
    ADMIN_TOKEN: "op",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    // Export at once, a tiny queue, and deadlines that would outlast the test: only the
    // gateway's own bounds keep requests and the exit from waiting on the collector.
    OTEL_BSP_SCHEDULE_DELAY: "0",
    OTEL_BSP_MAX_QUEUE_SIZE: "4",
    OTEL_BSP_EXPORT_TIMEOUT: "600000",
    OTEL_EXPORTER_OTLP_TIMEOUT: "600000",
    LOG_LEVEL: "silent",
  });
  try {
    const apiKey = await createAccount(server);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => chat(server, apiKey).then((response) => response.status)));
    expect(statuses).toEqual(Array(20).fill(200));
    expect(held.length).toBeGreaterThan(0);
    server.process.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  } finally {
    server.process.kill("SIGKILL");
    for (const socket of held) socket.destroy();
    silent.close();
  }
}, 60_000);

import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createTestDatabase } from "../support/test-database";
import { MOCK_KEY, writeMockCatalog } from "../support/inference-harness";
import { mockProviderEnv, startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import { startOtlpCollector, type OtlpCollector } from "../support/otlp-collector";

/**
 * Tracing off costs nothing: not one OpenTelemetry module is loaded by a server that served
 * a request. Each run is its own process (serve-one-request.ts), so no other test's imports
 * count; the same run with tracing on shows that the check sees the modules when they are.
 */

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let mocks: MockUpstreamSet;
let collector: OtlpCollector;
let providersFile: string;

beforeAll(async () => {
  database = await createTestDatabase();
  mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
  collector = await startOtlpCollector();
  providersFile = writeMockCatalog(mocks);
});

afterAll(async () => {
  await collector.close();
  await mocks.close();
  await database.drop();
});

async function serveOneRequest(otel: Record<string, string>): Promise<{ status: number; openTelemetryModules: number }> {
  // This process's environment without any OTEL_* variable, then the run's own.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")));
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "serve-one-request.ts")], {
    env: { ...env, DATABASE_URL: database.url, PROVIDERS_FILE: providersFile, ...mockProviderEnv(MOCK_KEY), ...otel },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`serve-one-request.ts exited ${code}: ${err}`);
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

test("with tracing off, a server that served a request has loaded no OpenTelemetry module", async () => {
  expect(await serveOneRequest({})).toEqual({ status: 200, openTelemetryModules: 0 });
}, 60_000);

test("with tracing on, the same check finds the OpenTelemetry modules", async () => {
  const run = await serveOneRequest({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
  expect(run.status).toBe(200);
  expect(run.openTelemetryModules).toBeGreaterThan(0);
}, 60_000);

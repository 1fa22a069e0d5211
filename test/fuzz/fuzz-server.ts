import { MOCK_KEY, spawnServerOnMocks } from "../support/inference-harness";
import { startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import { createTestDatabase } from "../support/test-database";
import type { SpawnedServer } from "../support/spawn-server";

/** One spawned Switchyard on the four mock upstreams and its own test database, for the fuzz suites. */
export interface FuzzServer {
  db: Awaited<ReturnType<typeof createTestDatabase>>;
  mocks: MockUpstreamSet;
  server: SpawnedServer;
}

export async function startFuzzServer(env: Record<string, string>): Promise<FuzzServer> {
  const db = await createTestDatabase();
  const mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
  const server = await spawnServerOnMocks(mocks, { DATABASE_URL: db.url, LOG_LEVEL: "warn", SHUTDOWN_GRACE_MS: "2000", ...env });
  return { db, mocks, server };
}

/** SIGTERM (SIGKILL after 5 s), then the mocks and the database; whatever part started. */
export async function stopFuzzServer(running: Partial<FuzzServer> | undefined): Promise<void> {
  const server = running?.server;
  const killer = setTimeout(() => server?.process.kill("SIGKILL"), 5_000);
  server?.process.kill("SIGTERM");
  await server?.exited;
  clearTimeout(killer);
  await running?.mocks?.close();
  await running?.db?.drop();
}

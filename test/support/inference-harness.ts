import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import type { Config } from "../../src/config";
import { catalogFor, mockProviderEnv, startAllMockUpstreams, type MockUpstream, type MockUpstreamSet } from "./mock-upstreams";
import { startTestServer, type TestAccount, type TestServer } from "./test-server";
import { spawnServer, type SpawnedServer } from "./spawn-server";
import { createTestDatabase, type TestDatabase } from "./test-database";

export const MOCK_KEY = "mock-platform-key";

export interface InferenceHarness {
  mocks: MockUpstreamSet;
  server: TestServer;
  account: TestAccount;
  close(): Promise<void>;
}

/**
 * Switchyard pointed at the four mock upstreams through a PROVIDERS_FILE catalog,
 * with platform keys for each, and one account with credit.
 */
export async function startInferenceHarness(overrides: Partial<Config> = {}): Promise<InferenceHarness> {
  const mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
  const providersFile = writeMockCatalog(mocks);
  Object.assign(process.env, mockProviderEnv(MOCK_KEY));
  const server = await startTestServer({ providersFile, ...overrides });
  const account = await server.createAccount(undefined, 100_000_000);
  return {
    mocks,
    server,
    account,
    async close() {
      await server.close();
      await mocks.close();
    },
  };
}

/** A server whose openai-chat provider ("mock-openai") is `upstream`, a test's own loopback server. */
export interface HandWrittenUpstreamHarness {
  upstream: ReturnType<typeof Bun.serve>;
  server: TestServer;
  account: TestAccount;
  close(): Promise<void>;
}

/**
 * Switchyard with one provider, "mock-openai" (openai-chat), served by `answer`: for upstreams
 * no mock imitates (hostile ones, answers of tens of MiB), and one account with credit.
 */
export async function startBehindUpstream(answer: (request: Request) => Response | Promise<Response>, overrides: Partial<Config> = {}): Promise<HandWrittenUpstreamHarness> {
  const upstream = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: answer });
  const catalog = catalogFor([{ protocol: "openai-chat", baseUrl: `http://127.0.0.1:${upstream.port}/v1` } as MockUpstream], { scenarioSuffixes: [] });
  const providersFile = join(mkdtempSync(join(tmpdir(), "switchyard-catalog-")), "providers.json");
  writeFileSync(providersFile, JSON.stringify(catalog));
  Object.assign(process.env, mockProviderEnv(MOCK_KEY));
  const server = await startTestServer({ providersFile, ...overrides });
  const account = await server.createAccount(undefined, 100_000_000);
  return {
    upstream,
    server,
    account,
    async close() {
      await server.close();
      upstream.stop(true);
    },
  };
}

/** The mocks' catalog (their "@scenario" models included) as a PROVIDERS_FILE; returns its path. */
export function writeMockCatalog(mocks: MockUpstreamSet): string {
  const providersFile = join(mkdtempSync(join(tmpdir(), "switchyard-catalog-")), "providers.json");
  writeFileSync(providersFile, JSON.stringify(catalogFor(mocks)));
  return providersFile;
}

/** `bun src/main.ts` as its own process (spawnServer), serving `mocks`' catalog with their platform keys. */
export function spawnServerOnMocks(mocks: MockUpstreamSet, env: Record<string, string | undefined>): Promise<SpawnedServer> {
  return spawnServer({ PROVIDERS_FILE: writeMockCatalog(mocks), ...mockProviderEnv(MOCK_KEY), ...env });
}

/** A fresh database and every mock upstream (taking MOCK_KEY): what spawned server processes run on. */
export interface DatabaseAndMocks {
  db: TestDatabase;
  mocks: MockUpstreamSet;
}

/** The setup of the tests that spawn their own server processes (spawnServerOnMocks). */
export async function startDatabaseAndMocks(): Promise<DatabaseAndMocks> {
  const db = await createTestDatabase();
  const mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
  return { db, mocks };
}

/**
 * Its teardown: kills (SIGKILL) each of `servers` a failed test left running, so none
 * outlives the file, then closes the mocks and drops the database.
 */
export async function stopDatabaseAndMocks({ db, mocks }: DatabaseAndMocks, servers: readonly SpawnedServer[] = []): Promise<void> {
  for (const server of servers) if (server.process.exitCode === null) server.process.kill("SIGKILL");
  await mocks.close();
  await db.drop();
}

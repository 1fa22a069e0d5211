import { startServer, type RunningServer, type ServerParts } from "../../src/server";
import type { Config } from "../../src/config";
import { createTestDatabase } from "./test-database";
import { call, type ApiResponse } from "./api-client";

export const TEST_ADMIN_TOKEN = "test-admin-token";
/** Fixed so test servers sharing one database share their BYOK KEKs, and write no key file. */
export const TEST_BYOK_MASTER_KEY = Buffer.alloc(32, 7).toString("base64");

export interface TestAccount {
  accountId: string;
  namespaceId: string;
  apiKey: string;
}

export interface TestServer {
  url: string;
  server: RunningServer;
  databaseUrl: string;
  api<T = any>(method: string, path: string, options?: Parameters<typeof call>[3]): Promise<ApiResponse<T>>;
  createAccount(email?: string, creditMicroUsd?: number): Promise<TestAccount>;
  /** Mints a namespace-bound key with the given scopes using `token`. */
  mintKey(token: string, scopes: string[], nsid?: string): Promise<string>;
  close(): Promise<void>;
}

let accountCounter = 0;

/** An in-process Switchyard on its own fresh database, listening on a loopback port. */
export async function startTestServer(overrides: Partial<Config> = {}, database?: { url: string; drop(): Promise<void> }, parts: ServerParts = {}): Promise<TestServer> {
  const db = database ?? (await createTestDatabase());
  const server = await startServer({
    databaseUrl: db.url,
    port: 0,
    host: "127.0.0.1",
    adminToken: TEST_ADMIN_TOKEN,
    byokMasterKey: TEST_BYOK_MASTER_KEY,
    logLevel: "silent",
    databasePoolSize: 5,
    ...overrides,
  }, parts);
  const api: TestServer["api"] = (method, path, options) => call(server.url, method, path, options);
  return {
    url: server.url,
    server,
    databaseUrl: db.url,
    api,
    async createAccount(email, creditMicroUsd = 0) {
      const response = await api("POST", "/admin/accounts", {
        token: TEST_ADMIN_TOKEN,
        body: { email: email ?? `user${++accountCounter}-${Date.now()}@example.test`, credit_micro_usd: creditMicroUsd },
      });
      if (response.status !== 200) throw new Error(`createAccount failed: ${response.status} ${response.text}`);
      return { accountId: response.body.account_id, namespaceId: response.body.namespace_id, apiKey: response.body.api_key };
    },
    async mintKey(token, scopes, nsid = "me") {
      const response = await api("POST", `/v1/namespaces/${nsid}/keys`, { token, body: { display_name: "test", scopes } });
      if (response.status !== 200) throw new Error(`mintKey failed: ${response.status} ${response.text}`);
      return response.body.token;
    },
    async close() {
      await server.shutdown();
      if (!database) await db.drop();
    },
  };
}

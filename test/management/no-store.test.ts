import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, TEST_ADMIN_TOKEN, type TestAccount, type TestServer } from "../support/test-server";

/**
 * Authenticated answers are one caller's own (history, usage, keys, policies, the operator
 * API): every one carries `Cache-Control: no-store`, success or error, so no shared or
 * browser cache keeps them. Public figures keep their own caching.
 */
let server: TestServer;
let account: TestAccount;
beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
});
afterAll(() => server.close());

interface Operation {
  method: string;
  path: string;
  tags: string[];
  scope: string | undefined;
}

async function operations(): Promise<Operation[]> {
  const paths = (await server.api("GET", "/openapi/json")).body.paths as Record<string, Record<string, { tags?: string[]; "x-scope"?: string }>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, tags: operation.tags ?? [], scope: operation["x-scope"] })),
  );
}

/** A path of the document with its parameters filled in (ids that exist nowhere). */
function concrete(path: string): string {
  return path.replace(/\{nsid\}/g, "me").replace(/\{[^}]+\}/g, "x_0000000000000000");
}

async function send(method: string, path: string, token?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${server.url}${path}`, { method, headers, body: method === "GET" || method === "DELETE" ? undefined : "{}" });
  await response.arrayBuffer();
  return response;
}

describe("Cache-Control: no-store on authenticated answers", () => {
  test("every management route (each documents its scope) and every operator route answers 401 without a credential, with no-store", async () => {
    const guarded = (await operations()).filter((op) => (op.scope !== undefined && !op.tags.includes("inference")) || op.tags.includes("admin"));
    expect(guarded.length).toBeGreaterThan(100);
    for (const op of guarded) {
      const response = await send(op.method, concrete(op.path));
      const seen = { route: `${op.method} ${op.path}`, status: response.status, cacheControl: response.headers.get("cache-control") };
      expect(seen).toEqual({ route: seen.route, status: 401, cacheControl: "no-store" });
    }
  });

  test("history, usage, daily usage, key lists, policy status and the account carry no-store", async () => {
    const policy = await server.api("POST", "/v1/namespaces/me/policies", {
      token: account.apiKey,
      body: { name: "no-store budget", kind: "budget", spec: { window: "total", limit_micro_usd: 5 } },
    });
    expect(policy.status).toBe(200);
    for (const path of [
      "/v1/requests",
      `/v1/namespaces/${account.namespaceId}/requests`,
      "/v1/namespaces/me/usage",
      "/v1/namespaces/me/usage/daily",
      "/v1/usage",
      "/v1/namespaces/me/keys",
      "/v1/keys",
      "/v1/account/keys",
      "/v1/namespaces",
      `/v1/namespaces/me/policies/${policy.body.id}/status`,
      "/v1/namespaces/me/policies",
      "/v1/account",
      "/v1/byok/keys",
    ]) {
      const response = await server.api("GET", path, { token: account.apiKey });
      expect({ path, status: response.status, cacheControl: response.headers.get("cache-control") }).toEqual({ path, status: 200, cacheControl: "no-store" });
    }
  });

  test("error answers of management routes carry it too: 404 for a namespace or record that is not there, 403 for a missing scope, 400 for a bad body", async () => {
    const readOnly = await server.mintKey(account.apiKey, ["usage:read"]);
    const cases: Array<[string, string, string, number, unknown?]> = [
      ["GET", "/v1/namespaces/ns_missing0000000000/keys", account.apiKey, 404],
      ["GET", `/v1/namespaces/${account.namespaceId}/requests/req_missing`, account.apiKey, 404],
      ["GET", "/v1/namespaces/me/policies/pol_missing0000000000/status", account.apiKey, 404],
      ["GET", "/v1/namespaces/me/keys", readOnly, 403],
      ["POST", "/v1/namespaces/me/keys", account.apiKey, 400, { display_name: 5 }],
      ["GET", "/v1/requests?status=a&status=b&limit=abc", account.apiKey, 400],
    ];
    for (const [method, path, token, status, body] of cases) {
      const response = await server.api(method, path, { token, body });
      expect({ path, status: response.status, cacheControl: response.headers.get("cache-control") }).toEqual({ path, status, cacheControl: "no-store" });
    }
  });

  test("the operator API carries it, success and error", async () => {
    const credited = await server.api("POST", `/admin/accounts/${account.accountId}/credits`, { token: TEST_ADMIN_TOKEN, body: { amount_micro_usd: 1 } });
    expect(credited.status).toBe(200);
    expect(credited.headers.get("cache-control")).toBe("no-store");
    const wrong = await server.api("POST", `/admin/accounts/${account.accountId}/credits`, { token: "not-the-admin-token", body: { amount_micro_usd: 1 } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("cache-control")).toBe("no-store");
  });

  test("the device decision (a credential or a console session) carries it, success and error", async () => {
    const refused = await send("POST", "/oauth/device/decision");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("cache-control")).toBe("no-store");
    const unknown = await server.api("POST", "/oauth/device/decision", {
      token: account.apiKey,
      body: { user_code: "BBBB-BBBB", namespace_id: account.namespaceId, approve: false },
    });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.headers.get("cache-control")).toBe("no-store");
  });

  test("public endpoints keep their own caching", async () => {
    const models = await server.api("GET", "/v1/models");
    expect(models.status).toBe(200);
    expect(models.headers.get("cache-control")).toBeNull();
    expect((await server.api("GET", "/v1/providers")).headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    expect((await server.api("GET", "/v1/stats/usage")).headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    expect((await server.api("GET", "/v1/byok/encryption-pubkey")).headers.get("cache-control")).toBe("private, max-age=300");
    expect((await server.api("GET", "/ping")).headers.get("cache-control")).toBeNull();
    expect((await server.api("GET", "/no/such/path")).headers.get("cache-control")).toBeNull();
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../support/test-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("POST /admin/accounts", () => {
  test("creates an account, its first namespace and an account-wide key carrying every scope", async () => {
    const response = await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email: "ada@example.test", credit_micro_usd: 2_500_000 } });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["account_id", "api_key", "namespace_id"]);
    const key = response.body.api_key;
    const minted = await server.api("POST", "/v1/keys", { token: key, body: { display_name: "all", scopes: [...ALL_SCOPES].filter((s) => !["user:write", "clients:write", "namespace:write"].includes(s)) } });
    expect(minted.status).toBe(200);
    const namespaces = await server.api("GET", "/v1/namespaces", { token: key });
    expect(namespaces.body.data[0].id).toBe(response.body.namespace_id);
  });

  test("the response carrying the account's key is never cached", async () => {
    const response = await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email: "nostore@example.test" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("pragma")).toBe("no-cache");
  });

  test("refuses a second account with the same email with 409, and a malformed email with 400", async () => {
    await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email: "twice@example.test" } });
    const again = await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email: "twice@example.test" } });
    expect(again.status).toBe(409);
    for (const body of [{ email: "not-an-email" }, {}, { email: "x@y.test", credit_micro_usd: 1.5 }, { email: "x@y.test", credit_micro_usd: -1 }]) {
      expect((await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body })).status).toBe(400);
    }
  });

  test("is 401 with a wrong operator token and with an account's own key", async () => {
    const account = await server.createAccount();
    expect((await server.api("POST", "/admin/accounts", { token: "nope", body: { email: "z@example.test" } })).status).toBe(401);
    expect((await server.api("POST", "/admin/accounts", { token: account.apiKey, body: { email: "z@example.test" } })).status).toBe(401);
  });
});

describe("POST /admin/accounts/{id}/credits", () => {
  test("adds credit and returns the new balance", async () => {
    const account = await server.createAccount(undefined, 100);
    const response = await server.api("POST", `/admin/accounts/${account.accountId}/credits`, { token: TEST_ADMIN_TOKEN, body: { amount_micro_usd: 900 } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ balance_micro_usd: 1000 });
  });

  test("is 404 for an unknown account and 400 for a zero, negative or fractional amount", async () => {
    const account = await server.createAccount();
    expect((await server.api("POST", "/admin/accounts/acct_missing/credits", { token: TEST_ADMIN_TOKEN, body: { amount_micro_usd: 5 } })).status).toBe(404);
    for (const amount of [0, -5, 2.5, "5"]) {
      const response = await server.api("POST", `/admin/accounts/${account.accountId}/credits`, { token: TEST_ADMIN_TOKEN, body: { amount_micro_usd: amount } });
      expect(response.status).toBe(400);
    }
  });
});

describe("without ADMIN_TOKEN", () => {
  test("the operator API answers 404 like any unknown path", async () => {
    const plain = await startTestServer({ adminToken: undefined });
    try {
      const response = await plain.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email: "a@example.test" } });
      expect(response.status).toBe(404);
      expect(response.body.error).toBe("not_found");
    } finally {
      await plain.close();
    }
  });
});

describe("bun run admin", () => {
  test("creates an account and adds credit through the operator API", async () => {
    const env = { ...process.env, ADMIN_TOKEN: TEST_ADMIN_TOKEN, SWITCHYARD_URL: server.url };
    // Async spawn: the server under test runs in this process and must keep answering.
    const runCli = async (...args: string[]) => {
      const child = Bun.spawn([process.execPath, "src/cli/admin.ts", ...args], { env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      return { stdout, stderr, exitCode };
    };
    const created = await runCli("create-account", "--email", "cli@example.test", "--credit", "42");
    expect(created.exitCode).toBe(0);
    const account = JSON.parse(created.stdout);
    expect(account.api_key).toMatch(/^brk_/);
    expect((await server.api("GET", "/v1/namespaces", { token: account.api_key })).status).toBe(200);
    const credited = await runCli("add-credits", account.account_id, "58");
    expect(JSON.parse(credited.stdout)).toEqual({ balance_micro_usd: 100 });
    const bad = await runCli("add-credits", account.account_id, "lots");
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain("integer");
  });
});

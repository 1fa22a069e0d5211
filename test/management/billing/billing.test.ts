import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startInferenceHarness, type InferenceHarness } from "../../support/inference-harness";
import { TEST_ADMIN_TOKEN, type TestAccount } from "../../support/test-server";

/** Wallet balance and ledger, after real requests through the mock upstreams. */

let harness: InferenceHarness;
let sql: postgres.Sql;
beforeAll(async () => {
  harness = await startInferenceHarness();
  sql = postgres(harness.server.databaseUrl, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql.end();
  await harness.close();
});

const api = (method: string, path: string, token?: string) => harness.server.api(method, path, { token });
const flush = () => harness.server.server.services.writeBuffer.flush();
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;
const CREDIT = 5_000_000;

async function chat(token: string, requestId: string, usage: { prompt: number; completion: number }) {
  harness.mocks.openai.queueScenarios({ kind: "text", usage });
  const response = await harness.server.api("POST", "/v1/chat/completions", {
    token,
    headers: { "x-request-id": requestId },
    // A prompt as long as the tokens the mock bills: admission never debits more than a request can cost.
    body: { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "x".repeat(usage.prompt) }] },
  });
  expect(response.status).toBe(200);
}

describe("GET /v1/billing/balance", () => {
  test("a new account: its credit, nothing pending, all of it available, in USD", async () => {
    const account = await harness.server.createAccount(undefined, CREDIT);
    const response = await api("GET", "/v1/billing/balance", account.apiKey);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ balance_micro_usd: CREDIT, pending_debits_micro_usd: 0, available_micro_usd: CREDIT, currency: "USD" });
  });

  test("after requests the balance is down by exactly the sum of their charges, and nothing stays pending once the idle lease is returned", async () => {
    const account = await harness.server.createAccount(undefined, CREDIT);
    await chat(account.apiKey, unique("b1"), { prompt: 1000, completion: 200 }); // 270 µUSD
    await chat(account.apiKey, unique("b2"), { prompt: 10_000, completion: 2_000 }); // 1500 + 1200 = 2700 µUSD
    await flush();
    const records = await api("GET", "/v1/requests", account.apiKey);
    const charges = records.body.data.map((r: any) => r.final_charge_micro_usd);
    expect(charges).toEqual([2700, 270]);
    const settled = await api("GET", "/v1/billing/balance", account.apiKey);
    expect(settled.body.balance_micro_usd).toBe(CREDIT - 2970);
    // Until this instance gives its idle wallet lease back, the leased amount is pending.
    expect(settled.body.available_micro_usd).toBe(Math.max(settled.body.balance_micro_usd - settled.body.pending_debits_micro_usd, 0));
    await harness.server.server.services.walletLeases.tick(Date.now() + 60_000);
    const response = await api("GET", "/v1/billing/balance", account.apiKey);
    expect(response.body).toEqual({ balance_micro_usd: CREDIT - 2970, pending_debits_micro_usd: 0, available_micro_usd: CREDIT - 2970, currency: "USD" });
    const [wallet] = await sql`select reserved_micro_usd from wallets where account_id = ${account.accountId}`;
    expect(Number(wallet!.reserved_micro_usd)).toBe(0);
  });

  test("pending debits are the wallet's reservations, and available never goes below 0", async () => {
    const account = await harness.server.createAccount(undefined, 1_000);
    await sql`update wallets set reserved_micro_usd = 400 where account_id = ${account.accountId}`;
    expect((await api("GET", "/v1/billing/balance", account.apiKey)).body).toMatchObject({ balance_micro_usd: 1_000, pending_debits_micro_usd: 400, available_micro_usd: 600 });
    await sql`update wallets set reserved_micro_usd = 1500 where account_id = ${account.accountId}`;
    expect((await api("GET", "/v1/billing/balance", account.apiKey)).body).toMatchObject({ balance_micro_usd: 1_000, pending_debits_micro_usd: 1_500, available_micro_usd: 0 });
  });

  test("is account-level: a namespace-bound key with billing:read sees the same wallet", async () => {
    const account = await harness.server.createAccount(undefined, CREDIT);
    const other = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "other" } });
    const bound = await harness.server.mintKey(account.apiKey, ["billing:read"], other.body.id);
    expect((await api("GET", "/v1/billing/balance", bound)).body).toEqual((await api("GET", "/v1/billing/balance", account.apiKey)).body);
  });
});

describe("GET /v1/billing/transactions", () => {
  let account: TestAccount;
  const ids = { first: unique("t1"), second: unique("t2") };
  beforeAll(async () => {
    account = await harness.server.createAccount(undefined, CREDIT);
    await chat(account.apiKey, ids.first, { prompt: 1000, completion: 200 });
    await chat(account.apiKey, ids.second, { prompt: 2000, completion: 400 });
    await flush();
  });

  test("lists the operator credit and one signed usage debit per request, newest first", async () => {
    const response = await api("GET", "/v1/billing/transactions", account.apiKey);
    expect(response.status).toBe(200);
    expect(response.body.limit).toBe(25);
    expect(response.body.offset).toBe(0);
    const data = response.body.data;
    expect(data.map((e: any) => [e.kind, e.amount_micro_usd, e.request_id, e.namespace_id])).toEqual([
      ["usage", -540, ids.second, account.namespaceId],
      ["usage", -270, ids.first, account.namespaceId],
      ["credit", CREDIT, null, null],
    ]);
    for (const entry of data) {
      expect(Object.keys(entry).sort()).toEqual(["amount_micro_usd", "created_at", "id", "kind", "namespace_id", "request_id"]);
      expect(entry.id).toMatch(/^le_/);
      expect(entry.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    // The ledger sums to the balance.
    const balance = await api("GET", "/v1/billing/balance", account.apiKey);
    expect(data.reduce((sum: number, e: any) => sum + e.amount_micro_usd, 0)).toBe(balance.body.balance_micro_usd);
  });

  test("an operator top-up appears as a new credit entry, first", async () => {
    const topUp = await harness.server.api("POST", `/admin/accounts/${account.accountId}/credits`, { token: TEST_ADMIN_TOKEN, body: { amount_micro_usd: 1_000 } });
    expect(topUp.status).toBe(200);
    const [latest] = (await api("GET", "/v1/billing/transactions?limit=1", account.apiKey)).body.data;
    expect(latest).toMatchObject({ kind: "credit", amount_micro_usd: 1_000, request_id: null });
  });

  test("limit is clamped to [1, 100], offset pages, and non-integers are 400", async () => {
    const all = (await api("GET", "/v1/billing/transactions?limit=100", account.apiKey)).body.data;
    expect(all.length).toBe(4);
    const clamped = await api("GET", "/v1/billing/transactions?limit=0", account.apiKey);
    expect([clamped.body.limit, clamped.body.data.length]).toEqual([1, 1]);
    expect((await api("GET", "/v1/billing/transactions?limit=500", account.apiKey)).body.limit).toBe(100);
    const second = await api("GET", "/v1/billing/transactions?limit=2&offset=2", account.apiKey);
    expect(second.body.data).toEqual(all.slice(2, 4));
    for (const query of ["limit=ten", "offset=-1", "offset=0.5"]) {
      const response = await api("GET", `/v1/billing/transactions?${query}`, account.apiKey);
      expect({ query, status: response.status, error: response.body.error }).toEqual({ query, status: 400, error: "bad_request" });
    }
  });

  test("another account's entries never appear, and a namespace-bound key sees only its namespace's debits", async () => {
    const bob = await harness.server.createAccount(undefined, 777);
    const bobs = (await api("GET", "/v1/billing/transactions", bob.apiKey)).body.data;
    expect(bobs.map((e: any) => [e.kind, e.amount_micro_usd])).toEqual([["credit", 777]]);

    const other = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "spender" } });
    const bound = await harness.server.mintKey(account.apiKey, ["billing:read", "inference:invoke"], other.body.id);
    const requestId = unique("bound");
    await chat(bound, requestId, { prompt: 1000, completion: 200 });
    await flush();
    const scoped = (await api("GET", "/v1/billing/transactions", bound)).body.data;
    expect(scoped.map((e: any) => [e.kind, e.amount_micro_usd, e.request_id, e.namespace_id])).toEqual([["usage", -270, requestId, other.body.id]]);
    const whole = (await api("GET", "/v1/billing/transactions", account.apiKey)).body.data;
    expect(whole[0]).toMatchObject({ request_id: requestId });
    expect(whole).toHaveLength(5);
  });

  test("after=<next_after> walks the whole ledger page by page, each entry once, in the listing's order; the last page says null", async () => {
    const all = (await api("GET", "/v1/billing/transactions?limit=100", account.apiKey)).body;
    expect(all.next_after).toBeNull();
    const walked: any[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: string = after === null ? "limit=2" : `limit=2&after=${after}`;
      const response = await api("GET", `/v1/billing/transactions?${query}`, account.apiKey);
      expect(response.status).toBe(200);
      walked.push(...response.body.data);
      after = response.body.next_after;
      if (after === null) break;
      expect(after).toBe(response.body.data.at(-1).id);
    }
    expect(after).toBeNull();
    expect(walked).toEqual(all.data);
    // offset counts from the position.
    const skipped = await api("GET", `/v1/billing/transactions?limit=1&offset=1&after=${all.data[0].id}`, account.apiKey);
    expect(skipped.body.data).toEqual([all.data[2]]);
  });

  test("offset is bounded and after must be an entry the caller may list: another account's, another namespace's and a missing one read the same 400", async () => {
    const deep = await api("GET", "/v1/billing/transactions?offset=10001", account.apiKey);
    expect(deep.status).toBe(400);
    expect(deep.body.error_description).toContain("after=");
    expect((await api("GET", "/v1/billing/transactions?offset=99999999999999999999", account.apiKey)).status).toBe(400);
    expect((await api("GET", "/v1/billing/transactions?offset=10000", account.apiKey)).status).toBe(200);

    const mallory = await harness.server.createAccount(undefined, 555);
    const [malloryCredit] = (await api("GET", "/v1/billing/transactions", mallory.apiKey)).body.data;
    const [ownCredit] = (await api("GET", "/v1/billing/transactions?limit=100", account.apiKey)).body.data.filter((entry: any) => entry.kind === "credit");
    const other = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: unique("cursor") } });
    const bound = await harness.server.mintKey(account.apiKey, ["billing:read"], other.body.id);
    const answers = [];
    for (const [token, id] of [
      [account.apiKey, malloryCredit.id], // another account's entry
      [account.apiKey, "le_0000000000000000000000"], // missing
      [bound, ownCredit.id], // the account's credit, not the bound namespace's
    ] as const) {
      const response = await fetch(`${harness.server.url}/v1/billing/transactions?after=${id}`, { headers: { authorization: `Bearer ${token}` } });
      answers.push({ status: response.status, body: await response.text() });
    }
    expect(answers[0]!.status).toBe(400);
    expect(answers[1]).toEqual(answers[0]!);
    expect(answers[2]).toEqual(answers[0]!);
    for (const hostile of ["", "%00", "x".repeat(200), "le_1%22%20or%201=1"]) {
      const response = await api("GET", `/v1/billing/transactions?after=${hostile}`, account.apiKey);
      expect({ hostile, status: response.status }).toEqual({ hostile, status: 400 });
    }
  });
});

describe("authorization", () => {
  test("both routes need billing:read: 401 without a credential, 403 naming the scope without it", async () => {
    const account = await harness.server.createAccount(undefined, CREDIT);
    const usageOnly = await harness.server.mintKey(account.apiKey, ["usage:read"]);
    for (const path of ["/v1/billing/balance", "/v1/billing/transactions"]) {
      expect((await api("GET", path)).status).toBe(401);
      const forbidden = await api("GET", path, usageOnly);
      expect({ path, status: forbidden.status, body: forbidden.body }).toEqual({
        path,
        status: 403,
        body: { error: "forbidden", error_description: "missing required scope: billing:read" },
      });
    }
  });

  test("the OpenAPI document lists both routes with their scope", async () => {
    const spec = await api("GET", "/openapi/json");
    for (const path of ["/v1/billing/balance", "/v1/billing/transactions"]) expect(spec.body.paths[path].get["x-scope"]).toBe("billing:read");
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type postgres from "postgres";
import { startInferenceHarness, writeMockCatalog, type InferenceHarness } from "../support/inference-harness";
import { startTestServer, type TestServer } from "../support/test-server";
import { getPage, signedInUser } from "../support/console-session";
import { closeClients, database, flush } from "./metering-support";

/**
 * Refusals at admission (402 funds or a budget, 403 a guardrail, 429 a rate limit) are
 * sampled like those before it (docs/architecture.md "Metering", **Refused requests**):
 * an account hammering its own rate limit gets at most REFUSED_RECORDS_PER_MINUTE records
 * a minute, across every instance on the database, and the rest are counted, in the usage
 * answers and the console as before. Tried as an attacker would: thousands of requests
 * from one account, on two instances at once.
 */
const PER_MINUTE = 3;
const FLOOD = 2_000;
const CONCURRENCY = 40;
const MODEL = "mock-openai/gpt-4o-mini";
let harness: InferenceHarness;
let second: TestServer;
let sql: postgres.Sql;
beforeAll(async () => {
  harness = await startInferenceHarness({ refusedRecordsPerMinute: PER_MINUTE });
  // A second instance on the same database, as SERVER_PROCESSES or another host would be.
  second = await startTestServer(
    { providersFile: writeMockCatalog(harness.mocks), refusedRecordsPerMinute: PER_MINUTE },
    { url: harness.server.databaseUrl, drop: async () => {} },
  );
  sql = database(harness.server.databaseUrl);
});
afterAll(async () => {
  await closeClients();
  await second.close();
  await harness.close();
});

function chat(baseUrl: string, key: string, maxTokens = 8): Promise<Response> {
  return fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, max_tokens: maxTokens, messages: [{ role: "user", content: "hi" }] }),
  });
}

/** A key of `apiKey`'s namespace bound to a rate limit of one request an hour. */
async function rateLimitedKey(apiKey: string): Promise<{ id: string; token: string }> {
  const api = harness.server.api;
  const key = await api("POST", "/v1/namespaces/me/keys", { token: apiKey, body: { display_name: "hammer", scopes: ["inference:invoke"] } });
  const policy = await api("POST", "/v1/namespaces/me/policies", { token: apiKey, body: { name: "one an hour", kind: "rate_limit", spec: { window_secs: 3600, max_requests: 1 } } });
  const bound = await api("POST", `/v1/namespaces/me/policies/${policy.body.id}/bind`, { token: apiKey, body: { principal_type: "api_key", principal_id: key.body.id } });
  expect([key.status, policy.status, bound.status]).toEqual([200, 200, 200]);
  return { id: key.body.id, token: key.body.token };
}

/** Sends `count` requests, `CONCURRENCY` at a time, alternating over `baseUrls`; returns their statuses. */
async function hammer(baseUrls: readonly string[], key: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const response = await chat(baseUrls[i % baseUrls.length]!, key);
        await response.arrayBuffer();
        statuses.push(response.status);
      }
    }),
  );
  return statuses;
}

async function recordsByStatus(accountId: string): Promise<Record<string, number>> {
  const rows = await sql<{ status_code: number; n: number }[]>`select status_code, count(*)::int as n from requests where account_id = ${accountId} group by status_code`;
  return Object.fromEntries(rows.map((row) => [String(row.status_code), row.n]));
}

async function countedByStatus(accountId: string): Promise<Record<string, number>> {
  const rows = await sql<{ status_code: number; n: number }[]>`select status_code, sum(count)::int as n from refused_request_counts where account_id = ${accountId} group by status_code`;
  return Object.fromEntries(rows.map((row) => [String(row.status_code), row.n]));
}

/** Writes every buffered record and every count, on both instances. */
async function settleAll(): Promise<void> {
  await flush(harness);
  await second.server.services.writeBuffer.flush();
  await harness.server.server.services.refusals.flush();
  await second.server.services.refusals.flush();
}

/** The minutes [start, end] touches: at most the bound of records each. */
function minutesSpanned(startMs: number, endMs: number): number {
  return Math.floor(endMs / 60_000) - Math.floor(startMs / 60_000) + 1;
}

describe("an account hammering its own rate limit", () => {
  test("on two instances at once: at most the bound of records a minute in all, the rest counted exactly, in the usage answers and the console; another account unaffected", async () => {
    const flooder = await signedInUser(harness.server, 100_000_000);
    const bystander = await harness.server.createAccount(undefined, 100_000_000);
    const key = await rateLimitedKey(flooder.apiKey);
    const windowFrom = new Date(Date.now() - 3_600_000).toISOString();

    // The hour's one request is served; everything after it is refused by the rate limit.
    expect((await chat(harness.server.url, key.token)).status).toBe(200);
    const started = Date.now();
    const [statuses, bystanderStatuses] = await Promise.all([
      hammer([harness.server.url, second.url], key.token, FLOOD),
      // Meanwhile another account's requests are served, on both instances, and recorded.
      (async () => {
        const seen: number[] = [];
        for (let i = 0; i < 10; i++) seen.push((await chat(i % 2 === 0 ? harness.server.url : second.url, bystander.apiKey)).status);
        return seen;
      })(),
    ]);
    const ended = Date.now();
    expect(statuses.length).toBe(FLOOD);
    expect(new Set(statuses)).toEqual(new Set([429]));
    expect(bystanderStatuses).toEqual(Array(10).fill(200));
    await settleAll();

    const records = await recordsByStatus(flooder.accountId);
    const counts = await countedByStatus(flooder.accountId);
    expect(records["200"]).toBe(1);
    const recorded = records["429"] ?? 0;
    expect(recorded).toBeGreaterThanOrEqual(PER_MINUTE);
    // Two instances, one bound: never twice it.
    expect(recorded).toBeLessThanOrEqual(PER_MINUTE * minutesSpanned(started, ended));
    expect(Object.keys(counts)).toEqual(["429"]);
    expect(recorded + counts["429"]!).toBe(FLOOD);
    // Every refusal on the database's side is one of the sample or one count, per minute too.
    const claims = await sql<{ recorded: number }[]>`select recorded from refusal_sample_minutes where account_id = ${flooder.accountId}`;
    for (const claim of claims) expect(claim.recorded).toBeLessThanOrEqual(PER_MINUTE);
    expect(await recordsByStatus(bystander.accountId)).toEqual({ "200": 10 });
    expect(await countedByStatus(bystander.accountId)).toEqual({});

    // The counted refusals are requests in every usage answer, as their records were.
    const to = new Date(Date.now() + 60_000).toISOString();
    const window = `from=${encodeURIComponent(windowFrom)}&to=${encodeURIComponent(to)}`;
    const usage = await harness.server.api("GET", `/v1/namespaces/me/usage?${window}`, { token: flooder.apiKey });
    expect(usage.body.request_count).toBe(1 + FLOOD);
    const account = await harness.server.api("GET", `/v1/usage?${window}`, { token: flooder.apiKey });
    expect(account.body.request_count).toBe(1 + FLOOD);
    const byKey = await harness.server.api("GET", `/v1/namespaces/me/usage/daily?${window}&group_by=api_key`, { token: flooder.apiKey });
    const keyRequests = byKey.body.data.filter((row: { group: string | null }) => row.group === key.id).reduce((sum: number, row: { request_count: number }) => sum + row.request_count, 0);
    expect(keyRequests).toBe(1 + FLOOD);
    const byModel = await harness.server.api("GET", `/v1/namespaces/me/usage/daily?${window}&group_by=model`, { token: flooder.apiKey });
    const modelRequests = byModel.body.data.filter((row: { group: string | null }) => row.group === MODEL).reduce((sum: number, row: { request_count: number }) => sum + row.request_count, 0);
    expect(modelRequests).toBe(1 + FLOOD);
    // The history lists the sample only.
    const history = await harness.server.api("GET", `/v1/namespaces/me/requests?limit=100&status=refused`, { token: flooder.apiKey });
    expect(history.body.data.length).toBe(recorded);

    // The console's overview: the counted refusals among the refusals, and on the key's row.
    const overview = await getPage(harness.server, flooder, "/console?days=1");
    expect(overview.status).toBe(200);
    const kinds = overview.text.slice(overview.text.indexOf('id="failure-kinds"'));
    expect(kinds).toContain(`Refused: rate limit, counted without a record</td><td data-label="Requests" class="num">${counts["429"]!.toLocaleString("en-US")}`);
    expect(kinds).toContain("Refused: rate limit</td>");
  }, 120_000);

  test("a refusal past the sample holds nothing: the same account's other key is served at once", async () => {
    const account = await harness.server.createAccount(undefined, 100_000_000);
    const key = await rateLimitedKey(account.apiKey);
    expect((await chat(harness.server.url, key.token)).status).toBe(200);
    const statuses = await hammer([harness.server.url], key.token, 4 * PER_MINUTE);
    expect(new Set(statuses)).toEqual(new Set([429]));
    // The unlimited account key of the same account is still served at once.
    expect((await chat(harness.server.url, account.apiKey)).status).toBe(200);
    await settleAll();
    const records = await recordsByStatus(account.accountId);
    expect(records["200"]).toBe(2);
    // Should the minute turn during the loop, the next minute has its own sample.
    expect(records["429"]).toBeGreaterThanOrEqual(PER_MINUTE);
    expect(records["429"]).toBeLessThanOrEqual(2 * PER_MINUTE);
    expect(records["429"]! + (await countedByStatus(account.accountId))["429"]!).toBe(4 * PER_MINUTE);
  });
});

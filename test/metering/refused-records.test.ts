import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type postgres from "postgres";
import { RefusalSampler } from "../../src/metering/refusal-sampler";
import type { Sql } from "../../src/db/connect-database";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { closeClients, database, flush } from "./metering-support";

/**
 * Requests refused before admission (docs/architecture.md "Metering", **Refused requests**): each account's
 * first REFUSED_RECORDS_PER_MINUTE a minute get a full record, the rest are counted by
 * account, day and status, so a flood of bad requests cannot grow the request table
 * without limit.
 */
const PER_MINUTE = 3;
let harness: InferenceHarness;
let sql: postgres.Sql;
beforeAll(async () => {
  harness = await startInferenceHarness({ refusedRecordsPerMinute: PER_MINUTE });
  sql = database(harness.server.databaseUrl);
});
afterAll(async () => {
  await closeClients();
  await harness.close();
});

function chat(key: string, body: unknown): Promise<Response> {
  return fetch(`${harness.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const INVALID = { model: "mock-openai/gpt-4o-mini", max_tokens: 0, messages: [{ role: "user", content: "hi" }] };

async function records(accountId: string): Promise<{ status_code: number }[]> {
  return sql<{ status_code: number }[]>`select status_code from requests where account_id = ${accountId}`;
}

async function counted(accountId: string): Promise<Record<string, number>> {
  const rows = await sql<{ status_code: number; count: number }[]>`
    select status_code, sum(count)::int as count from refused_request_counts
     where account_id = ${accountId} and minute >= date_trunc('day', now() at time zone 'utc') at time zone 'utc'
     group by status_code`;
  return Object.fromEntries(rows.map((row) => [String(row.status_code), row.count]));
}

describe("requests refused before admission", () => {
  test("a single invalid body is a 400 with a record in the history, as before", async () => {
    const account = await harness.server.createAccount(undefined, 1_000_000);
    const response = await chat(account.apiKey, INVALID);
    expect(response.status).toBe(400);
    await flush(harness);
    const history = await harness.server.api("GET", "/v1/requests", { token: account.apiKey });
    expect(history.body.data.map((record: { status: string; status_code: number }) => [record.status, record.status_code])).toEqual([["failed", 400]]);
  });

  test("a flood gets its account's first records of the minute, the rest counted by day and status; another account keeps its own sample", async () => {
    const flooder = await harness.server.createAccount(undefined, 1_000_000);
    const other = await harness.server.createAccount(undefined, 1_000_000);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => chat(flooder.apiKey, INVALID).then((r) => r.status)));
    expect(new Set(statuses)).toEqual(new Set([400]));
    // An unknown model is refused before admission too, and counted under its own status.
    const unknown = await chat(flooder.apiKey, { ...INVALID, max_tokens: 8, model: "mock-openai/no-such-model" });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.status).toBeLessThan(500);
    expect((await chat(other.apiKey, INVALID)).status).toBe(400);
    await flush(harness);
    await harness.server.server.services.refusals.flush();

    // The minute may turn during the flood: then up to twice the sample is recorded.
    const kept = await records(flooder.accountId);
    expect(kept.length).toBeGreaterThanOrEqual(PER_MINUTE);
    expect(kept.length).toBeLessThanOrEqual(2 * PER_MINUTE);
    const counts = await counted(flooder.accountId);
    const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
    expect(kept.length + total).toBe(21);
    expect(counts["400"]).toBeGreaterThanOrEqual(20 - 2 * PER_MINUTE);
    expect(await records(other.accountId)).toEqual([{ status_code: 400 }]);
    expect(await counted(other.accountId)).toEqual({});
  });

  test("a served request is recorded whatever the refusals did", async () => {
    const account = await harness.server.createAccount(undefined, 100_000_000);
    for (let i = 0; i < PER_MINUTE + 2; i++) await chat(account.apiKey, INVALID);
    const served = await chat(account.apiKey, { ...INVALID, max_tokens: 16 });
    expect(served.status).toBe(200);
    await flush(harness);
    const rows = await sql<{ n: number }[]>`select count(*)::int as n from requests where account_id = ${account.accountId} and status_code = 200`;
    expect(rows[0]!.n).toBe(1);
  });
});

describe("RefusalSampler", () => {
  const refusal = (accountId: string) => ({ accountId, statusCode: 400, namespaceId: null, apiKeyId: null, modelId: null });

  test("gives each account its sample again when the minute turns, and keeps counts a failed write could not store", async () => {
    let now = Date.UTC(2026, 10, 28, 12, 0, 30);
    // A database that answers nothing: the claims fail, so this process's own count decides.
    const failing = { unsafe: () => Promise.reject(new Error("database away")) } as unknown as Sql;
    const sampler = new RefusalSampler(failing, 2, 60_000, () => now);
    const sampleA = () => sampler.sample(refusal("acct_a"));
    expect([await sampleA(), await sampleA(), await sampleA(), await sampleA()]).toEqual([true, true, false, false]);
    expect(await sampler.sample(refusal("acct_b"))).toBe(true);
    now += 30_000;
    expect([await sampleA(), await sampleA(), await sampleA()]).toEqual([true, true, false]);
    expect(await sampler.flush()).toBe(false);
    // Put back: the next write carries all three, by minute.
    let written: unknown[][] = [];
    const working = { unsafe: (_text: string, params: unknown[][]) => ((written = params), Promise.resolve([])) } as unknown as Sql;
    Object.assign(sampler, { sql: working });
    expect(await sampler.flush()).toBe(true);
    expect(written).toEqual([
      ["acct_a", "acct_a"],
      ["2026-11-28T12:00:00.000Z", "2026-11-28T12:01:00.000Z"],
      [400, 400],
      [null, null],
      [null, null],
      [null, null],
      [2, 1],
    ]);
  });

  test("a flood of simultaneous refusals from one account asks the database at most the sample's size, not once each", async () => {
    const now = Date.UTC(2026, 10, 28, 12, 0, 30);
    let claims = 0;
    // Every claim is granted, slowly: all 200 refusals arrive while the first claims are in flight.
    const slow = { unsafe: () => (claims++, Bun.sleep(20).then(() => [{ recorded: claims }])) } as unknown as Sql;
    const sampler = new RefusalSampler(slow, 3, 60_000, () => now);
    const results = await Promise.all(Array.from({ length: 200 }, () => sampler.sample(refusal("acct_a"))));
    expect(claims).toBe(3);
    expect(results.filter(Boolean).length).toBe(3);
  });

  test("asks the database for each record of the sample, and stops asking once it says the minute's sample is full", async () => {
    const now = Date.UTC(2026, 10, 28, 12, 0, 30);
    let claims = 0;
    // Another process already took two of the three records of this minute.
    const shared = { unsafe: () => (++claims + 2 <= 3 ? Promise.resolve([{ recorded: claims + 2 }]) : Promise.resolve([])) } as unknown as Sql;
    const sampler = new RefusalSampler(shared, 3, 60_000, () => now);
    const results: boolean[] = [];
    for (let i = 0; i < 50; i++) results.push(await sampler.sample(refusal("acct_a")));
    expect(results.filter(Boolean).length).toBe(1);
    expect(claims).toBe(2);
  });
});

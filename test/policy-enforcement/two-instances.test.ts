import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { spawnServerOnMocks, startDatabaseAndMocks, stopDatabaseAndMocks } from "../support/inference-harness";
import type { MockUpstreamSet } from "../support/mock-upstreams";
import type { SpawnedServer } from "../support/spawn-server";
import type { TestDatabase } from "../support/test-database";

/**
 * Two Switchyard processes on one PostgreSQL, 2 × 200 concurrent requests at a namespace
 * with a budget, then at one with a rate limit. Budgets and rate limits hold in the
 * database only (docs/architecture.md "Budgets and rate limits across instances"): never more admitted than `max_requests` in the
 * window, never more spent than the budget, whichever instance admits. After SIGTERM the
 * counters' tables agree with the requests and the ledger, and nothing stays held.
 */
let db: TestDatabase;
let mocks: MockUpstreamSet;
let servers: SpawnedServer[] = [];
let sql: postgres.Sql;
beforeAll(async () => {
  ({ db, mocks } = await startDatabaseAndMocks());
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
});
afterAll(async () => {
  await sql.end();
  await stopDatabaseAndMocks({ db, mocks }, servers);
});

const PER_INSTANCE = 200;
const CREDIT = 1_000_000_000;
const MAX_REQUESTS = 50;

interface Account {
  account_id: string;
  namespace_id: string;
  api_key: string;
}

async function call(server: SpawnedServer, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text() };
}

async function account(server: SpawnedServer, email: string): Promise<Account> {
  const created = await call(server, "POST", "/admin/accounts", "op", { email, credit_micro_usd: CREDIT });
  return JSON.parse(created.text) as Account;
}

/** A policy bound to the account's namespace; returns its id. */
async function bindToNamespace(server: SpawnedServer, owner: Account, kind: string, spec: unknown): Promise<string> {
  const ns = `/v1/namespaces/${owner.namespace_id}`;
  const policy = JSON.parse((await call(server, "POST", `${ns}/policies`, owner.api_key, { name: `${kind} under load`, kind, spec })).text) as { id: string };
  const bound = await call(server, "POST", `${ns}/policies/${policy.id}/bind`, owner.api_key, { principal_type: "namespace", principal_id: owner.namespace_id });
  expect(bound.status).toBe(200);
  return policy.id;
}

const chat = (server: SpawnedServer, owner: Account) =>
  call(server, "POST", "/v1/chat/completions", owner.api_key, { model: "mock-openai/gpt-4o-mini", max_tokens: 64, messages: [{ role: "user", content: "hi" }] });

/** 2 × 200 at once, half on each instance; the count of each status. */
async function flood(owner: Account): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  await Promise.all(
    servers.flatMap((server) =>
      Array.from({ length: PER_INSTANCE }, async () => {
        const { status } = await chat(server, owner);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
    ),
  );
  return statuses;
}

test("two instances on one database: zero over-admission on a rate limit, zero overspend on a budget", async () => {
  // Every request is served after a moment, so hundreds are in flight at once.
  mocks.openai.setScenario({ kind: "text", usage: { prompt: 12, completion: 64 }, delayMs: 20 });
  // A pool wide enough that admissions of one key overlap in the database: with the counter
  // row's lock removed from admission_admit (now admission_admit_batch), this test over-admits
  // (54 and 55 of 50 seen).
  const env = { DATABASE_URL: db.url, ADMIN_TOKEN: "op", LOG_LEVEL: "warn", SHUTDOWN_GRACE_MS: "5000", DATABASE_POOL_SIZE: "40" };
  servers = await Promise.all([spawnServerOnMocks(mocks, env), spawnServerOnMocks(mocks, env)]);
  const [first] = servers as [SpawnedServer, SpawnedServer];

  // What one request may cost: a budget of 1 micro-USD says so in its refusal.
  const probe = await account(first, "probe@example.test");
  await bindToNamespace(first, probe, "budget", { window: "total", limit_micro_usd: 1 });
  const refused = await chat(first, probe);
  expect(refused.status).toBe(402);
  const ceiling = Number(/may cost up to (\d+) micro-USD/.exec(refused.text)?.[1]);
  expect(ceiling).toBeGreaterThan(0);

  // A budget of 40 ceilings: fewer than 400 requests fit, however they are spread.
  const limit = 40 * ceiling;
  const budgeted = await account(first, "budgeted@example.test");
  const budgetId = await bindToNamespace(first, budgeted, "budget", { window: "day", limit_micro_usd: limit });
  const budgetStatuses = await flood(budgeted);
  expect([...budgetStatuses.keys()].sort()).toEqual([200, 402]);

  const limited = await account(first, "limited@example.test");
  const rateId = await bindToNamespace(first, limited, "rate_limit", { window_secs: 3600, max_requests: MAX_REQUESTS });
  const rateStatuses = await flood(limited);
  // Exactly the limit: none over, and none refused while the window had room.
  expect(rateStatuses.get(200)).toBe(MAX_REQUESTS);
  expect(rateStatuses.get(429)).toBe(2 * PER_INSTANCE - MAX_REQUESTS);

  for (const server of servers) server.process.kill("SIGTERM");
  expect(await Promise.all(servers.map((server) => server.exited))).toEqual([0, 0]);
  for (const server of servers) expect(server.output()).not.toMatch(/"level":"(warn|error)"/);

  // The budget: what its requests were charged is within the limit, and is what the
  // counter says was spent and what the ledger debited; nothing is held any more.
  const [charges] = await sql<{ served: number; charged: string }[]>`
    select count(*) filter (where status = 'succeeded')::int as served, coalesce(sum(final_charge_micro_usd), 0)::text as charged
      from requests where account_id = ${budgeted.account_id}`;
  expect(charges!.served).toBe(budgetStatuses.get(200)!);
  const charged = Number(charges!.charged);
  expect(charged).toBeGreaterThan(0);
  expect(charged).toBeLessThanOrEqual(limit);
  const [counter] = await sql<{ spent: string; reserved: string }[]>`
    select spent_micro_usd::text as spent, reserved_micro_usd::text as reserved from admission_counters where counter_key like ${`${budgetId}/budget/%`}`;
  expect({ spent: Number(counter!.spent), reserved: Number(counter!.reserved) }).toEqual({ spent: charged, reserved: 0 });
  const [ledger] = await sql<{ debited: string }[]>`
    select coalesce(-sum(amount_micro_usd), 0)::text as debited from ledger_entries where account_id = ${budgeted.account_id} and kind = 'usage'`;
  expect(Number(ledger!.debited)).toBe(charged);
  const [held] = await sql<{ n: number }[]>`select count(*)::int as n from admission_holds`;
  expect(held!.n).toBe(0);

  // The rate limit: one stored admission per request served, on either instance.
  const [admissions] = await sql<{ n: number }[]>`select count(*)::int as n from rate_limit_admissions where counter_key like ${`${rateId}/rate_limit/%`}`;
  expect(admissions!.n).toBe(MAX_REQUESTS);
  const [served] = await sql<{ n: number }[]>`select count(*)::int as n from requests where account_id = ${limited.account_id} and status = 'succeeded'`;
  expect(served!.n).toBe(MAX_REQUESTS);
}, 120_000);

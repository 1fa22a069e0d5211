import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { spawnServerOnMocks, startDatabaseAndMocks, stopDatabaseAndMocks } from "../support/inference-harness";
import type { MockUpstreamSet } from "../support/mock-upstreams";
import type { SpawnedServer } from "../support/spawn-server";
import type { TestDatabase } from "../support/test-database";

/**
 * Two Switchyard processes on one PostgreSQL share one small wallet under 2 × 200
 * concurrent requests of three kinds: eight tool definitions (~2 KB) on chat, a streamed
 * Messages request served by Gemini (cross-protocol, with a system block), and plain
 * small ones on Responses. The mocks bill what such requests really cost: the tool
 * definitions and system block as prompt tokens the old 4-characters estimate ignored,
 * and every output token the request allowed.
 *
 * No overspend: the balance never goes negative, equals its ledger, nothing stays
 * reserved or leased, and no charge was capped (each was within its reservation).
 * No starvation: once the requests are answered, nothing stays reserved (no lease keeps
 * unspent money from the other instance), and requests keep being admitted on both
 * instances until what is left cannot cover one more.
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

const START_MICRO_USD = 2_000;
const PER_INSTANCE = 200;

/** Eight tool definitions, about 2 KB of JSON. */
const TOOLS = Array.from({ length: 8 }, (_, i) => ({
  type: "function",
  function: {
    name: `lookup_record_${i}`,
    description: `Looks up record kind ${i} in the inventory by its identifier and returns its fields.`,
    parameters: {
      type: "object",
      properties: { id: { type: "string", description: "The record identifier, e.g. R-1234." }, fields: { type: "array", items: { type: "string" } } },
      required: ["id"],
    },
  },
}));
const SYSTEM = "You are a terse assistant for a warehouse team. ".repeat(10);

type Kind = "tools" | "streamed" | "plain";
const KINDS: Kind[] = ["tools", "streamed", "plain"];

function requestOf(kind: Kind, baseUrl: string, key: string): Request {
  const json = { "content-type": "application/json" };
  switch (kind) {
    case "tools":
      return new Request(`${baseUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { ...json, authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", max_tokens: 64, tools: TOOLS, messages: [{ role: "user", content: "Find record R-1234." }] }),
      });
    case "streamed":
      return new Request(`${baseUrl}/v1/messages`, {
        method: "POST",
        headers: { ...json, "x-api-key": key, "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: "mock-google/gemini-2.5-flash", max_tokens: 128, stream: true, system: SYSTEM, messages: [{ role: "user", content: "Summarise today." }] }),
      });
    case "plain":
      return new Request(`${baseUrl}/v1/responses`, {
        method: "POST",
        headers: { ...json, authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "mock-responses/gpt-5-mini", max_output_tokens: 16, input: "hi" }),
      });
  }
}

/** What the 402 says the request could cost. */
function ceilingIn(text: string): number {
  const match = /can cost up to (\d+) micro-USD/.exec(text);
  if (!match) throw new Error(`402 without a ceiling: ${text}`);
  return Number(match[1]);
}

async function books(accountId: string) {
  const [row] = await sql<{ balance: string; reserved: string; ledger: string; leased: string }[]>`
    select w.balance_micro_usd::text as balance, w.reserved_micro_usd::text as reserved,
           (select coalesce(sum(amount_micro_usd), 0)::text from ledger_entries l where l.account_id = w.account_id) as ledger,
           (select coalesce(sum(amount_micro_usd), 0)::text from wallet_leases l where l.account_id = w.account_id) as leased
      from wallets w where w.account_id = ${accountId}`;
  return { balance: Number(row!.balance), reserved: Number(row!.reserved), ledger: Number(row!.ledger), leased: Number(row!.leased) };
}

/** Waits until no instance holds a reservation for the account (settled, flushed, unspent rest returned). */
async function nothingReserved(accountId: string, timeoutMs = 10_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const now = await books(accountId);
    if (now.reserved === 0 && now.leased === 0) return true;
    await Bun.sleep(20);
  }
  return false;
}

test("two instances on one small wallet: zero overspend, and no refusal while the balance not reserved in flight fits the request", async () => {
  // What such requests bill: the tool definitions and the system block are prompt tokens.
  mocks.openai.setScenario({ kind: "text", usage: { prompt: 700, completion: 64 }, delayMs: 15 });
  mocks.google.setScenario({ kind: "text", usage: { prompt: 200, completion: 128 }, chunkDelayMs: 2 });
  mocks.responses.setScenario({ kind: "text", usage: { prompt: 12, completion: 16 }, delayMs: 5 });
  const env = { DATABASE_URL: db.url, ADMIN_TOKEN: "op", LOG_LEVEL: "warn", SHUTDOWN_GRACE_MS: "5000" };
  servers = await Promise.all([spawnServerOnMocks(mocks, env), spawnServerOnMocks(mocks, env)]);
  const created = (await fetch(`${servers[0]!.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: "Bearer op", "content-type": "application/json" },
    body: JSON.stringify({ email: "low-balance@example.test", credit_micro_usd: START_MICRO_USD }),
  }).then((r) => r.json())) as { account_id: string; api_key: string };
  const accountId = created.account_id;

  const statuses = new Map<string, number>();
  const ceilings = new Map<Kind, number>();
  const send = async (kind: Kind, server: SpawnedServer): Promise<number> => {
    const response = await fetch(requestOf(kind, server.url, created.api_key));
    const text = await response.text();
    if (response.status === 402) ceilings.set(kind, ceilingIn(text));
    statuses.set(`${kind} ${response.status}`, (statuses.get(`${kind} ${response.status}`) ?? 0) + 1);
    return response.status;
  };

  // One of each kind first, one at a time, so that each kind is served at least once
  // whatever order the burst below is admitted in: on a busy machine the burst alone
  // could spend the wallet on two kinds before the third one's first request arrives.
  for (const [i, kind] of KINDS.entries()) expect(await send(kind, servers[i % 2]!)).toBe(200);
  // Then 2 × 200 at once, the three kinds interleaved on both instances.
  await Promise.all(servers.flatMap((server) => Array.from({ length: PER_INSTANCE }, (_, i) => send(KINDS[i % 3]!, server))));
  for (const key of statuses.keys()) expect(key).toMatch(/ (200|402)$/);
  for (const kind of KINDS) {
    expect(statuses.get(`${kind} 200`) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(`${kind} 402`) ?? 0).toBeGreaterThan(0);
  }

  // Answered means settled: no lease keeps what its requests did not spend.
  expect(await nothingReserved(accountId)).toBe(true);

  // Then plain requests on both instances at once, round after round with nothing in
  // flight between rounds, until both are refused: the balance left must be below what
  // one of them can cost, i.e. every earlier admission was used down to the last request.
  for (let round = 0; round < 200; round++) {
    const [a, b] = await Promise.all(servers.map((server) => send("plain", server)));
    expect(await nothingReserved(accountId)).toBe(true);
    if (a === 402 && b === 402) break;
  }
  const plainCeiling = ceilings.get("plain")!;
  const left = (await books(accountId)).balance;
  expect(left).toBeGreaterThanOrEqual(0);
  expect(left).toBeLessThan(plainCeiling);

  for (const server of servers) server.process.kill("SIGTERM");
  expect(await Promise.all(servers.map((server) => server.exited))).toEqual([0, 0]);
  // Among others, a charge above its reservation would have logged a warning.
  for (const server of servers) expect(server.output()).not.toMatch(/"level":"(warn|error)"/);

  const after = await books(accountId);
  expect(after.balance).toBeGreaterThanOrEqual(0);
  expect(after).toEqual({ balance: after.ledger, reserved: 0, leased: 0, ledger: after.ledger });
  const [capped] = await sql<{ n: number }[]>`select count(*)::int as n from requests where account_id = ${accountId} and warnings::text like '%charge_capped%'`;
  expect(capped!.n).toBe(0);
  // Spent down to below one plain request's ceiling, and never more than the credit.
  expect(START_MICRO_USD - after.balance).toBeGreaterThan(START_MICRO_USD - plainCeiling);
  expect(START_MICRO_USD - after.balance).toBeLessThanOrEqual(START_MICRO_USD);
}, 60_000);

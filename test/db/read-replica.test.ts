import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { startDedicatedPostgres, startStandby, type DedicatedPostgres } from "../support/dedicated-postgres";
import { MOCK_KEY, spawnServerOnMocks } from "../support/inference-harness";
import { startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import type { SpawnedServer } from "../support/spawn-server";

/**
 * A read replica, for real (docs/operations.md "A read replica"). A primary of the test's
 * own, a hot standby streaming from it (`pg_basebackup -R`), and `bun src/main.ts` with
 * DATABASE_URL on the primary and DATABASE_READ_URL on the standby. The standby's replay is
 * paused to stand for lag: the history and usage, read there, miss the newest request
 * while its settlement receipt, read on the primary, has it at once; resumed, the history
 * catches up. Everything that writes goes to the primary: the whole inference path works
 * with the read URL set, and the standby refuses a write anyway.
 */
const pgBasebackup = process.env.TEST_PG_BIN ? join(process.env.TEST_PG_BIN, "pg_basebackup") : undefined;
const available = pgBasebackup !== undefined && existsSync(pgBasebackup);
if (!available) console.warn(`read-replica test skipped: pg_basebackup not found in TEST_PG_BIN (${process.env.TEST_PG_BIN ?? "unset"}); install Debian's postgresql package`);

let primary: DedicatedPostgres | undefined;
let standby: DedicatedPostgres | undefined;
let mocks: MockUpstreamSet | undefined;
let server: SpawnedServer | undefined;
let onStandby: postgres.Sql | undefined;
let onPrimary: postgres.Sql | undefined;

interface Account {
  account_id: string;
  namespace_id: string;
  api_key: string;
}

beforeAll(async () => {
  if (!available) return;
  primary = await startDedicatedPostgres({ replication: true });
  standby = await startStandby(primary);
  onPrimary = postgres(primary.url, { max: 1, onnotice: () => {} });
  onStandby = postgres(standby.url, { max: 1, onnotice: () => {} });
  mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
  // A read statement timeout far longer than any wait below: the conflict test's read waits
  // on the standby's replay, and on a loaded machine the default 5 s could stop it first
  // (a 503 of its own, without Retry-After) before the conflict does.
  server = await spawnServerOnMocks(mocks, { DATABASE_URL: primary.url, DATABASE_READ_URL: standby.url, ADMIN_TOKEN: "op", LOG_LEVEL: "warn", READ_STATEMENT_TIMEOUT_MS: "60000" });
}, 90_000);

afterAll(async () => {
  // Replay resumed before the standby stops, whatever an assertion left it at.
  if (onStandby) await onStandby`select pg_wal_replay_resume()`.catch(() => {});
  server?.process.kill("SIGTERM");
  await server?.exited;
  await mocks?.close();
  await onStandby?.end();
  await onPrimary?.end();
  standby?.destroy();
  primary?.destroy();
});

const get = (path: string, key: string) => fetch(`${server!.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

async function json<T>(response: Promise<Response>): Promise<T> {
  const answer = await response;
  const text = await answer.text();
  if (answer.status !== 200) throw new Error(`${answer.url}: ${answer.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

async function createAccount(): Promise<Account> {
  const response = fetch(`${server!.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: "Bearer op", "content-type": "application/json" },
    body: JSON.stringify({ email: "replica@example.test", credit_micro_usd: 1_000_000_000 }),
  });
  return json<Account>(response);
}

/** One served chat request; its x-request-id. */
async function chat(key: string, model: string): Promise<string> {
  const response = await fetch(`${server!.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: "user", content: "Say hello" }] }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`chat: ${response.status} ${text.slice(0, 300)}`);
  return response.headers.get("x-request-id")!;
}

const historyIds = async (key: string) =>
  (await json<{ data: Array<{ request_id: string }> }>(get("/v1/requests?limit=20", key))).data.map((record) => record.request_id);
const usageCount = async (key: string) => (await json<{ request_count: number }>(get("/v1/namespaces/me/usage", key))).request_count;
const dailyCount = async (key: string) =>
  (await json<{ data: Array<{ request_count: number }> }>(get("/v1/namespaces/me/usage/daily?group_by=model", key))).data.reduce((sum, day) => sum + day.request_count, 0);
const accountCount = async (key: string) => (await json<{ request_count: number }>(get("/v1/usage", key))).request_count;
const settlementState = async (key: string, requestId: string) => {
  const response = await get(`/v1/requests/${requestId}/settlement`, key);
  return response.status === 200 ? ((await response.json()) as { state: string }).state : `status ${response.status}`;
};

/** Polls `check` every 50 ms until it holds, for at most `ms`; how long it took. */
async function waitFor(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(50);
  }
  return performance.now() - started;
}

/** Client backends on a cluster by application_name (this test's own connection left out). */
async function backends(sql: postgres.Sql): Promise<Record<string, number>> {
  const rows = await sql<Array<{ name: string; count: number }>>`
    select application_name as name, count(*)::int as count from pg_stat_activity
    where backend_type = 'client backend' and pid <> pg_backend_pid() group by application_name`;
  return Object.fromEntries(rows.map((row) => [row.name, row.count]));
}

test.skipIf(!available)("history, usage and public figures are read on the standby; a second of lag hides the newest record from them but not from the settlement receipt; nothing writes to the standby", async () => {
  const started = performance.now();
  expect((await onStandby!`select pg_is_in_recovery() as standby`)[0]!.standby).toBe(true);
  const account = await createAccount();
  const key = account.api_key;
  const catalog = await json<{ data: Array<{ id: string }> }>(fetch(`${server!.url}/v1/models`));
  const model = catalog.data.map((entry) => entry.id).find((id) => id.startsWith("mock-openai/") && !id.includes("@"))!;

  // The whole inference path (credentials, admission, wallet, settlement, metering writes)
  // works with the read URL set, and the record reaches the standby by streaming.
  const first = await chat(key, model);
  await waitFor("the first record in the standby-backed history", async () => (await historyIds(key)).includes(first));
  expect(await settlementState(key, first)).toBe("computed");
  expect(await usageCount(key)).toBe(1);
  expect(await dailyCount(key)).toBe(1);
  expect(await accountCount(key)).toBe(1);
  expect((await fetch(`${server!.url}/v1/stats/usage?days=1`)).status).toBe(200);

  // (a) The reads ran on the standby: the read pool's connections are there and only there,
  // and nothing else of the server's connects to the standby.
  const standbyBackends = await backends(onStandby!);
  const primaryBackends = await backends(onPrimary!);
  expect(standbyBackends["switchyard-read"] ?? 0).toBeGreaterThan(0);
  expect(Object.keys(standbyBackends)).toEqual(["switchyard-read"]);
  expect(primaryBackends["switchyard-read"]).toBeUndefined();
  expect(Object.values(primaryBackends).reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);

  // (b) Lag: replay paused, a new request is served, settled and written on the primary.
  await onStandby!`select pg_wal_replay_pause()`;
  await waitFor("replay paused", async () => (await onStandby!`select pg_get_wal_replay_pause_state() as state`)[0]!.state === "paused");
  const second = await chat(key, model);
  const receiptMs = await waitFor("the second request's receipt on the primary", async () => (await settlementState(key, second)) === "computed", 5_000);
  expect((await onPrimary!`select count(*)::int as n from requests where request_id = ${second}`)[0]!.n).toBe(1);
  // A second of lag later, the standby's reads still show the world before it.
  await Bun.sleep(1_000);
  expect(await historyIds(key)).not.toContain(second);
  expect(await historyIds(key)).toContain(first);
  expect(await usageCount(key)).toBe(1);
  expect(await dailyCount(key)).toBe(1);
  expect(await accountCount(key)).toBe(1);
  // The receipt does not lag: it is read on the primary.
  expect(await settlementState(key, second)).toBe("computed");

  // Resumed, the standby replays what it missed and the history catches up.
  await onStandby!`select pg_wal_replay_resume()`;
  const catchUpMs = await waitFor("the second record in the history after replay resumed", async () => (await historyIds(key)).includes(second), 10_000);
  expect(await usageCount(key)).toBe(2);
  expect(await dailyCount(key)).toBe(2);
  expect(await accountCount(key)).toBe(2);

  // (c) The standby refuses writes (SQLSTATE 25006, read-only transaction); the server
  // never sent it one: its log shows no such refusal, and every write above succeeded.
  const refused = await onStandby!`insert into requests (id) values ('rq_never')`.then(
    () => undefined,
    (error: { code?: string }) => error.code,
  );
  expect(refused).toBe("25006");
  expect(server!.output()).not.toContain("read-only transaction");
  expect(server!.output()).not.toContain("25006");

  console.log(`read replica: ${JSON.stringify({ receipt_while_paused_ms: Math.round(receiptMs), history_catch_up_ms: Math.round(catchUpMs), standby_backends: standbyBackends, primary_backends: primaryBackends, test_ms: Math.round(performance.now() - started) })}`);
}, 60_000);

test.skipIf(!available)("a read the standby cancels for its conflict with recovery (SQLSTATE 40001) is a 503 with Retry-After, not a 500", async () => {
  const started = performance.now();
  const response = await fetch(`${server!.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: "Bearer op", "content-type": "application/json" },
    body: JSON.stringify({ email: "replica-conflict@example.test", credit_micro_usd: 1_000_000 }),
  });
  const key = ((await response.json()) as Account).api_key;
  // The standby cancels a conflicting read at once instead of delaying replay up to 30 s.
  await onStandby!.unsafe("alter system set max_standby_streaming_delay = 0");
  await onStandby!`select pg_reload_conf()`;
  const locker = postgres(primary!.url, { max: 2, onnotice: () => {} });
  const [last, first] = await Promise.all([locker.reserve(), locker.reserve()]);
  try {
    // A migration's `lock table … in access exclusive mode` on the primary, as replay brings
    // it: the namespace usage statement reads request_capability_hours last, and the standby's
    // replay holds that table until the primary's transaction ends, so the read waits there,
    // in flight, holding its lock on request_usage_days, which it read before.
    await last`begin`;
    await last`lock table request_capability_hours in access exclusive mode`;
    await waitFor("the primary's lock replayed on the standby", async () =>
      (await onStandby!`select count(*)::int as n from pg_locks where relation = 'request_capability_hours'::regclass and mode = 'AccessExclusiveLock'`)[0]!.n === 1);
    const usage = get("/v1/namespaces/me/usage", key);
    await waitFor("the read waiting on the standby", async () =>
      (await onStandby!`select count(*)::int as n from pg_stat_activity where application_name = 'switchyard-read' and wait_event_type = 'Lock'`)[0]!.n === 1);
    // Replay now needs request_usage_days, which the waiting read holds: the standby cancels it.
    await first`begin`;
    await first`lock table request_usage_days in access exclusive mode`;
    const answer = await usage;
    const body = (await answer.json()) as { error: string; error_description: string };
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("1");
    expect(body.error).toBe("service_unavailable");
    expect(body.error_description).toContain("conflict with recovery");
    expect(server!.output()).toContain("read cancelled by the replica's conflict with recovery");
    expect(server!.output()).not.toContain("unhandled error");
  } finally {
    await first`rollback`.catch(() => {});
    await last`rollback`.catch(() => {});
    first.release();
    last.release();
    await locker.end();
    await onStandby!.unsafe("alter system reset max_standby_streaming_delay");
    await onStandby!`select pg_reload_conf()`;
  }
  // Once replay has moved on, the same read is answered.
  await waitFor("the usage answered again", async () => (await get("/v1/namespaces/me/usage", key)).status === 200);
  console.log(`replica conflict: ${JSON.stringify({ test_ms: Math.round(performance.now() - started) })}`);
}, 30_000);

test("a read URL without DATABASE_URL stops the start with a clear error instead of reading the embedded database", async () => {
  const child = Bun.spawn([process.execPath, "src/main.ts"], {
    env: { ...process.env, DATABASE_URL: "", DATABASE_READ_URL: "postgres://postgres@127.0.0.1:1/postgres", PORT: "0" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  expect(code).toBe(1);
  expect(stderr).toContain("switchyard: cannot start: DATABASE_READ_URL is set but DATABASE_URL is not");
}, 30_000);

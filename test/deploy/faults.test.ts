import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startDedicatedPostgres, type DedicatedPostgres } from "../support/dedicated-postgres";
import { startHaproxy, type RunningHaproxy } from "../support/haproxy";
import { MOCK_KEY, spawnServerOnMocks } from "../support/inference-harness";
import { startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import type { SpawnedServer } from "../support/spawn-server";
import { createTestDatabase } from "../support/test-database";

/**
 * Faults with two instances behind HAProxy (docs/operations.md "Faults"): PostgreSQL stopped and
 * started under load, one instance killed with SIGKILL under load, upstreams that hang.
 * Each scenario runs a few seconds of load and prints its tally; the assertions are the
 * bookkeeping (no record lost, none twice, the wallet's spend equals the records' charges,
 * nothing left reserved) and the shape of every failure a client saw.
 */
let mocks: MockUpstreamSet;
const started: SpawnedServer[] = [];
beforeAll(async () => {
  mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
  // Each answer takes a moment, so requests are in flight when the fault strikes.
  for (const mock of [mocks.openai, mocks.anthropic]) mock.setScenario({ kind: "text", usage: { prompt: 12, completion: 8 }, delayMs: 20 });
});
afterAll(async () => {
  for (const server of started) if (server.process.exitCode === null && server.process.signalCode === null) server.process.kill("SIGKILL");
  await mocks.close();
});

const CREDIT = 1_000_000_000;
const CLIENTS = 6;
type Client = "openai" | "anthropic";

async function spawnInstance(env: Record<string, string>): Promise<SpawnedServer> {
  const server = await spawnServerOnMocks(mocks, { ADMIN_TOKEN: "op", LOG_LEVEL: "warn", SHUTDOWN_DELAY_MS: "500", SHUTDOWN_GRACE_MS: "10000", ...env });
  started.push(server);
  return server;
}

/** Two instances on `databaseUrl` behind HAProxy (checks on /ready every 200 ms), both up. */
async function twoInstances(env: Record<string, string>): Promise<{ instances: SpawnedServer[]; balancer: RunningHaproxy }> {
  const instances = await Promise.all([spawnInstance(env), spawnInstance(env)]);
  const balancer = await startHaproxy(instances.map((instance) => Number(new URL(instance.url).port)), { checkIntervalMs: 200, fall: 2, rise: 2 });
  await balancer.waitFor("s1", "UP");
  await balancer.waitFor("s2", "UP");
  return { instances, balancer };
}

async function createAccount(baseUrl: string, email: string): Promise<{ account_id: string; namespace_id: string; api_key: string }> {
  const response = await fetch(`${baseUrl}/admin/accounts`, {
    method: "POST",
    headers: { authorization: "Bearer op", "content-type": "application/json" },
    body: JSON.stringify({ email, credit_micro_usd: CREDIT }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { account_id: string; namespace_id: string; api_key: string };
}

let sequence = 0;
/** One inference request in `client`'s protocol with a request id of its own. */
function infer(baseUrl: string, apiKey: string, client: Client, model?: string, signal?: AbortSignal): Promise<Response> {
  const requestId = `fault-${process.pid}-${++sequence}`;
  const openai = client === "openai";
  return fetch(`${baseUrl}${openai ? "/v1/chat/completions" : "/v1/messages"}`, {
    method: "POST",
    headers: openai
      ? { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "x-request-id": requestId }
      : { "x-api-key": apiKey, "anthropic-version": "2023-06-01", "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: model ?? (openai ? "mock-openai/gpt-4o-mini" : "mock-anthropic/claude-sonnet-4-5"), max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
    signal,
  });
}

/**
 * What a 503 is: the instance's, in the client's protocol, or the balancer's own
 * (deploy/haproxy-503.http, no instance ready), which must parse as the client's error shape too.
 */
function classify503(client: Client, body: string): "protocol" | "balancer" | "other" {
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "other";
  }
  const shaped =
    client === "openai"
      ? typeof parsed?.error?.message === "string" && typeof parsed.error.type === "string"
      : parsed?.type === "error" && typeof parsed.error?.type === "string" && typeof parsed.error.message === "string";
  if (!shaped) return "other";
  return /no Switchyard instance is ready/.test(parsed.error.message) ? "balancer" : "protocol";
}

interface Tally {
  sent: number;
  ok: number;
  /** 503 in the client's protocol, from an instance. */
  protocol503: number;
  /** HAProxy's own 503: it had no instance marked ready. */
  balancer503: number;
  /** Anything else: another status, a 503 of the wrong shape, a refused or reset connection. */
  other: string[];
  /** The request ids answered 200. */
  okIds: string[];
}

/** `CLIENTS` clients, half OpenAI and half Anthropic, sending one request after another until `stop()`. */
function load(baseUrl: string, apiKey: string): { tally: Tally; stop(): Promise<Tally> } {
  const tally: Tally = { sent: 0, ok: 0, protocol503: 0, balancer503: 0, other: [], okIds: [] };
  let running = true;
  const client = async (kind: Client) => {
    while (running) {
      tally.sent++;
      try {
        const response = await infer(baseUrl, apiKey, kind);
        const body = await response.text();
        if (response.status === 200) {
          tally.ok++;
          tally.okIds.push(response.headers.get("x-request-id")!);
        } else if (response.status === 503 && classify503(kind, body) === "protocol") tally.protocol503++;
        else if (response.status === 503 && classify503(kind, body) === "balancer") tally.balancer503++;
        else tally.other.push(`${kind} ${response.status} ${body.slice(0, 200)}`);
        // A client backs off after a failure, as the SDKs do, rather than spinning on it.
        if (response.status !== 200) await Bun.sleep(50);
      } catch (error) {
        tally.other.push(`${kind} ${String(error)}`);
        await Bun.sleep(50);
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, index) => client(index % 2 === 0 ? "openai" : "anthropic"));
  return {
    tally,
    async stop() {
      running = false;
      await Promise.all(clients);
      return tally;
    },
  };
}

interface Books {
  balance: number;
  reserved: number;
  leased: number;
  /** Sum of the ledger's entries (credits and usage): equals the balance when the books hold. */
  ledger: number;
  records: number;
  /** Sum of the records' final charges. */
  charged: number;
  /** Request ids with more than one record. */
  twice: number;
}

async function books(sql: postgres.Sql, accountId: string): Promise<Books> {
  const [row] = await sql<{ [key: string]: string }[]>`
    select w.balance_micro_usd::text as balance, w.reserved_micro_usd::text as reserved,
           (select coalesce(sum(amount_micro_usd), 0)::text from wallet_leases l where l.account_id = w.account_id) as leased,
           (select coalesce(sum(amount_micro_usd), 0)::text from ledger_entries l where l.account_id = w.account_id) as ledger,
           (select count(*)::text from requests r where r.account_id = w.account_id) as records,
           (select coalesce(sum(final_charge_micro_usd), 0)::text from requests r where r.account_id = w.account_id) as charged,
           (select count(*)::text from (select request_id from requests r where r.account_id = w.account_id group by request_id having count(*) > 1) d) as twice
      from wallets w where w.account_id = ${accountId}`;
  return Object.fromEntries(Object.entries(row!).map(([key, value]) => [key, Number(value)])) as unknown as Books;
}

/** The books hold: no request recorded twice, spend equals the records' charges, the balance its ledger, nothing left reserved or leased. */
function expectBooksBalanced(ledger: Books): void {
  expect(ledger.twice).toBe(0);
  expect(CREDIT - ledger.balance).toBe(ledger.charged);
  expect(ledger.balance).toBe(ledger.ledger);
  expect({ reserved: ledger.reserved, leased: ledger.leased }).toEqual({ reserved: 0, leased: 0 });
}

/** Two instances on `databaseUrl` behind HAProxy and a connection to that database for `run`; the balancer and the connection end with it. */
async function onTwoInstances(
  databaseUrl: string,
  env: Record<string, string>,
  run: (setup: { instances: SpawnedServer[]; balancer: RunningHaproxy; sql: postgres.Sql }) => Promise<void>,
): Promise<void> {
  const { instances, balancer } = await twoInstances({ DATABASE_URL: databaseUrl, ...env });
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await run({ instances, balancer, sql });
  } finally {
    await balancer.stop();
    await sql.end();
  }
}

/** A database of the runner's cluster for the tests of one describe block. */
function ownDatabase(): { url(): string } {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());
  return { url: () => db.url };
}

async function recordedIds(sql: postgres.Sql, accountId: string): Promise<Set<string>> {
  const rows = await sql<{ request_id: string }[]>`select request_id from requests where account_id = ${accountId}`;
  return new Set(rows.map((row) => row.request_id));
}

async function stopAll(instances: SpawnedServer[]): Promise<void> {
  for (const instance of instances) if (instance.process.exitCode === null && instance.process.signalCode === null) instance.process.kill("SIGTERM");
  for (const instance of instances) await instance.exited;
}

describe("PostgreSQL stopped and started under load", () => {
  let pg: DedicatedPostgres;
  beforeAll(async () => {
    pg = await startDedicatedPostgres();
  });
  afterAll(() => pg.destroy());

  test("no 200 without its one record, spend equals the records' charges, every failure a clean 503", async () => {
    await onTwoInstances(pg.url, {}, async ({ instances, balancer, sql }) => {
      const account = await createAccount(balancer.url, "pg-restart@example.test");
      const running = load(balancer.url, account.api_key);
      await Bun.sleep(1_000);

      pg.stop();
      const stoppedAt = Date.now();
      const outageStart = running.tally.sent;
      // During the outage each instance answers for itself, bypassing the balancer that has marked it down.
      const direct: Record<Client, Map<string, number>> = { openai: new Map(), anthropic: new Map() };
      const directOk: string[] = [];
      let slowestDirectMs = 0;
      const probe = async (instance: SpawnedServer, client: Client) => {
        const sentAt = Date.now();
        const response = await infer(instance.url, account.api_key, client);
        const body = await response.text();
        slowestDirectMs = Math.max(slowestDirectMs, Date.now() - sentAt);
        if (response.status === 200) directOk.push(response.headers.get("x-request-id")!);
        const outcome = response.status === 200 ? "200" : response.status === 503 ? `503 ${classify503(client, body)}` : `${response.status} ${body.slice(0, 200)}`;
        direct[client].set(outcome, (direct[client].get(outcome) ?? 0) + 1);
      };
      const until = Date.now() + 2_000;
      const probing = (async () => {
        while (Date.now() < until) {
          await Promise.all(instances.flatMap((instance) => [probe(instance, "openai"), probe(instance, "anthropic")]));
          await Bun.sleep(100);
        }
      })();
      await Bun.sleep(2_000);
      const outageMs = Date.now() - stoppedAt;
      const duringOutage = running.tally.sent - outageStart;
      pg.start();
      const restarted = Date.now();
      await balancer.waitFor("s1", "UP", 30_000);
      await balancer.waitFor("s2", "UP", 30_000);
      const backInMs = Date.now() - restarted;
      await probing;
      await Bun.sleep(1_000);
      const tally = await running.stop();
      // SIGTERM drains: the write buffers flush what they hold before the processes exit.
      const stopping = Date.now();
      await stopAll(instances);
      const stopMs = Date.now() - stopping;

      const recorded = await recordedIds(sql, account.account_id);
      // Served from the leases an instance already held, a direct request is answered 200 and must be recorded too.
      const lost = [...tally.okIds, ...directOk].filter((id) => !recorded.has(id));
      const ledger = await books(sql, account.account_id);
      console.log(
        `PostgreSQL stopped for ${outageMs} ms under load through HAProxy: sent ${tally.sent} (${duringOutage} during the outage), 200 ${tally.ok}, ` +
          `503 in the protocol's shape ${tally.protocol503}, HAProxy's 503 (no instance ready) ${tally.balancer503}, other ${tally.other.length}; ` +
          `lost ${lost.length}, records ${ledger.records}, recorded twice ${ledger.twice}; spend ${CREDIT - ledger.balance} vs sum of charges ${ledger.charged}; ` +
          `reserved ${ledger.reserved}, leased ${ledger.leased}; both instances ready again ${backInMs} ms after the restart, stopped in ${stopMs} ms; directly to the instances during the outage: ` +
          `OpenAI ${JSON.stringify(Object.fromEntries(direct.openai))}, Anthropic ${JSON.stringify(Object.fromEntries(direct.anthropic))}, slowest answer ${slowestDirectMs} ms`,
      );
      expect(tally.other).toEqual([]);
      expect(tally.ok).toBeGreaterThan(50);
      expect(lost).toEqual([]);
      // Every record is a 200 the client saw, or a request failed cleanly (its record says so, at no charge).
      expect(ledger.records).toBeGreaterThanOrEqual(tally.ok + directOk.length);
      expectBooksBalanced(ledger);
      // Straight to an instance, a request during the outage is served or refused in its protocol's shape.
      for (const client of ["openai", "anthropic"] as const) {
        for (const outcome of direct[client].keys()) expect(["200", "503 protocol"]).toContain(outcome);
      }
    });
  }, 90_000);
});

describe("one instance killed with SIGKILL under load", () => {
  const db = ownDatabase();

  test("the other keeps serving; what is lost is the killed one's unflushed records; its wallet lease is swept and the books balance", async () => {
    // Short lease TTL and tick, so the dead instance's lease is swept within the test (30 s and 5 s by default).
    await onTwoInstances(db.url(), { ADMISSION_LEASE_TTL_SECS: "2", ADMISSION_TICK_MS: "250" }, async ({ instances, balancer, sql }) => {
      const account = await createAccount(balancer.url, "sigkill@example.test");
      // A budget on the namespace: every request also holds its cost ceiling on the budget's counter while it runs.
      const ns = `${balancer.url}/v1/namespaces/${account.namespace_id}`;
      const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
      const budget = (await (await fetch(`${ns}/policies`, { method: "POST", headers, body: JSON.stringify({ name: "roomy", kind: "budget", spec: { window: "total", limit_micro_usd: CREDIT } }) })).json()) as { id: string };
      const bound = await fetch(`${ns}/policies/${budget.id}/bind`, { method: "POST", headers, body: JSON.stringify({ principal_type: "namespace", principal_id: account.namespace_id }) });
      expect(bound.status).toBe(200);
      const running = load(balancer.url, account.api_key);
      await Bun.sleep(1_000);
      const [{ leasesBefore }] = (await sql<{ leasesBefore: number }[]>`select count(*)::int as "leasesBefore" from wallet_leases where account_id = ${account.account_id}`) as unknown as [{ leasesBefore: number }];
      // Holds live only while their requests run: look a few times for a moment with some.
      let holdsBefore = 0;
      for (let look = 0; look < 20 && holdsBefore === 0; look++) {
        [{ holdsBefore }] = (await sql<{ holdsBefore: number }[]>`select count(*)::int as "holdsBefore" from admission_holds`) as unknown as [{ holdsBefore: number }];
      }

      instances[0]!.process.kill("SIGKILL");
      const killedAt = Date.now();
      const beforeKill = { sent: running.tally.sent, other: running.tally.other.length };
      await balancer.waitFor("s1", "DOWN");
      const downInMs = Date.now() - killedAt;
      await Bun.sleep(1_500);
      const okAfterDown = running.tally.ok;
      await Bun.sleep(500);
      const tally = await running.stop();
      const servedAfterDown = tally.ok - okAfterDown;

      // The dead instance's lease is no longer renewed: it expires and the survivor's tick sweeps it.
      let sweptInMs = 0;
      for (;;) {
        // One lease per instance and account: the survivor's (renewed, or returned when idle) and none of the dead one's.
        const [leases] = await sql<{ count: number; expired: number }[]>`
          select count(*)::int as count, count(*) filter (where expires_at < now())::int as expired from wallet_leases where account_id = ${account.account_id}`;
        const [holds] = await sql<{ expired: number }[]>`select count(*) filter (where expires_at < now())::int as expired from admission_holds`;
        if (leases!.count <= 1 && leases!.expired === 0 && holds!.expired === 0) {
          sweptInMs = Date.now() - killedAt;
          break;
        }
        if (Date.now() - killedAt > 20_000) throw new Error("the dead instance's lease and budget holds were not swept within 20 s");
        await Bun.sleep(100);
      }
      const [{ live }] = (await sql<{ live: number }[]>`select count(*)::int as live from wallet_leases where account_id = ${account.account_id}`) as unknown as [{ live: number }];
      await stopAll(instances);

      const recorded = await recordedIds(sql, account.account_id);
      const lost = tally.okIds.filter((id) => !recorded.has(id));
      const ledger = await books(sql, account.account_id);
      // The only database of this describe block, so the only budget counter and holds are this account's.
      const [counter] = await sql<{ reserved: number; spent: number; holds: number }[]>`
        select reserved_micro_usd::int as reserved, spent_micro_usd::int as spent, (select count(*)::int from admission_holds) as holds from admission_counters`;
      const failed = tally.other.map((entry) => (/ECONNRESET/.test(entry) ? "reset" : entry.replace(/^(openai|anthropic) /, "").slice(0, 3)));
      const failures = Object.fromEntries([...new Set(failed)].map((status) => [status, failed.filter((s) => s === status).length]));
      console.log(
        `SIGKILL of 1 of 2 instances under load through HAProxy: sent ${tally.sent}, 200 ${tally.ok}, 503 in the protocol's shape ${tally.protocol503}, HAProxy's 503 ${tally.balancer503}, failed otherwise ${JSON.stringify(failures)} ` +
          `(${tally.other.length - beforeKill.other} after the kill), HAProxy had it down ${downInMs} ms after the kill, 200s after that ${servedAfterDown}; ` +
          `answered 200 but never recorded (the killed instance's unflushed records) ${lost.length}, records ${ledger.records}, recorded twice ${ledger.twice}; ` +
          `spend ${CREDIT - ledger.balance} vs sum of charges ${ledger.charged}; leases before the kill ${leasesBefore}, the dead one's swept ${sweptInMs} ms after the kill (live leases then ${live}); ` +
          `after the survivor stopped: reserved ${ledger.reserved}, leased ${ledger.leased}; budget holds before the kill ${holdsBefore}, after the stop ${counter!.holds}, ` +
          `budget reserved ${counter!.reserved}, budget spent ${counter!.spent} = recorded charges ${ledger.charged} + ${counter!.spent - ledger.charged} (the dead instance's swept holds and settled-but-unrecorded charges)`,
      );
      expect(servedAfterDown).toBeGreaterThan(20);
      // Failures are the killed instance's: requests in flight on it (HAProxy's 502, or the client's connection reset) and those sent to it before the balancer saw it down (503).
      for (const entry of tally.other) expect(entry).toMatch(/^(openai|anthropic) (502 |503 |TypeError: ECONNRESET)/);
      expect(leasesBefore).toBe(2);
      // Records are written every METERING_FLUSH_INTERVAL_MS (100 ms): what the killed instance had answered but not yet written is gone, a few requests per client at most.
      expect(lost.length).toBeLessThanOrEqual(CLIENTS * 8);
      expectBooksBalanced(ledger);
      // The budget lost nothing either: no hold left, nothing reserved, and the dead requests' holds counted as spent, never as free.
      expect(holdsBefore).toBeGreaterThan(0);
      expect({ holds: counter!.holds, reserved: counter!.reserved }).toEqual({ holds: 0, reserved: 0 });
      expect(counter!.spent).toBeGreaterThanOrEqual(ledger.charged);
    });
  }, 90_000);
});

describe("upstreams that hang, behind HAProxy under load", () => {
  const db = ownDatabase();
  beforeAll(() => {
    // Gemini's first frame carries text: the stream is committed (head and a token sent), then it stalls.
    mocks.google.setScenario({ kind: "slow", delayMs: 0, chunkDelayMs: 60_000 });
  });

  test("the deadlines hold: the client gets its protocol's timeout, the record says so, the reservation is released", async () => {
    await onTwoInstances(db.url(), { UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "1000", UPSTREAM_IDLE_TIMEOUT_MS: "1000" }, async ({ instances, balancer, sql }) => {
      const account = await createAccount(balancer.url, "hang@example.test");
      const running = load(balancer.url, account.api_key);
      const timed = async <T>(work: () => Promise<T>): Promise<T & { ms: number }> => {
        const sentAt = Date.now();
        const result = await work();
        return { ...result, ms: Date.now() - sentAt };
      };
      const hung = (client: Client, model: string) =>
        timed(async () => {
          const response = await infer(balancer.url, account.api_key, client, model);
          return { client, id: response.headers.get("x-request-id")!, status: response.status, body: (await response.json()) as any };
        });
      const stalled = () =>
        timed(async () => {
          const response = await fetch(`${balancer.url}/v1/messages`, {
            method: "POST",
            headers: { "x-api-key": account.api_key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
            body: JSON.stringify({ model: "mock-google/gemini-2.5-flash", stream: true, max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
          });
          return { id: response.headers.get("x-request-id")!, status: response.status, text: await response.text() };
        });
      const [hungOpenai, hungAnthropic, stalls] = await Promise.all([
        Promise.all(Array.from({ length: 4 }, () => hung("openai", "mock-openai/gpt-4o-mini@hang"))),
        Promise.all(Array.from({ length: 4 }, () => hung("anthropic", "mock-anthropic/claude-sonnet-4-5@hang"))),
        Promise.all(Array.from({ length: 4 }, stalled)),
      ]);
      const tally = await running.stop();
      await stopAll(instances);

      const ids = [...hungOpenai, ...hungAnthropic, ...stalls].map((request) => request.id);
      const rows = await sql<{ request_id: string; status: string; status_code: number; charge: number | null }[]>`
        select request_id, status, status_code, final_charge_micro_usd as charge from requests where request_id in ${sql(ids)}`;
      const byId = new Map(rows.map((row) => [row.request_id, row]));
      const ledger = await books(sql, account.account_id);
      const slowest = (requests: { ms: number }[]) => Math.max(...requests.map((request) => request.ms));
      console.log(
        `upstreams that hang (first-byte and idle deadlines 1 s) behind HAProxy under load: load sent ${tally.sent}, 200 ${tally.ok}, other ${tally.other.length}; ` +
          `hung before the head: OpenAI ${hungOpenai.map((r) => r.status).join(",")} (slowest ${slowest(hungOpenai)} ms), Anthropic ${hungAnthropic.map((r) => r.status).join(",")} (slowest ${slowest(hungAnthropic)} ms); ` +
          `stalled mid-stream: ${stalls.map((r) => r.status).join(",")} with an error frame ${stalls.filter((r) => /event: error\ndata: \{"type":"error"/.test(r.text)).length} of ${stalls.length} (slowest ${slowest(stalls)} ms); ` +
          `records ${JSON.stringify(rows.map((row) => `${row.status}/${row.status_code}`))}; spend ${CREDIT - ledger.balance} vs sum of charges ${ledger.charged}; reserved ${ledger.reserved}, leased ${ledger.leased}`,
      );
      expect(tally.other).toEqual([]);
      expect(tally.ok).toBe(tally.sent);
      for (const request of hungOpenai) {
        expect(request.status).toBe(504);
        expect(request.body.error.code).toBe("upstream_timeout");
      }
      for (const request of hungAnthropic) {
        expect(request.status).toBe(504);
        expect(request.body).toMatchObject({ type: "error", error: { type: "timeout_error" } });
      }
      for (const request of stalls) {
        expect(request.status).toBe(200);
        expect(request.text).toContain("event: content_block_delta");
        expect(request.text).toMatch(/event: error\ndata: \{"type":"error"/);
      }
      for (const request of [...hungOpenai, ...hungAnthropic]) expect(byId.get(request.id)).toMatchObject({ status: "failed", status_code: 504 });
      for (const request of stalls) expect(byId.get(request.id)?.status).toBe("failed");
      expectBooksBalanced(ledger);
    });
  }, 90_000);
});

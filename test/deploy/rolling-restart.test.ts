import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { spawnServerOnMocks, startDatabaseAndMocks, stopDatabaseAndMocks } from "../support/inference-harness";
import type { MockUpstreamSet } from "../support/mock-upstreams";
import type { SpawnedServer } from "../support/spawn-server";
import type { TestDatabase } from "../support/test-database";
import { startHaproxy, type RunningHaproxy } from "../support/haproxy";

/**
 * Two instances on one PostgreSQL behind HAProxy (health checks on /ready), a steady load
 * of inference requests through the balancer, and a rolling restart: SIGTERM instance 1,
 * start its replacement on the same port once it has exited, wait until HAProxy has it up,
 * then the same for instance 2. With the drain delay every request is answered 200 and
 * recorded once; with it set to 0 the balancer still sends to the closed listener and
 * requests fail, which is what the delay is for (docs/operations.md "Readiness and drain").
 */
let db: TestDatabase;
let mocks: MockUpstreamSet;
let sql: postgres.Sql;
const started: SpawnedServer[] = [];
beforeAll(async () => {
  ({ db, mocks } = await startDatabaseAndMocks());
  // Each answer takes a moment, so requests are in flight on the instance being stopped.
  mocks.openai.setScenario({ kind: "text", usage: { prompt: 12, completion: 8 }, delayMs: 20 });
  sql = postgres(db.url, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql.end();
  await stopDatabaseAndMocks({ db, mocks }, started);
});

/** Clients sending requests through the balancer at once, each one after the other. */
const CLIENTS = 6;

interface Outcome {
  sent: number;
  ok: number;
  /** Answered, but not 200 (HAProxy's 503 when the server it picked refused the connection). */
  failed: Map<number, number>;
  /** No answer at all: the connection was refused or reset. */
  errors: number;
  /** Request records of the account in the database once every instance has stopped. */
  records: number;
}

async function spawnInstance(env: Record<string, string>): Promise<SpawnedServer> {
  const server = await spawnServerOnMocks(mocks, env);
  started.push(server);
  return server;
}

async function rollingRestart(shutdownDelayMs: number): Promise<Outcome> {
  const env = { DATABASE_URL: db.url, ADMIN_TOKEN: "op", LOG_LEVEL: "warn", SHUTDOWN_GRACE_MS: "10000", SHUTDOWN_DELAY_MS: String(shutdownDelayMs) };
  const instances = await Promise.all([spawnInstance(env), spawnInstance(env)]);
  const ports = instances.map((instance) => new URL(instance.url).port);
  const balancer: RunningHaproxy = await startHaproxy(ports.map(Number), { checkIntervalMs: 200, fall: 2, rise: 2 });
  try {
    await balancer.waitFor("s1", "UP");
    await balancer.waitFor("s2", "UP");
    const created = await fetch(`${balancer.url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: "Bearer op", "content-type": "application/json" },
      body: JSON.stringify({ email: `rolling-${shutdownDelayMs}@example.test`, credit_micro_usd: 1_000_000_000 }),
    }).then((r) => r.json() as Promise<{ account_id: string; api_key: string }>);

    const outcome: Outcome = { sent: 0, ok: 0, failed: new Map(), errors: 0, records: 0 };
    let loading = true;
    const client = async () => {
      while (loading) {
        outcome.sent++;
        try {
          const response = await fetch(`${balancer.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${created.api_key}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
          });
          await response.arrayBuffer();
          if (response.status === 200) outcome.ok++;
          else outcome.failed.set(response.status, (outcome.failed.get(response.status) ?? 0) + 1);
        } catch {
          outcome.errors++;
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);

    await Bun.sleep(500);
    for (const [index, instance] of instances.entries()) {
      instance.process.kill("SIGTERM");
      expect(await instance.exited).toBe(0);
      instances[index] = await spawnInstance({ ...env, PORT: ports[index]! });
      await balancer.waitFor(`s${index + 1}`, "UP");
      await Bun.sleep(300);
    }
    loading = false;
    await Promise.all(clients);

    for (const instance of instances) instance.process.kill("SIGTERM");
    for (const instance of instances) expect(await instance.exited).toBe(0);
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from requests where account_id = ${created.account_id}`;
    outcome.records = row!.count;
    const failed = [...outcome.failed].map(([status, count]) => `${count}×${status}`).join(" ") || "0";
    console.log(
      `rolling restart of 2 instances behind HAProxy, SHUTDOWN_DELAY_MS=${shutdownDelayMs}: ` +
        `sent ${outcome.sent}, 200 ${outcome.ok}, non-200 ${failed}, refused or reset ${outcome.errors}, request records ${outcome.records}`,
    );
    return outcome;
  } finally {
    await balancer.stop();
  }
}

describe("rolling restart behind HAProxy", () => {
  test("with the drain delay: every request is answered 200, none refused or reset, each recorded once", async () => {
    const outcome = await rollingRestart(1_500);
    expect(outcome.sent).toBeGreaterThan(100);
    expect(outcome.errors).toBe(0);
    expect([...outcome.failed]).toEqual([]);
    expect(outcome.ok).toBe(outcome.sent);
    expect(outcome.records).toBe(outcome.sent);
  }, 90_000);

  test("without it (SHUTDOWN_DELAY_MS=0) the balancer still sends to the closed listener: requests fail", async () => {
    const outcome = await rollingRestart(0);
    expect(outcome.ok).toBeLessThan(outcome.sent);
    // What failed never reached an instance: the records are the 200s, no more, no fewer.
    expect(outcome.records).toBe(outcome.ok);
  }, 90_000);
});

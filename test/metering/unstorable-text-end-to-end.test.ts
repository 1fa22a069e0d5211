import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnServerOnMocks, startDatabaseAndMocks, stopDatabaseAndMocks } from "../support/inference-harness";
import type { MockUpstreamSet } from "../support/mock-upstreams";
import type { TestDatabase } from "../support/test-database";
import { UPSTREAM, closeClients, database, normaliseRow, send, wallet } from "./metering-support";

afterAll(() => closeClients());

/**
 * Model names PostgreSQL text cannot hold, as a client can send them: the request is
 * answered 404, and its record must not hold back anyone else's.
 */
describe("a request whose record carries text PostgreSQL cannot store", () => {
  let db: TestDatabase;
  let mocks: MockUpstreamSet;
  beforeAll(async () => {
    ({ db, mocks } = await startDatabaseAndMocks());
  });
  afterAll(() => stopDatabaseAndMocks({ db, mocks }));

  const CREDIT = 10_000_000;

  async function createAccount(url: string) {
    const created = await fetch(`${url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: "Bearer op", "content-type": "application/json" },
      body: JSON.stringify({ email: `unstorable-${crypto.randomUUID()}@example.test`, credit_micro_usd: CREDIT }),
    }).then((r) => r.json() as Promise<{ account_id: string; api_key: string }>);
    return { accountId: created.account_id, apiKey: created.api_key };
  }

  test("NUL and lone surrogates in the model (JSON body and %00 in a Google path) answer 404; the next request of another account is written and charged at once; SIGTERM loses nothing", async () => {
    // One write connection: every account shares the one buffer a stuck row would block.
    const server = await spawnServerOnMocks(mocks, { DATABASE_URL: db.url, ADMIN_TOKEN: "op", SHUTDOWN_GRACE_MS: "10000", LOG_LEVEL: "warn", METERING_WRITE_CONNECTIONS: "1" });
    try {
      const poisoner = await createAccount(server.url);
      const other = await createAccount(server.url);
      const poisonIds: string[] = [];
      const post = async (path: string, body: string) => {
        const requestId = `poison-${crypto.randomUUID()}`;
        poisonIds.push(requestId);
        const response = await fetch(`${server.url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${poisoner.apiKey}`, "content-type": "application/json", "x-request-id": requestId },
          body,
        });
        return { status: response.status, body: (await response.json()) as { error?: unknown } };
      };
      const chat = (model: string) => JSON.stringify({ model, messages: [{ role: "user", content: "Hi" }] });
      // JSON.stringify writes the NUL as \u0000 and the lone surrogate as \ud800: what a client sends.
      for (const model of ["openai/gpt-test\u0000", "openai/gpt-\ud800test", `openai/${"m".repeat(1_000_000)}\u0000`]) {
        const answer = await post("/v1/chat/completions", chat(model));
        expect(answer.status).toBe(404);
        expect(answer.body.error).toBeDefined();
      }
      const google = await post("/v1beta/models/google/gemini-test%00:generateContent", JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] }));
      expect(google.status).toBe(404);
      expect(google.body.error).toBeDefined();

      const sent = await send(server.url, other.apiKey, "openai-chat", UPSTREAM["openai-chat"].model);
      expect(sent.status).toBe(200);
      const sql = database(db.url);
      // A batch stuck on a poisoned row is retried forever and never commits, so the other
      // tenant's record would never appear; 10 s is only a bound for a loaded machine (a
      // flush normally lands within ~100 ms).
      const until = performance.now() + 10_000;
      let record: Record<string, unknown> | undefined;
      while (record === undefined && performance.now() < until) {
        [record] = (await sql`select * from requests where account_id = ${other.accountId} and request_id = ${sent.requestId}`).map(normaliseRow);
        if (record === undefined) await Bun.sleep(20);
      }
      expect(record).toMatchObject({ status: "succeeded", billing_status: "computed" });
      const charge = record!.final_charge_micro_usd as number;
      expect(charge).toBeGreaterThan(0);
      const ledger = (await sql`select amount_micro_usd from ledger_entries where request_record_id = ${record!.id as string}`).map(normaliseRow);
      expect(ledger).toEqual([{ amount_micro_usd: -charge }]);
      expect((await wallet(sql, other.accountId)).balance).toBe(CREDIT - charge);

      // The poisoned records themselves are stored, their text made storable.
      const poisoned = (await sql`select request_id, model_id, status_code from requests where account_id = ${poisoner.accountId}`).map(normaliseRow);
      expect(poisoned.map((row) => row.request_id).sort()).toEqual([...poisonIds].sort());
      for (const row of poisoned) {
        expect(row.status_code).toBe(404);
        const model = row.model_id as string;
        expect(model.includes("\u0000")).toBe(false);
        // NUL and the lone surrogate became U+FFFD; the megabyte name was cut to 4,096 characters.
        if (model.length === 4_096) expect(model.endsWith("m…")).toBe(true);
        else expect(model.includes("\ufffd")).toBe(true);
      }

      // No flush failed on the way, and nothing needed dead-lettering.
      const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
      expect(metrics).toContain("# TYPE switchyard_metering_dead_letters_total counter");
      expect(metrics).not.toMatch(/^switchyard_write_failures_total\{/m);
      expect(metrics).not.toMatch(/^switchyard_metering_dead_letters_total\{/m);

      server.process.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      expect(server.output()).not.toContain("they are lost");
      expect(server.output()).not.toContain("flush failed");
      expect((await wallet(sql, other.accountId)).reserved).toBe(0);
    } finally {
      server.process.kill("SIGKILL");
      await server.exited;
    }
  }, 30_000);
});

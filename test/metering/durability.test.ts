import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { spawnServerOnMocks, startInferenceHarness, type InferenceHarness, startDatabaseAndMocks, stopDatabaseAndMocks } from "../support/inference-harness";
import type { MockUpstreamSet } from "../support/mock-upstreams";
import type { TestDatabase } from "../support/test-database";
import { UPSTREAM, closeClients, database, flush, normaliseRow, requestFor, returnIdleReservations, send, sseJson, wallet, type Protocol } from "./metering-support";

afterAll(() => closeClients());

const LONG_TEXT = Array.from({ length: 12 }, (_, i) => `piece${i}`).join(" ");

/** Starts a stream and resolves once its first bytes are in; `rest` reads it to the end. */
async function openStream(url: string, apiKey: string, requestId: string, model = "mock-openai/gpt-4o-mini") {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Hi" }], stream: true }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const first = await reader.read();
  const decoder = new TextDecoder();
  let text = decoder.decode(first.value, { stream: true });
  return {
    async rest(): Promise<string> {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

describe("SIGTERM", () => {
  let db: TestDatabase;
  let mocks: MockUpstreamSet;
  beforeAll(async () => {
    ({ db, mocks } = await startDatabaseAndMocks());
  });
  afterAll(() => stopDatabaseAndMocks({ db, mocks }));

  async function startServer(env: Record<string, string> = {}) {
    const server = await spawnServerOnMocks(mocks, { DATABASE_URL: db.url, ADMIN_TOKEN: "op", SHUTDOWN_GRACE_MS: "10000", LOG_LEVEL: "warn", ...env });
    const created = await fetch(`${server.url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: "Bearer op", "content-type": "application/json" },
      body: JSON.stringify({ email: `sigterm-${crypto.randomUUID()}@example.test`, credit_micro_usd: CREDIT }),
    }).then((r) => r.json() as Promise<any>);
    return { server, accountId: created.account_id as string, apiKey: created.api_key as string };
  }

  const CREDIT = 10_000_000;
  const PLAN: Array<[Protocol, Protocol, boolean]> = [
    ["openai-chat", "anthropic-messages", false],
    ["anthropic-messages", "anthropic-messages", true],
    ["google-generate-content", "openai-responses", true],
    ["openai-responses", "google-generate-content", false],
  ];

  /** Every request has its record (with its usage frames), one usage entry, and the wallet is settled with nothing reserved. */
  async function expectAllWritten(accountId: string, requestIds: string[]) {
    const sql = database(db.url);
    const records = (await sql`select * from requests where account_id = ${accountId}`).map(normaliseRow);
    expect(records.map((r) => r.request_id).sort()).toEqual([...requestIds].sort());
    for (const record of records) {
      expect(record).toMatchObject({ status: "succeeded", billing_status: "computed" });
      expect(record.final_charge_micro_usd).toBeGreaterThan(0);
    }
    const usage = (await sql`select * from ledger_entries where account_id = ${accountId} and kind = 'usage'`).map(normaliseRow);
    expect(usage.map((e) => [e.request_record_id, e.amount_micro_usd]).sort()).toEqual(records.map((r) => [r.id, -r.final_charge_micro_usd]).sort());
    // The frames are the record's own (migration 0030): every reported usage frame came with it.
    for (const record of records) expect(record.usage_evidence.raw_usage_frames.length).toBeGreaterThan(0);
    const total = records.reduce((sum, r) => sum + r.final_charge_micro_usd, 0);
    // Shutdown also gave back whatever admission still held.
    expect(await wallet(sql, accountId)).toEqual({ balance: CREDIT - total, reserved: 0 });
  }

  test("a server SIGTERMed right after its last response exits 0 with every record and ledger row written", async () => {
    const { server, accountId, apiKey } = await startServer();
    try {
      const ids: string[] = [];
      for (const [client, upstream, stream] of PLAN) {
        const sent = await send(server.url, apiKey, client, UPSTREAM[upstream].model, { stream });
        expect(sent.status).toBe(200);
        ids.push(sent.requestId);
      }
      // Within the buffer's flush interval of the last settlement.
      server.process.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      expect(server.output()).not.toContain("they are lost");
      await expectAllWritten(accountId, ids);
    } finally {
      server.process.kill("SIGKILL");
      await server.exited;
    }
  }, 30_000);

  test("a stream still open at SIGTERM finishes, and its record (settled during shutdown) is written before exit", async () => {
    const { server, accountId, apiKey } = await startServer();
    try {
      // 12 pieces 100 ms apart: still streaming when the signal arrives.
      mocks.openai.queueScenarios({ kind: "slow", delayMs: 0, chunkDelayMs: 100, text: LONG_TEXT });
      const openId = `sigterm-open-${crypto.randomUUID()}`;
      const open = await openStream(server.url, apiKey, openId);
      const sent = await send(server.url, apiKey, "anthropic-messages", UPSTREAM["google-generate-content"].model, { stream: true });
      expect(sent.status).toBe(200);
      server.process.kill("SIGTERM");

      const text = await open.rest();
      expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
      expect(sseJson(text).map((c) => c.choices?.[0]?.delta?.content ?? "").join("")).toBe(LONG_TEXT);
      expect(await server.exited).toBe(0);
      expect(server.output()).not.toContain("they are lost");
      await expectAllWritten(accountId, [openId, sent.requestId]);
    } finally {
      server.process.kill("SIGKILL");
      await server.exited;
    }
  }, 30_000);
  test("at the grace limit open streams end with their protocol's error frame and a clean end, requests still awaiting an upstream get a 503, and all are recorded as failed", async () => {
    const { server, accountId, apiKey } = await startServer({ SHUTDOWN_GRACE_MS: "500" });
    try {
      // Passthrough and translated, every client protocol; 12 pieces 1 s apart outlast the grace period.
      const PAIRS: Array<[Protocol, Protocol]> = [
        ["openai-chat", "openai-chat"],
        ["anthropic-messages", "openai-responses"],
        ["openai-responses", "openai-responses"],
        ["google-generate-content", "anthropic-messages"],
      ];
      const ERROR_FRAME: Record<Protocol, RegExp> = {
        "openai-chat": /data: \{"error":\{[^\n]*shutting down[^\n]*\n\ndata: \[DONE\]\n\n$/,
        "openai-responses": /event: response\.failed\ndata: \{"type":"response\.failed"[^\n]*shutting down[^\n]*\n\n$/,
        "anthropic-messages": /event: error\ndata: \{"type":"error","error":\{[^\n]*shutting down[^\n]*\n\n$/,
        "google-generate-content": /data: \{"error":\{"code":503,[^\n]*shutting down[^\n]*\n\n$/,
      };
      const opened = await Promise.all(
        PAIRS.map(async ([client, upstream]) => {
          mocks[UPSTREAM[upstream].mock].queueScenarios({ kind: "slow", delayMs: 0, chunkDelayMs: 1_000, text: LONG_TEXT });
          const requestId = `grace-${client}-${crypto.randomUUID()}`;
          const { path, body } = requestFor(client, UPSTREAM[upstream].model, { stream: true });
          const response = await fetch(server.url + path, {
            method: "POST",
            headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "x-request-id": requestId },
            body: JSON.stringify(body),
          });
          expect(response.status).toBe(200);
          // A reset (what shutdown did before) is kept as text, so the assertion below names it.
          return { client, requestId, text: response.text().catch((error) => `reset: ${String(error)}`) };
        }),
      );
      // Two requests whose upstream never answers: a stream before its first token, and a body.
      const hangsBefore = (client: Protocol) => mocks[UPSTREAM[client].mock].requests.length;
      const waiting = [
        { client: "openai-chat" as const, stream: true, requestId: `grace-hang-stream-${crypto.randomUUID()}` },
        { client: "anthropic-messages" as const, stream: false, requestId: `grace-hang-body-${crypto.randomUUID()}` },
      ].map((request) => ({
        ...request,
        before: hangsBefore(request.client),
        sent: send(server.url, apiKey, request.client, `${UPSTREAM[request.client].model}@hang`, request).catch((error) => ({ status: 0, json: String(error) })),
      }));
      // Both reach their upstream (which holds them) before SIGTERM, however slow the machine.
      for (let polls = 0; waiting.some(({ client, before }) => hangsBefore(client) === before); polls++) {
        if (polls > 1_000) throw new Error("the hanging requests never reached their upstreams");
        await Bun.sleep(10);
      }
      server.process.kill("SIGTERM");
      for (const { client, sent } of waiting) {
        const answer = await sent;
        expect(answer.status).toBe(503);
        if (client === "openai-chat") expect(answer.json.error.message).toContain("shutting down");
        else expect(answer.json).toMatchObject({ type: "error", error: { message: expect.stringContaining("shutting down") } });
      }
      for (const { client, text } of opened) {
        // Read to a clean end, the error frame last.
        const body = await text;
        expect(body).toMatch(ERROR_FRAME[client]);
        expect(body).toContain("piece0");
        expect(body).not.toContain("piece11");
      }
      expect(await server.exited).toBe(0);
      expect(server.output()).toContain("requests ended by shutdown");
      expect(server.output()).not.toContain("they are lost");
      const sql = database(db.url);
      const records = (await sql`select * from requests where account_id = ${accountId}`).map(normaliseRow);
      expect(records.map((r) => r.request_id).sort()).toEqual([...opened, ...waiting].map((o) => o.requestId).sort());
      for (const record of records.filter((r) => !r.request_id.startsWith("grace-hang"))) {
        // What was produced before the cut is billed, as an estimate.
        expect(record).toMatchObject({ status: "failed", billing_status: "computed" });
        expect(record.usage_evidence.source).toBe("estimated");
        expect(record.final_charge_micro_usd).toBeGreaterThan(0);
      }
      for (const record of records.filter((r) => r.request_id.startsWith("grace-hang"))) {
        // Nothing was produced: nothing is charged.
        expect(record).toMatchObject({ status: "failed", status_code: 503, final_charge_micro_usd: 0 });
      }
      const total = records.reduce((sum, r) => sum + r.final_charge_micro_usd, 0);
      expect(await wallet(sql, accountId)).toEqual({ balance: CREDIT - total, reserved: 0 });
    } finally {
      server.process.kill("SIGKILL");
      await server.exited;
    }
  }, 30_000);

  test("backends killed again and again under load (mid-flush, mid-transaction): the process survives, and SIGTERM then writes every record once", async () => {
    const { server, accountId, apiKey } = await startServer();
    try {
      const second = await fetch(`${server.url}/admin/accounts`, {
        method: "POST",
        headers: { authorization: "Bearer op", "content-type": "application/json" },
        body: JSON.stringify({ email: `killed-${crypto.randomUUID()}@example.test`, credit_micro_usd: CREDIT }),
      }).then((r) => r.json() as Promise<any>);
      const accounts = [
        { accountId, apiKey },
        { accountId: second.account_id as string, apiKey: second.api_key as string },
      ];
      const admin = database(process.env.TEST_DATABASE_URL!);
      const dbName = new URL(db.url).pathname.slice(1);
      const answered = new Map<string, string[]>(accounts.map((a) => [a.accountId, []]));
      const until = performance.now() + 2_500;
      // The load lasts 2.5 s and until the killer has cut backends over 20 times while every
      // account had over 20 answers (a loaded machine does less in 2.5 s).
      let killing = true;
      const enough = () => kills > 20 && [...answered.values()].every((ids) => ids.length > 20);
      const clients = Array.from({ length: 8 }, async (_, lane) => {
        const account = accounts[lane % 2]!;
        while (killing) {
          const sent = await send(server.url, account.apiKey, "openai-chat", UPSTREAM["openai-chat"].model);
          // 200, or a clean 503 while admission could not reach the database.
          expect([200, 503]).toContain(sent.status);
          answered.get(account.accountId)!.push(sent.requestId);
        }
      });
      let kills = 0;
      const killer = (async () => {
        await Bun.sleep(200);
        while (performance.now() < until - 200 || !enough()) {
          await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${dbName} and pid <> pg_backend_pid()`;
          kills++;
          await Bun.sleep(15);
        }
        await Bun.sleep(200);
        killing = false;
      })();
      await Promise.all([...clients, killer]);
      expect(kills).toBeGreaterThan(20);
      expect(server.process.exitCode).toBeNull();
      server.process.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      expect(server.output()).not.toContain("uncaught exception");
      expect(server.output()).not.toContain("they are lost");

      const sql = database(db.url);
      for (const { accountId: account } of accounts) {
        const ids = answered.get(account)!;
        expect(ids.length).toBeGreaterThan(20);
        const records = (await sql`select request_id, status, final_charge_micro_usd from requests where account_id = ${account}`).map(normaliseRow);
        expect(records.map((r) => r.request_id).sort()).toEqual([...ids].sort());
        const total = records.reduce((sum, r) => sum + Number(r.final_charge_micro_usd ?? 0), 0);
        expect(await wallet(sql, account)).toEqual({ balance: CREDIT - total, reserved: 0 });
      }
    } catch (error) {
      // Why it failed is in the server's own log (a crash, or rows it could not write).
      console.log(`server output (exit code ${server.process.exitCode}):\n${server.output().slice(-4_000)}`);
      throw error;
    } finally {
      server.process.kill("SIGKILL");
      await server.exited;
    }
  }, 30_000);
});

describe("database outage", () => {
  let harness: InferenceHarness;
  let admin: postgres.Sql;
  let sql: postgres.Sql;
  let dbName: string;
  beforeAll(async () => {
    // Credentials stay cached through the outage (the default 5 s could lapse mid-test).
    harness = await startInferenceHarness({ credentialCacheTtlMs: 60_000 });
    sql = database(harness.server.databaseUrl);
    admin = database(process.env.TEST_DATABASE_URL!);
    dbName = new URL(harness.server.databaseUrl).pathname.slice(1);
  });
  afterAll(async () => {
    await admin.unsafe(`alter database ${dbName} allow_connections true`).catch(() => {});
    await harness.close();
  });

  /** No new connection is accepted and every open one (ours included) is cut. */
  async function cutDatabase(): Promise<void> {
    await admin.unsafe(`alter database ${dbName} allow_connections false`);
    for (let i = 0; i < 3; i++) {
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${dbName} and pid <> pg_backend_pid()`;
      await Bun.sleep(20);
    }
  }

  async function bufferedGauge(table: string): Promise<number> {
    const text = await fetch(`${harness.server.url}/metrics`).then((r) => r.text());
    const line = text.split("\n").find((l) => l.startsWith(`switchyard_buffered_rows{table="${table}"}`));
    return Number(line?.split(" ").at(-1));
  }

  test("during an outage admitted work completes, accounts with a lease keep being served, others get a clean 503; afterwards every record is written exactly once", async () => {
    const writeBuffer = harness.server.server.services.writeBuffer;
    const a = harness.account;
    const credit = 10_000_000;
    const b = await harness.server.createAccount(undefined, credit);
    const c = await harness.server.createAccount(undefined, credit);
    const aBefore = await wallet(sql, a.accountId);
    // B's credential and namespace are cached, but it holds no reservation on this instance
    // any more; A holds one (its lease); C was never seen (nothing cached at all).
    expect((await send(harness.server.url, b.apiKey, "openai-chat", UPSTREAM["openai-chat"].model)).status).toBe(200);
    await flush(harness);
    await returnIdleReservations(harness);
    expect((await send(harness.server.url, a.apiKey, "openai-chat", UPSTREAM["openai-chat"].model)).status).toBe(200);
    await flush(harness);

    // Three streams admitted before the outage, finishing during it.
    const streamIds = [0, 1, 2].map((i) => `outage-stream-${i}-${crypto.randomUUID()}`);
    harness.mocks.openai.queueScenarios(...streamIds.map(() => ({ kind: "slow" as const, delayMs: 0, chunkDelayMs: 60, text: LONG_TEXT })));
    const streams = await Promise.all(streamIds.map((id) => openStream(harness.server.url, a.apiKey, id)));

    await cutDatabase();
    const servedIds: string[] = [];
    const refusedIds: string[] = [];
    try {
      const upstreamCalls = () => harness.mocks.list.reduce((sum, m) => sum + m.requests.length, 0);
      // A: admitted against the reservation this instance already holds, no database needed.
      for (const client of ["openai-chat", "anthropic-messages"] as const) {
        const sent = await send(harness.server.url, a.apiKey, client, UPSTREAM[client].model);
        expect(sent.status).toBe(200);
        servedIds.push(sent.requestId);
      }
      // B: admission needs the database: refused cleanly, in protocol shape, before any upstream call.
      const upstreamBefore = upstreamCalls();
      for (const client of ["openai-chat", "anthropic-messages"] as const) {
        const sent = await send(harness.server.url, b.apiKey, client, UPSTREAM[client].model);
        expect(sent.status).toBe(503);
        expect(sent.headers.get("retry-after")).toBe("1");
        if (client === "openai-chat") expect(sent.json.error.message).toContain("billing is temporarily unavailable");
        else expect(sent.json).toMatchObject({ type: "error", error: { message: expect.stringContaining("billing is temporarily unavailable") } });
        refusedIds.push(sent.requestId);
      }
      // C: the credential cannot even be checked.
      const cold = await send(harness.server.url, c.apiKey, "openai-chat", UPSTREAM["openai-chat"].model);
      expect(cold.status).toBe(503);
      expect(cold.headers.get("retry-after")).toBe("1");
      expect(cold.json.error.message).toContain("temporarily unavailable");
      expect(upstreamCalls()).toBe(upstreamBefore);

      // The admitted streams finish normally; every row waits in the buffer.
      for (const stream of streams) expect((await stream.rest()).endsWith("data: [DONE]\n\n")).toBe(true);
      await expect(writeBuffer.flush()).rejects.toBeDefined();
      const waiting = streamIds.length + servedIds.length + refusedIds.length;
      expect(writeBuffer.stats().buffered.requests).toBe(waiting);
      expect(await bufferedGauge("requests")).toBe(waiting);
      expect(await bufferedGauge("ledger_entries")).toBe(streamIds.length + servedIds.length);
      expect(writeBuffer.stats().failures).toBeGreaterThan(0);
    } finally {
      await admin.unsafe(`alter database ${dbName} allow_connections true`);
    }

    await flush(harness);
    // With the buffer's own counts beside the gauge: a failure here once (gauge 5 after a
    // flush that resolved) left nothing else to go on.
    expect({ gauge: await bufferedGauge("requests"), stats: writeBuffer.stats() }).toMatchObject({ gauge: 0, stats: { buffered: { requests: 0 } } });
    const everyId = [...streamIds, ...servedIds, ...refusedIds];
    const counts = (await sql`select request_id, count(*)::int as n from requests where request_id in ${sql(everyId)} group by request_id`).map(normaliseRow);
    expect(counts.sort((x, y) => x.request_id.localeCompare(y.request_id))).toEqual([...everyId].sort().map((request_id) => ({ request_id, n: 1 })));
    const served = (await sql`select * from requests where request_id in ${sql([...streamIds, ...servedIds])}`).map(normaliseRow);
    for (const record of served) expect(record).toMatchObject({ status: "succeeded", billing_status: "computed", account_id: a.accountId });
    const refused = (await sql`select * from requests where request_id in ${sql(refusedIds)}`).map(normaliseRow);
    for (const record of refused) expect(record).toMatchObject({ status: "failed", status_code: 503, final_charge_micro_usd: 0, account_id: b.accountId });
    const ledger = (await sql`select request_record_id, amount_micro_usd from ledger_entries where request_record_id in ${sql(served.map((r) => r.id))} and kind = 'usage'`).map(normaliseRow);
    expect(ledger.map((e) => [e.request_record_id, e.amount_micro_usd]).sort()).toEqual(served.map((r) => [r.id, -r.final_charge_micro_usd]).sort());

    // Every charge reached its wallet once, and nothing stays reserved.
    await returnIdleReservations(harness);
    const charged = async (accountId: string) =>
      (await sql`select coalesce(sum(final_charge_micro_usd), 0)::int as total from requests where account_id = ${accountId}`)[0]!.total as number;
    expect(await wallet(sql, a.accountId)).toEqual({ balance: aBefore.balance - (await charged(a.accountId)), reserved: 0 });
    expect(await wallet(sql, b.accountId)).toEqual({ balance: credit - (await charged(b.accountId)), reserved: 0 });
    expect(await wallet(sql, c.accountId)).toEqual({ balance: credit, reserved: 0 });
  }, 20_000);
});

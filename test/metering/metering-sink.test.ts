import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { createMeteringSink } from "../../src/metering/metering-sink";
import type { LedgerRow, MeteringSink, RequestRow } from "../../src/metering/metering-rows";
import { ShardedWriteBuffer, shardIndex } from "../../src/db/batch/sharded-write-buffer";
import { WriteBuffer } from "../../src/db/batch/write-buffer";
import { createMigratedTestDatabase, type MigratedTestDatabase } from "../support/test-database";
import { normaliseRow } from "./metering-support";
import type { UsageFrameRecord } from "../../src/db/usage-evidence-shape";

let sql: Sql;
let database: MigratedTestDatabase;
beforeAll(async () => {
  database = await createMigratedTestDatabase();
  sql = database.sql;
  await sql.unsafe("insert into accounts (id, email) values ('acct_sink', 'sink@example.test')");
  await sql.unsafe("insert into wallets (account_id, balance_micro_usd) values ('acct_sink', 1000000)");
});
afterAll(() => database.close({ timeout: 1 }));

function rowsFor(id: string, account = "acct_sink") {
  const usage = { cache_read_tokens: 2, cache_write_tokens: 0, completion_tokens: 7, prompt_tokens: 11, reasoning_tokens: 3, web_search_count: 0 };
  // Awkward bytes where the gateway copies them from outside: a provider model id with a tab, quote and backslash.
  const frame: UsageFrameRecord = { account_label: "platform", attempt_ordinal: 1, frame_kind: "usage", frame_ordinal: 1, provider_id: "p", provider_model_id: 'm\tx"\\é', usage };
  const request: RequestRow = {
    id, request_id: `client "id"\\${id}`, account_id: account, namespace_id: null, api_key_id: null, oauth_token_id: "og_1", status: "succeeded", status_code: 200,
    billing_status: "computed", model_id: "p/m", provider_id: "p", provider_model_id: "m\tx", routing_profile: "balanced", funding_source: "cloud_credit",
    streamed: true, finish_reason: "stop", first_token_kind: "text", prompt_tokens: 11, completion_tokens: 7, reasoning_tokens: 3,
    cache_read_tokens: 2, cache_write_tokens: 0, final_charge_micro_usd: 25, request_duration_ms: 12, upstream_duration_ms: 10,
    generation_duration_ms: null, ttft_ms: 4, used_capabilities: ["text", "tools"],
    usage_evidence: {
      source: "provider_reported",
      effective_usage: { ...usage, media_input_count: 0, media_output_count: 0 },
      raw_usage: usage,
      estimator: { chars_per_token: 4, version: "chars4-v1" },
      raw_usage_frames: [frame],
    },
    warnings: [{ code: "dropped_field", field: "seed\nnote" }],
    attempts: [
      { ordinal: 1, provider_id: "q", model_id: "q/m", funding_source: "byok", outcome: "timeout", status_code: null, error: "upstream_timeout", duration_ms: 30_000, ttft_ms: null },
      { ordinal: 2, provider_id: "p", model_id: "p/m", funding_source: "cloud_credit", outcome: "success", status_code: 200, error: null, duration_ms: 10, ttft_ms: 4 },
    ],
    charge_audit: { pricing: { input: "0.15", note: 'tab\t"quote"' }, buckets: { output: 7 } },
    created_at: "2026-11-22T10:00:00.000Z", completed_at: "2026-11-22T10:00:01.000Z",
  };
  const ledger: LedgerRow = { id: `le_${id}`, account_id: account, namespace_id: null, request_record_id: id, kind: "usage", amount_micro_usd: -25, released_micro_usd: 0, lease_id: null };
  return { request, ledger };
}

/** Hands one request's two rows to a sink, as settleRequest does. */
function enqueueRows(sink: MeteringSink, rows: ReturnType<typeof rowsFor>): void {
  sink.request(rows.request);
  sink.ledger(rows.ledger);
}

/** Writes one request's two rows through a fresh buffer and sink, and stops it. */
async function writeOnce(rows: ReturnType<typeof rowsFor>, copy: boolean): Promise<void> {
  const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000 });
  enqueueRows(createMeteringSink(writes, { copy }), rows);
  await writes.flush();
  await writes.stop();
}

async function balance(): Promise<number> {
  const [row] = await sql.unsafe("select balance_micro_usd::int as b from wallets where account_id = 'acct_sink'");
  return row!.b as number;
}

async function countsFor(id: string) {
  const [row] = await sql.unsafe(
    `select (select count(*)::int from requests where id = $1) as requests,
            (select count(*)::int from usage_frames where request_record_id = $1) as frames,
            (select count(*)::int from billing_audit where request_record_id = $1) as audits,
            (select count(*)::int from ledger_entries where request_record_id = $1) as ledger`,
    [id],
  );
  return { ...row };
}

describe("metering sink on PostgreSQL (COPY first, idempotent insert on retry)", () => {
  for (const copy of [true, false]) {
    test(`${copy ? "COPY" : "insert"}: every column of every table reads back as written`, async () => {
      const id = `rq_roundtrip_${copy}`;
      const rows = rowsFor(id);
      const balanceBefore = await balance();
      await writeOnce(rows, copy);
      expect(await balance()).toBe(balanceBefore - 25);
      const [request] = await sql.unsafe("select * from requests where id = $1", [id]);
      const read = {
        ...normaliseRow(request!),
        final_charge_micro_usd: Number(request!.final_charge_micro_usd), // int8 reads as a string on this plain client
        created_at: (request!.created_at as Date).toISOString(),
        completed_at: (request!.completed_at as Date).toISOString(),
      };
      expect(read).toEqual(rows.request as never);
      // The frames and the charge audit are the record's (0030): the old tables get nothing.
      expect(await countsFor(id)).toEqual({ requests: 1, frames: 0, audits: 0, ledger: 1 });
    });
  }

  test("rows already committed by a flush whose acknowledgement was lost: the COPY fails on them, the same flush inserts the rest idempotently, nothing is doubled or dead-lettered", async () => {
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000, retryBaseMs: 1 });
    const sink = createMeteringSink(writes, { copy: true });
    const balanceBefore = await balance();
    const landed = rowsFor("rq_landed");
    const fresh = rowsFor("rq_fresh");
    // The "lost acknowledgement" flush: these rows are already in the database.
    await writeOnce(landed, false);
    for (const rows of [landed, fresh]) enqueueRows(sink, rows);
    // The COPY's duplicate key (23505) is refused data: the batch is written again at once
    // with the idempotent statements, which pass.
    await writes.flush();
    await writes.stop();
    expect(writes.stats()).toMatchObject({
      failures: 1,
      buffered: { requests: 0, ledger_entries: 0 },
      deadLettered: { requests: 0, ledger_entries: 0 },
    });
    expect(await countsFor("rq_landed")).toEqual({ requests: 1, frames: 0, audits: 0, ledger: 1 });
    expect(await countsFor("rq_fresh")).toEqual({ requests: 1, frames: 0, audits: 0, ledger: 1 });
    // Each request was debited exactly once.
    expect(await balance()).toBe(balanceBefore - 50);
  });

  test("a backlog of 2,500 requests goes as one binary COPY per table, encoded a chunk at a time; a value with no exact binary form in a later chunk aborts it, and the retry writes every row once, that one dead-lettered", async () => {
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000, retryBaseMs: 1 });
    const sink = createMeteringSink(writes, { copy: true });
    const balanceBefore = await balance();
    const ids = Array.from({ length: 2_500 }, (_, i) => `rq_backlog_${String(i).padStart(4, "0")}`);
    for (const id of ids) {
      const rows = rowsFor(id);
      // In the third 1,000-row chunk: a token count PostgreSQL's integer column refuses.
      if (id === ids[2_200]) rows.request.prompt_tokens = 1.5;
      enqueueRows(sink, rows);
    }
    await writes.flush().catch(() => {});
    await writes.whenWritten();
    await writes.stop();
    expect(writes.stats()).toMatchObject({
      buffered: { requests: 0, ledger_entries: 0 },
      written: { requests: 2_499, ledger_entries: 2_500 },
      deadLettered: { requests: 1, ledger_entries: 0 },
    });
    const [counts] = await sql.unsafe(
      `select (select count(*)::int from requests where id like 'rq_backlog_%') as requests,
              (select count(*)::int from ledger_entries where request_record_id like 'rq_backlog_%') as ledger,
              (select count(*)::int from metering_dead_letters where request_record_id = $1) as dead`,
      [ids[2_200]!],
    );
    expect({ ...counts }).toEqual({ requests: 2_499, ledger: 2_500, dead: 1 });
    // Every charge debited once, the refused record's included.
    expect(await balance()).toBe(balanceBefore - 2_500 * 25);
  });

  test("COPY and insert paths move balances, reservations and leases identically (a swept lease releases nothing twice)", async () => {
    const state = async (account: string) => {
      const [wallet] = await sql.unsafe("select balance_micro_usd::int as balance, reserved_micro_usd::int as reserved from wallets where account_id = $1", [account]);
      const leases = await sql.unsafe("select id, amount_micro_usd::int as amount from wallet_leases where account_id = $1 order by id", [account]);
      return { ...wallet, leases: leases.map((lease) => ({ ...lease })) };
    };
    const results: unknown[] = [];
    for (const copy of [true, false]) {
      const account = `acct_lease_${copy}`;
      await sql.unsafe("insert into accounts (id, email) values ($1, $2)", [account, `${account}@example.test`]);
      await sql.unsafe("insert into wallets (account_id, balance_micro_usd, reserved_micro_usd) values ($1, 10000, 3000)", [account]);
      await sql.unsafe("insert into wallet_leases (id, account_id, amount_micro_usd, expires_at) values ($1, $2, 2000, now() + interval '1 minute')", [`wl_a_${copy}`, account]);
      // wl_gone_* was swept already: its charge debits the balance but releases no reservation.
      const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000 });
      const sink = createMeteringSink(writes, { copy });
      const entries: Array<[string, number]> = [[`wl_a_${copy}`, 120], [`wl_a_${copy}`, 80], [`wl_gone_${copy}`, 40]];
      entries.forEach(([lease, charge], i) => {
        const id = `rq_lease_${copy}_${i}`;
        sink.ledger({ id: `le_${id}`, account_id: account, namespace_id: null, request_record_id: id, kind: "usage", amount_micro_usd: -charge, released_micro_usd: charge, lease_id: lease });
      });
      sink.ledger({ id: `le_rq_unknown_${copy}`, account_id: account, namespace_id: null, request_record_id: `rq_unknown_${copy}`, kind: "pending_debit_recovery", amount_micro_usd: 0, released_micro_usd: 0, lease_id: `wl_a_${copy}` });
      await writes.flush();
      await writes.stop();
      const after = await state(account);
      results.push({ ...after, leases: (after.leases as unknown as Array<{ amount: number }>).map((lease) => lease.amount) });
    }
    expect(results[0]).toEqual({ balance: 10000 - 240, reserved: 3000 - 200, leases: [2000 - 200] });
    expect(results[1]).toEqual(results[0]);
  });

  test("a wallet lock the flush cannot take fails it with the lock's own error, not the aborted COPY's sent behind it; nothing is written, and the retry writes every row once", async () => {
    const account = "acct_locked";
    await sql.unsafe("insert into accounts (id, email) values ($1, 'locked@example.test')", [account]);
    await sql.unsafe("insert into wallets (account_id, balance_micro_usd) values ($1, 1000)", [account]);
    // The buffer's connection gives up on a lock after 200 ms (SQLSTATE 55P03) …
    const impatient = postgres(database.url, { max: 1, onnotice: () => {}, connection: { lock_timeout: 200 } }) as unknown as Sql;
    const writes = new WriteBuffer(impatient, { flushIntervalMs: 60_000, retryBaseMs: 60_000 });
    const sink = createMeteringSink(writes, { copy: true });
    const rows = rowsFor("rq_locked", account);
    // … while another transaction holds the wallet's row.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = sql.begin(async (tx) => {
      await tx.unsafe("select 1 from wallets where account_id = $1 for update", [account]);
      holding();
      await released;
    });
    await held;
    try {
      enqueueRows(sink, rows);
      const code = await writes.flush().then(
        () => "committed",
        (error: { code?: string }) => error.code,
      );
      expect(code).toBe("55P03");
      expect(await countsFor("rq_locked")).toMatchObject({ requests: 0, ledger: 0 });
      expect(writes.stats().buffered).toEqual({ requests: 1, ledger_entries: 1 });
    } finally {
      release();
      await holder;
    }
    await writes.flush();
    expect(await countsFor("rq_locked")).toMatchObject({ requests: 1, ledger: 1 });
    const [wallet] = await sql.unsafe("select balance_micro_usd::int as b from wallets where account_id = $1", [account]);
    expect(wallet!.b).toBe(1000 - 25);
    await writes.stop();
    await impatient.end({ timeout: 1 });
  });

  test("on two write connections, each request's two rows commit in one transaction, and each account's wallet moves on one connection", async () => {
    // Two accounts on different shards.
    const accounts: string[] = [];
    for (let i = 0; accounts.length < 2; i++) {
      const account = `acct_shard_${i}`;
      if (accounts.length === 0 || shardIndex(account, 2) !== shardIndex(accounts[0]!, 2)) accounts.push(account);
    }
    for (const account of accounts) {
      await sql.unsafe("insert into accounts (id, email) values ($1, $2)", [account, `${account}@example.test`]);
      await sql.unsafe("insert into wallets (account_id, balance_micro_usd) values ($1, 1000)", [account]);
    }
    const writes = new ShardedWriteBuffer(sql, 2, { flushIntervalMs: 60_000 });
    const sink = createMeteringSink(writes, { copy: true });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = `rq_shard_${i}`;
      ids.push(id);
      enqueueRows(sink, rowsFor(id, accounts[i % 2]));
    }
    await writes.flush();
    await writes.stop();
    const transactions = await sql.unsafe(
      `select r.id, r.account_id, r.xmin::text as request, l.xmin::text as ledger
         from requests r join ledger_entries l on l.request_record_id = r.id
        where r.id = any($1) order by r.id`,
      [ids],
    );
    expect(transactions).toHaveLength(6);
    for (const row of transactions) expect(row.ledger).toBe(row.request);
    const byAccount = new Map<string, Set<string>>();
    for (const row of transactions) byAccount.set(row.account_id, (byAccount.get(row.account_id) ?? new Set()).add(row.request));
    expect([...byAccount.values()].map((set) => set.size)).toEqual([1, 1]);
    expect(new Set(transactions.map((row) => row.request)).size).toBe(2);
    const balances = await sql.unsafe("select balance_micro_usd::int as b from wallets where account_id = any($1)", [accounts]);
    expect(balances.map((row) => row.b)).toEqual([1000 - 75, 1000 - 75]);
  });
});

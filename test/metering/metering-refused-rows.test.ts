import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { Sql } from "../../src/db/connect-database";
import { createMeteringSink } from "../../src/metering/metering-sink";
import type { LedgerRow, MeteringSink, RequestRow } from "../../src/metering/metering-rows";
import type { UsageFrameRecord } from "../../src/db/usage-evidence-shape";
import { WriteBuffer } from "../../src/db/batch/write-buffer";
import { Metrics } from "../../src/observability/metrics";
import { createMigratedTestDatabase, type MigratedTestDatabase } from "../support/test-database";

/**
 * The metering tables against text PostgreSQL cannot store, and rows it refuses for
 * other reasons: in one batch with other accounts' rows, which must commit.
 */
let sql: Sql;
let database: MigratedTestDatabase;
beforeAll(async () => {
  database = await createMigratedTestDatabase();
  sql = database.sql;
});
afterAll(() => database.close({ timeout: 1 }));

const CREDIT = 1_000_000;
const CHARGE = 25;
const NUL_AND_SURROGATES = "\u0000\ud800x\udc00\u0000";
const MEGABYTE = "m".repeat(1 << 20);
/** A megabyte that does not compress: cut to 4,096 characters, still too large for a B-tree entry. */
const RANDOM_MEGABYTE = randomBytes(786_432).toString("base64");

async function createAccount(account: string, leaseAmount = 0): Promise<void> {
  await sql.unsafe("insert into accounts (id, email) values ($1, $2)", [account, `${account}@example.test`]);
  await sql.unsafe("insert into wallets (account_id, balance_micro_usd, reserved_micro_usd) values ($1, $2, $3)", [account, CREDIT, leaseAmount]);
  if (leaseAmount > 0) await sql.unsafe("insert into wallet_leases (id, account_id, amount_micro_usd, expires_at) values ($1, $2, $3, now() + interval '1 hour')", [`wl_${account}`, account, leaseAmount]);
}

/**
 * One request's two rows (its record, with its usage frames and charge audit, and its
 * ledger entry). `text(field)` gives every free-text value — ids, model, provider ids,
 * finish reason, warnings (with an upstream's error text), usage evidence, pricing — so a
 * test can poison all of them; `id` is the record id.
 */
function requestRows(id: string, account: string, text: (field: string) => string = (field) => field) {
  const usage = { cache_read_tokens: 0, cache_write_tokens: 0, completion_tokens: 7, prompt_tokens: 11, reasoning_tokens: 0, web_search_count: 0 };
  const frame = { account_label: "platform", attempt_ordinal: 1, frame_kind: text("usage"), frame_ordinal: 1, provider_id: text("provider"), provider_model_id: text("provider-model"), usage } as unknown as UsageFrameRecord;
  const request: RequestRow = {
    id, request_id: text("client-request-id"), account_id: account, namespace_id: text("ns"), api_key_id: text("key"), oauth_token_id: null, status: "failed", status_code: 502,
    billing_status: "computed", model_id: text("provider/model"), provider_id: text("provider"), provider_model_id: text("provider-model"), routing_profile: text("balanced"),
    funding_source: "cloud_credit", streamed: true, finish_reason: `other(${text("raw finish")})`, first_token_kind: text("text"), prompt_tokens: 11, completion_tokens: 7,
    reasoning_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, final_charge_micro_usd: CHARGE, request_duration_ms: 12, upstream_duration_ms: 10,
    generation_duration_ms: null, ttft_ms: 4, used_capabilities: [text("tools")],
    usage_evidence: {
      source: "provider_reported",
      effective_usage: { ...usage, media_input_count: 0, media_output_count: 0 },
      raw_usage: usage,
      estimator: { chars_per_token: 4, version: text("chars4-v1") },
      raw_usage_frames: [frame],
    },
    warnings: [{ code: text("dropped_field"), field: text("field"), message: text("upstream error: overloaded") }, { [text("key")]: text("value") }],
    attempts: [{ ordinal: 1, provider_id: text("provider"), model_id: text("provider/model"), funding_source: "cloud_credit", outcome: "provider_error", status_code: 502, error: text("upstream_error"), duration_ms: 10, ttft_ms: null }],
    charge_audit: { pricing: { input: text("0.15"), note: text("tier") }, buckets: { [text("output")]: 7 } },
    created_at: "2026-11-22T10:00:00.000Z", completed_at: "2026-11-22T10:00:01.000Z",
  };
  const ledger: LedgerRow = { id: `le_${id}`, account_id: account, namespace_id: text("ns"), request_record_id: id, kind: "usage", amount_micro_usd: -CHARGE, released_micro_usd: CHARGE, lease_id: `wl_${account}` };
  return { request, ledger };
}

type RequestRows = ReturnType<typeof requestRows>;

function enqueue(sink: MeteringSink, rows: RequestRows): void {
  sink.request(rows.request);
  sink.ledger(rows.ledger);
}

async function wallet(account: string) {
  const [row] = await sql.unsafe("select balance_micro_usd::int as balance, reserved_micro_usd::int as reserved from wallets where account_id = $1", [account]);
  const [lease] = await sql.unsafe("select amount_micro_usd::int as amount from wallet_leases where account_id = $1", [account]);
  return { balance: row!.balance as number, reserved: row!.reserved as number, lease: lease?.amount as number | undefined };
}

async function countsFor(id: string) {
  const [row] = await sql.unsafe(
    `select (select count(*)::int from requests where id = $1) as requests,
            (select count(*)::int from ledger_entries where request_record_id = $1) as ledger`,
    [id],
  );
  return { ...row };
}

/** Every text and JSON value stored for an account, as PostgreSQL reads it back — JSON as jsonb, which refuses \u0000. */
async function storedText(account: string): Promise<string[]> {
  const rows = await sql.unsafe(
    `select to_jsonb(r) - 'usage_evidence' - 'warnings' - 'attempts' - 'charge_audit' as plain, r.usage_evidence::jsonb as evidence, r.warnings::jsonb as warnings, r.attempts::jsonb as attempts, r.charge_audit::jsonb as audit from requests r where account_id = $1
     union all select to_jsonb(l), null, null, null, null from ledger_entries l where account_id = $1`,
    [account],
  );
  const strings: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === "string") strings.push(value);
    else if (Array.isArray(value)) value.forEach(collect);
    else if (value !== null && typeof value === "object") for (const [key, item] of Object.entries(value)) (strings.push(key), collect(item));
  };
  for (const row of rows) collect([row.plain, row.evidence, row.warnings, row.attempts, row.audit]);
  return strings;
}

describe("metering rows whose every text field is unstorable, in one batch with other accounts' rows", () => {
  for (const copy of [true, false]) {
    test(`${copy ? "COPY" : "insert"}: the others commit at once; NUL, lone surrogates and megabyte strings are stored made storable; rows refused even so are dead-lettered, their reservation released`, async () => {
      const tag = copy ? "copy" : "insert";
      const [poisoned, good1, good2] = [`acct_poison_${tag}`, `acct_good1_${tag}`, `acct_good2_${tag}`];
      for (const account of [poisoned, good1, good2]) await createAccount(account, 1_000);
      const metrics = new Metrics();
      const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000, metrics });
      const sink = createMeteringSink(writes, { copy });

      const before = requestRows(`rq_good1_${tag}`, good1);
      const nul = requestRows(`rq_nul${NUL_AND_SURROGATES}_${tag}`, poisoned, (field) => `${field}${NUL_AND_SURROGATES}`);
      const huge = requestRows(`rq_huge_${tag}`, poisoned, (field) => `${field}${MEGABYTE}${NUL_AND_SURROGATES}`);
      // A megabyte record id: cut to 4,096 characters it is still too large for a B-tree entry (54000).
      const hugeIds = requestRows(`rq_${tag}_${RANDOM_MEGABYTE}\u0000`, poisoned, (field) => `${field}${MEGABYTE}`);
      const after = requestRows(`rq_good2_${tag}`, good2);
      for (const rows of [before, nul, huge, hugeIds, after]) enqueue(sink, rows);

      await writes.flush();

      // The other accounts' requests: written and charged, their reservation released.
      for (const [rows, account] of [[before, good1], [after, good2]] as const) {
        expect(await countsFor(rows.request.id)).toEqual({ requests: 1, ledger: 1 });
        expect(await wallet(account)).toEqual({ balance: CREDIT - CHARGE, reserved: 1_000 - CHARGE, lease: 1_000 - CHARGE });
      }
      // NUL and lone surrogates: stored, each replaced with U+FFFD, records and charges complete.
      expect(await countsFor(`rq_nul\ufffd\ufffdx\ufffd\ufffd_${tag}`)).toEqual({ requests: 1, ledger: 1 });
      // Megabyte strings: stored, each cut to 4,096 characters.
      expect(await countsFor(`rq_huge_${tag}`)).toEqual({ requests: 1, ledger: 1 });
      const [hugeRecord] = await sql.unsafe("select model_id, finish_reason, warnings from requests where id = $1", [`rq_huge_${tag}`]);
      expect((hugeRecord!.model_id as string).length).toBe(4_096);
      expect((hugeRecord!.model_id as string).endsWith("m…")).toBe(true);
      // Five megabyte strings (keys included), each cut to 4,096.
    expect((hugeRecord!.warnings as string).length).toBeLessThan(6 * 4_096);
      const stored = await storedText(poisoned);
      expect(stored.filter((value) => value.includes("\u0000") || value.toWellFormed() !== value)).toEqual([]);
      expect(Math.max(...stored.map((value) => value.length))).toBeLessThanOrEqual(4_096);
      expect(stored.filter((value) => value.includes("\ufffd")).length).toBeGreaterThan(20);

      // The megabyte record id cannot be stored at all: its two rows are dead-lettered…
      const lettered = await sql.unsafe("select table_name, request_record_id, row_values, error_code from metering_dead_letters where request_record_id like $1 order by id", [`rq_${tag}_${RANDOM_MEGABYTE.slice(0, 20)}%`]);
      expect(lettered.map((letter) => letter.table_name).sort()).toEqual(["ledger_entries", "requests"]);
      for (const letter of lettered) {
        expect(letter.error_code).toBe("54000");
        expect((letter.request_record_id as string).length).toBe(4_096);
        // The values stay visible, escaped, each string cut at 16 KiB.
        const values = JSON.parse(letter.row_values as string) as Record<string, unknown>;
        const id = values[letter.table_name === "requests" ? "id" : "request_record_id"] as string;
        expect(id).toBe(`rq_${tag}_${RANDOM_MEGABYTE.slice(0, 16_384 - `rq_${tag}_`.length - 1)}…`);
        expect(Math.max(...(letter.row_values as string).split('"').map((piece) => piece.length))).toBeLessThanOrEqual(16_384);
      }
      // … and their charge released from the lease and the reservation without a debit.
      expect(await wallet(poisoned)).toEqual({ balance: CREDIT - 2 * CHARGE, reserved: 1_000 - 3 * CHARGE, lease: 1_000 - 3 * CHARGE });

      expect(writes.stats()).toMatchObject({
        buffered: { requests: 0, ledger_entries: 0 },
        deadLettered: { requests: 1, ledger_entries: 1 },
      });
      for (const table of ["requests", "ledger_entries"]) {
        expect(metrics.render()).toContain(`switchyard_metering_dead_letters_total{table="${table}"} 1\n`);
      }
      await writes.stop();
    });
  }
});

describe("metering rows refused for a reason no sanitizing prevents", () => {
  test("a record whose token count overflows its column is dead-lettered alone: its request's charge still commits, and so does every other request of the batch", async () => {
    const [bad, good] = ["acct_overflow", "acct_overflow_neighbour"];
    for (const account of [bad, good]) await createAccount(account, 1_000);
    const metrics = new Metrics();
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000, metrics });
    const sink = createMeteringSink(writes, { copy: true });
    const goods = Array.from({ length: 10 }, (_, i) => requestRows(`rq_neighbour_${i}`, good));
    const overflowing = requestRows("rq_overflow", bad);
    overflowing.request.prompt_tokens = 2 ** 31; // requests.prompt_tokens is an integer: 22003
    goods.slice(0, 5).forEach((rows) => enqueue(sink, rows));
    enqueue(sink, overflowing);
    goods.slice(5).forEach((rows) => enqueue(sink, rows));

    await writes.flush();

    for (const rows of goods) expect(await countsFor(rows.request.id)).toEqual({ requests: 1, ledger: 1 });
    expect(await wallet(good)).toEqual({ balance: CREDIT - 10 * CHARGE, reserved: 1_000 - 10 * CHARGE, lease: 1_000 - 10 * CHARGE });
    // Only the record is refused (its frames and charge audit kept in the dead letter); the charge itself is written.
    expect(await countsFor("rq_overflow")).toEqual({ requests: 0, ledger: 1 });
    expect(await wallet(bad)).toEqual({ balance: CREDIT - CHARGE, reserved: 1_000 - CHARGE, lease: 1_000 - CHARGE });
    const letters = await sql.unsafe("select table_name, request_record_id, row_values, error_code, error_message from metering_dead_letters where request_record_id = 'rq_overflow'");
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ table_name: "requests", error_code: "22003" });
    expect(letters[0]!.error_message).toContain("out of range");
    expect(JSON.parse(letters[0]!.row_values as string)).toEqual(JSON.parse(JSON.stringify(overflowing.request)));
    expect(metrics.render()).toContain('switchyard_metering_dead_letters_total{table="requests"} 1\n');
    expect(writes.stats()).toMatchObject({ deadLettered: { requests: 1, ledger_entries: 0 }, written: { requests: 10, ledger_entries: 11 } });
    await writes.stop();
  });

  test("a ledger entry the database refuses is dead-lettered; it debits nothing, but its reservation leaves the lease and the wallet", async () => {
    const account = "acct_bad_ledger";
    await createAccount(account, 1_000);
    const metrics = new Metrics();
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000, metrics });
    const sink = createMeteringSink(writes, { copy: true });
    const fine = requestRows("rq_fine_ledger", account);
    const refused = requestRows("rq_refused_ledger", account);
    (refused.ledger as { kind: string }).kind = "bogus"; // the kind check constraint: 23514
    enqueue(sink, fine);
    enqueue(sink, refused);
    await writes.flush();
    expect(await countsFor("rq_fine_ledger")).toEqual({ requests: 1, ledger: 1 });
    expect(await countsFor("rq_refused_ledger")).toEqual({ requests: 1, ledger: 0 });
    expect(await wallet(account)).toEqual({ balance: CREDIT - CHARGE, reserved: 1_000 - 2 * CHARGE, lease: 1_000 - 2 * CHARGE });
    const [letter] = await sql.unsafe("select table_name, error_code from metering_dead_letters where request_record_id = 'rq_refused_ledger'");
    expect(letter).toMatchObject({ table_name: "ledger_entries", error_code: "23514" });
    expect(metrics.render()).toContain('switchyard_metering_dead_letters_total{table="ledger_entries"} 1\n');
    await writes.stop();
  });
});

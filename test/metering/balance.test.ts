import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type postgres from "postgres";
import type { InferenceHarness } from "../support/inference-harness";
import { DEFAULT_MAX_OUTPUT_TOKENS } from "../../src/admission/cost-ceiling";
import { PROTOCOLS, UPSTREAM, catalogPricing, flush, handCharge, normaliseRow, returnIdleReservations, send, wallet, type Protocol, startMeteringHarness, stopMeteringHarness } from "./metering-support";

let harness: InferenceHarness;
let sql: postgres.Sql;
beforeAll(async () => {
  ({ harness, sql } = await startMeteringHarness());
});
afterAll(() => stopMeteringHarness(harness));

const upstreamCalls = () => harness.mocks.list.reduce((sum, mock) => sum + mock.requests.length, 0);

describe("wallet settlement", () => {
  test("after N requests the balance fell by exactly the sum of final charges, nothing stays reserved, one usage entry and one audit row per request", async () => {
    const credit = 5_000_000;
    const account = await harness.server.createAccount(undefined, credit);
    const plan: Array<[Protocol, Protocol, boolean]> = [
      ["openai-chat", "openai-chat", false],
      ["openai-chat", "anthropic-messages", true],
      ["openai-responses", "openai-responses", true],
      ["openai-responses", "google-generate-content", false],
      ["anthropic-messages", "anthropic-messages", false],
      ["anthropic-messages", "openai-chat", true],
      ["google-generate-content", "google-generate-content", true],
      ["google-generate-content", "openai-responses", false],
    ];
    const requestIds: string[] = [];
    for (const [index, [client, upstream, stream]] of plan.entries()) {
      const target = UPSTREAM[upstream];
      harness.mocks[target.mock].queueScenarios({ kind: "text", usage: { prompt: 100 * (index + 1), completion: 37 * (index + 1), cacheRead: 10 * index } });
      const sent = await send(harness.server.url, account.apiKey, client, target.model, { stream });
      expect(sent.status).toBe(200);
      requestIds.push(sent.requestId);
    }
    await flush(harness);

    const records = (await sql`select * from requests where account_id = ${account.accountId}`).map(normaliseRow);
    expect(records.map((r) => r.request_id).sort()).toEqual([...requestIds].sort());
    // Each charge is the serving endpoint's catalog price of what the mock reported.
    for (const [index, [, upstream]] of plan.entries()) {
      const record = records.find((r) => r.request_id === requestIds[index])!;
      const prompt = 100 * (index + 1);
      const cacheRead = 10 * index;
      expect(record.final_charge_micro_usd).toBe(handCharge(catalogPricing(upstream), { uncachedInput: prompt - cacheRead, cacheRead, output: 37 * (index + 1) }));
    }
    const total = records.reduce((sum, r) => sum + r.final_charge_micro_usd, 0);
    expect(total).toBeGreaterThan(0);

    const settled = await wallet(sql, account.accountId);
    expect(settled.balance).toBe(credit - total);
    // Whatever admission still holds for the account never exceeds what it has.
    expect(settled.reserved).toBeLessThanOrEqual(settled.balance);
    await returnIdleReservations(harness);
    expect(await wallet(sql, account.accountId)).toEqual({ balance: credit - total, reserved: 0 });

    const ledger = (await sql`select * from ledger_entries where account_id = ${account.accountId}`).map(normaliseRow);
    const usage = ledger.filter((e) => e.kind === "usage");
    expect(usage).toHaveLength(plan.length);
    for (const record of records) {
      const entries = usage.filter((e) => e.request_record_id === record.id);
      expect(entries).toHaveLength(1);
      expect(entries[0].amount_micro_usd).toBe(-record.final_charge_micro_usd);
      // It released what admission reserved (at least the charge itself).
      expect(entries[0].released_micro_usd).toBeGreaterThanOrEqual(record.final_charge_micro_usd);
    }
    expect(ledger.filter((e) => e.kind !== "usage")).toEqual([expect.objectContaining({ kind: "credit", amount_micro_usd: credit })]);
    // The ledger explains the balance.
    expect(ledger.reduce((sum, e) => sum + e.amount_micro_usd, 0)).toBe(credit - total);

    // Every charged record keeps what its charge was computed from.
    for (const record of records) expect(record.charge_audit).toEqual({ pricing: expect.any(Object), buckets: expect.objectContaining({ output: expect.any(Number) }) });
  });
});

describe("admission against a small balance", () => {
  // A 400-byte prompt in one message bounds the prompt at 64 + 16 + 8 + 400 = 488 tokens
  // (request, message and part allowances plus its bytes); max_tokens 1000 on gpt-4o-mini
  // (0.15 in, 0.6 out): reservation = ceil(488 × 0.15 + 1000 × 0.6) = ceil(673.2) = 674 µUSD.
  const PROMPT = "x".repeat(400);
  const MAX_TOKENS = 1000;
  const RESERVATION = 674;
  const AFFORDABLE = 3;
  // The mock's default usage (12 prompt, 5 completion): 12 × 0.15 + 5 × 0.6 = 4.8 → 5 µUSD.
  const CHARGE = 5;

  test("20 concurrent requests on credit for 3 reservations: 3 are served, 17 get 402 before any upstream call, and the balance stays ≥ 0", async () => {
    const credit = AFFORDABLE * RESERVATION + 100;
    const account = await harness.server.createAccount(undefined, credit);
    const upstreamBefore = upstreamCalls();
    const openaiBefore = harness.mocks.openai.requests.length;
    // "@slow": the upstream holds each admitted request for 1 s, so every reservation is
    // still held while the others are being admitted.
    const model = "mock-openai/gpt-4o-mini@slow";
    const inFlight = Array.from({ length: 20 }, () =>
      send(harness.server.url, account.apiKey, "openai-chat", model, { prompt: PROMPT, maxTokens: MAX_TOKENS }),
    );
    await Bun.sleep(500);
    // Mid-flight: the admitted requests' reservations are held, and never more than the balance.
    const midFlight = await wallet(sql, account.accountId);
    expect(midFlight.balance).toBe(credit);
    expect(midFlight.reserved).toBeGreaterThanOrEqual(AFFORDABLE * RESERVATION);
    expect(midFlight.reserved).toBeLessThanOrEqual(credit);
    const results = await Promise.all(inFlight);

    const served = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(served).toHaveLength(AFFORDABLE);
    expect(refused).toHaveLength(20 - AFFORDABLE);
    for (const r of refused) expect(r.json.error).toMatchObject({ type: "payment_required", code: "payment_required" });
    // Refused requests never reached an upstream.
    expect(harness.mocks.openai.requests.length - openaiBefore).toBe(AFFORDABLE);
    expect(upstreamCalls() - upstreamBefore).toBe(AFFORDABLE);

    await flush(harness);
    await returnIdleReservations(harness);
    const after = await wallet(sql, account.accountId);
    expect(after).toEqual({ balance: credit - AFFORDABLE * CHARGE, reserved: 0 });
    expect(after.balance).toBeGreaterThanOrEqual(0);
    const records = (await sql`select status, status_code, final_charge_micro_usd from requests where account_id = ${account.accountId}`).map(normaliseRow);
    expect(records.filter((r) => r.status === "succeeded" && r.final_charge_micro_usd === CHARGE)).toHaveLength(AFFORDABLE);
    expect(records.filter((r) => r.status === "failed" && r.status_code === 402 && r.final_charge_micro_usd === 0)).toHaveLength(20 - AFFORDABLE);
  });

  test("a request whose reservation exceeds the balance by 1 µUSD is refused; at exactly the balance it is admitted", async () => {
    const account = await harness.server.createAccount(undefined, RESERVATION - 1);
    const refused = await send(harness.server.url, account.apiKey, "openai-chat", "mock-openai/gpt-4o-mini", { prompt: PROMPT, maxTokens: MAX_TOKENS });
    expect(refused.status).toBe(402);
    await harness.server.api("POST", `/admin/accounts/${account.accountId}/credits`, { token: "test-admin-token", body: { amount_micro_usd: 1 } });
    const admitted = await send(harness.server.url, account.apiKey, "openai-chat", "mock-openai/gpt-4o-mini", { prompt: PROMPT, maxTokens: MAX_TOKENS });
    expect(admitted.status).toBe(200);
    await flush(harness);
    await returnIdleReservations(harness);
    expect(await wallet(sql, account.accountId)).toEqual({ balance: RESERVATION - CHARGE, reserved: 0 });
  });

  test("a request whose most expensive outcome costs exactly the balance is admitted (no float noise in the reservation)", async () => {
    // o4-mini (1.1 in, 4.4 out): 82 bytes → 64 + 16 + 8 + 82 = 170 prompt tokens at most,
    // max_output_tokens 100: 170 × 1.1 + 100 × 4.4 = 627 µUSD exactly (627.0000000000001 in floating point).
    const account = await harness.server.createAccount(undefined, 627);
    const before = harness.mocks.responses.requests.length;
    const sent = await send(harness.server.url, account.apiKey, "openai-responses", "mock-responses/o4-mini", { prompt: "y".repeat(82), maxTokens: 100 });
    expect(sent.status).toBe(200);
    expect(harness.mocks.responses.requests.length - before).toBe(1);
    await flush(harness);
    await returnIdleReservations(harness);
    // Default mock usage 12 + 5: 12 × 1.1 + 5 × 4.4 = 35.2 → 35 µUSD.
    expect(await wallet(sql, account.accountId)).toEqual({ balance: 627 - 35, reserved: 0 });
  });

  const REFUSAL_SHAPE: Record<Protocol, (body: any) => void> = {
    "openai-chat": (body) => expect(body.error).toMatchObject({ type: "payment_required", code: "payment_required", message: expect.any(String) }),
    "openai-responses": (body) => expect(body.error).toMatchObject({ type: "payment_required", code: "payment_required", message: expect.any(String) }),
    "anthropic-messages": (body) => expect(body).toMatchObject({ type: "error", error: { type: "billing_error", message: expect.any(String) } }),
    "google-generate-content": (body) => expect(body.error).toMatchObject({ code: 402, status: "FAILED_PRECONDITION", message: expect.any(String) }),
  };

  for (const client of PROTOCOLS) {
    test(`no balance at all: ${client} gets 402 in its own protocol, no upstream call, a failed record and no ledger entry`, async () => {
      const account = await harness.server.createAccount(undefined, 0);
      const before = upstreamCalls();
      for (const stream of [false, true]) {
        const sent = await send(harness.server.url, account.apiKey, client, UPSTREAM[client].model, { stream });
        expect(sent.status).toBe(402);
        expect(sent.headers.get("content-type")).toContain("application/json");
        REFUSAL_SHAPE[client](sent.json);
      }
      expect(upstreamCalls()).toBe(before);
      await flush(harness);
      const records = (await sql`select id, status, status_code, billing_status from requests where account_id = ${account.accountId}`).map(normaliseRow);
      expect(records).toHaveLength(2);
      for (const record of records) expect(record).toMatchObject({ status: "failed", status_code: 402, billing_status: "not_charged" });
      const count = (await sql`select count(*)::int as count from ledger_entries where account_id = ${account.accountId}`)[0]!.count;
      expect(count).toBe(0);
      expect(await wallet(sql, account.accountId)).toEqual({ balance: 0, reserved: 0 });
    });
  }
});

describe("the output limit admission reserves for", () => {
  // The mocks' catalog states no max_output_tokens, so a request without a limit is
  // reserved for the default and the default is sent: the upstream cannot bill more.
  const lastBody = (mock: { requests: Array<{ body: unknown }> }) => mock.requests.at(-1)!.body as Record<string, any>;

  test("a chat request without max tokens is sent upstream with the reserved default; one with a limit keeps its own", async () => {
    const account = await harness.server.createAccount(undefined, 10_000_000);
    expect((await send(harness.server.url, account.apiKey, "openai-chat", "mock-openai/gpt-4o-mini", { prompt: "hi" })).status).toBe(200);
    expect(lastBody(harness.mocks.openai).max_completion_tokens).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect((await send(harness.server.url, account.apiKey, "openai-chat", "mock-openai/gpt-4o-mini", { prompt: "hi", maxTokens: 50 })).status).toBe(200);
    expect(lastBody(harness.mocks.openai).max_completion_tokens).toBe(50);
  });

  test("so does a generateContent request towards Responses, and the reservation covers that output", async () => {
    // 88 + 2 prompt tokens at 0.25 plus 4096 output tokens at 2 on gpt-5-mini: ceil(22.5 + 8192) = 8215.
    const account = await harness.server.createAccount(undefined, 8_214);
    const refused = await send(harness.server.url, account.apiKey, "google-generate-content", "mock-responses/gpt-5-mini", { prompt: "hi" });
    expect(refused.status).toBe(402);
    expect(refused.text).toContain("can cost up to 8215 micro-USD");
    await harness.server.api("POST", `/admin/accounts/${account.accountId}/credits`, { token: "test-admin-token", body: { amount_micro_usd: 1 } });
    expect((await send(harness.server.url, account.apiKey, "google-generate-content", "mock-responses/gpt-5-mini", { prompt: "hi" })).status).toBe(200);
    expect(lastBody(harness.mocks.responses).max_output_tokens).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
  });
});

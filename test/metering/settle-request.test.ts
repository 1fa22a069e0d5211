import { describe, expect, test } from "bun:test";
import type { AttemptRecord } from "../../src/routing/attempt-record";
import type { LedgerRow, MeteringSink, RequestRow } from "../../src/metering/metering-rows";
import { arrivingRequest, type RequestOutcome } from "../../src/metering/request-outcome";
import { settleRequest } from "../../src/metering/settle-request";
import type { AttemptCandidate } from "../../src/routing/attempt-candidate";

const candidate: AttemptCandidate = {
  protocol: "openai-chat",
  baseUrl: "http://upstream.example/v1",
  providerModelId: "m",
  apiKey: "k",
  modelId: "acme/m",
  providerId: "acme",
  statsKey: "acme/m",
  pricing: { input: 1, output: 2, contextTiers: [] },
  limits: {},
  funding: "cloud_credit",
  routingProfile: "balanced",
};

/** A served request whose upstream reported `prompt` + `completion` tokens (1 and 2 µUSD each). */
function served(prompt: number, completion: number, reserved: number, leaseId: string | undefined): RequestOutcome {
  const now = performance.now();
  const attempt: AttemptRecord = {
    ordinal: 1,
    candidate,
    outcome: "success",
    status: 200,
    signals: [{ usageFrames: [{ promptTokens: prompt, completionTokens: completion }], outputBytes: 0, toolCalls: 0, finish: { reason: "stop" } }],
    startedAt: now - 10,
    endedAt: now,
  };
  const principal = { kind: "api_key" as const, id: "k_1", accountId: "acct_1", namespaceId: "ns_1", scopes: ["inference:invoke"], oauthClientId: null, expiresAt: null };
  return {
    ...arrivingRequest({ requestId: "req-1", principal, clientProtocol: "openai-chat", createdAt: new Date(), startedAt: now - 20 }),
    status: "succeeded",
    statusCode: 200,
    attempts: [attempt],
    serving: attempt,
    reservedMicroUsd: reserved,
    ...(leaseId === undefined ? {} : { leaseId }),
  };
}

function recordingSink() {
  const rows = { requests: [] as RequestRow[], ledger: [] as LedgerRow[] };
  const sink: MeteringSink = {
    request: (row) => rows.requests.push(row),
    ledger: (row) => rows.ledger.push(row),
  };
  return { rows, sink };
}

describe("settleRequest against the admission reservation", () => {
  test("a charge within the reservation is debited as computed", () => {
    const { rows, sink } = recordingSink();
    const settlement = settleRequest(served(10, 5, 100, "wl_1"), sink);
    expect(settlement).toMatchObject({ chargeMicroUsd: 20 });
    expect(settlement.uncappedMicroUsd).toBeUndefined();
    expect(rows.ledger).toEqual([expect.objectContaining({ amount_micro_usd: -20, released_micro_usd: 20, lease_id: "wl_1" })]);
    expect(rows.requests[0]!.warnings).toEqual([]);
  });

  test("usage above the reservation (an upstream reporting more than it could bill) is capped at it: the wallet cannot go negative", () => {
    const { rows, sink } = recordingSink();
    const settlement = settleRequest(served(100, 50, 120, "wl_1"), sink);
    expect(settlement).toMatchObject({ chargeMicroUsd: 120, uncappedMicroUsd: 200 });
    expect(rows.ledger).toEqual([expect.objectContaining({ kind: "usage", amount_micro_usd: -120, released_micro_usd: 120, lease_id: "wl_1" })]);
    // The record keeps the reported usage, the pricing and buckets the uncapped charge was computed from, and says what was computed.
    expect(rows.requests[0]).toMatchObject({ prompt_tokens: 100, completion_tokens: 50, final_charge_micro_usd: 120 });
    expect(rows.requests[0]!.charge_audit).toEqual({ pricing: candidate.pricing, buckets: expect.objectContaining({ uncachedInput: 100, output: 50 }) });
    expect(rows.requests[0]!.warnings).toEqual([expect.objectContaining({ code: "charge_capped", message: expect.stringContaining("200") })]);
  });

  test("a request admitted without a reservation (metering off, nothing leased) is not capped", () => {
    const { sink } = recordingSink();
    expect(settleRequest(served(100, 50, 0, undefined), sink)).toMatchObject({ chargeMicroUsd: 200 });
  });
});

describe("settleRequest on an upper-bound estimate", () => {
  const bounds = { promptTokens: () => 300, completionTokens: () => 1_000 };

  test("a whole answer read in full without a usage report is billed its output's bytes, not the output ceiling", () => {
    const outcome = served(0, 0, 1_000_000, undefined);
    outcome.serving!.signals = [{ usageFrames: [], outputBytes: 40, toolCalls: 0, finish: { reason: "stop" } }];
    outcome.bounds = bounds;
    const { rows, sink } = recordingSink();
    settleRequest(outcome, sink);
    expect(rows.requests[0]).toMatchObject({ prompt_tokens: 300, completion_tokens: 40, final_charge_micro_usd: 300 * 1 + 40 * 2 });
  });

  test("an attempt whose whole body never arrived (cut) is billed the output ceiling: it was generated before it was sent", () => {
    const outcome = served(10, 5, 1_000_000, undefined);
    const cut: AttemptRecord = { ...outcome.serving!, ordinal: 1, outcome: "provider_error", signals: [] };
    outcome.serving!.ordinal = 2;
    outcome.attempts = [cut, outcome.serving!];
    outcome.bounds = bounds;
    const { rows, sink } = recordingSink();
    settleRequest(outcome, sink);
    expect(rows.requests[0]!.final_charge_micro_usd).toBe(10 * 1 + 5 * 2 + (300 * 1 + 1_000 * 2));
  });
});

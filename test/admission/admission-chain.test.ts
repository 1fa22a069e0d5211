import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AdmissionChain } from "../../src/admission/admission-chain";
import { isRefusal, NOTHING_HELD, type AdmissionCheck } from "../../src/admission/admission-check";
import { GuardrailCheck } from "../../src/admission/guardrail-check";
import { PolicyCounters } from "../../src/admission/policy-counters";
import type { Sql } from "../../src/db/connect-database";
import { NO_POLICY } from "../../src/policy/compose-policies";
import { createMigratedTestDatabase, type MigratedTestDatabase, BIGINT_AS_NUMBER } from "../support/test-database";
import { bound, effective, request } from "./admission-support";

let database: MigratedTestDatabase;
let sql: Sql;
let statements = 0;

beforeAll(async () => {
  database = await createMigratedTestDatabase({ debug: () => void statements++, types: BIGINT_AS_NUMBER });
  sql = database.sql;
});
afterAll(() => database.close());

async function reserved(key: string): Promise<{ reserved: number; requests: number } | undefined> {
  const [row] = await sql`select reserved_micro_usd as reserved, window_requests as requests from admission_counters where counter_key = ${key}`;
  return row as { reserved: number; requests: number } | undefined;
}

describe("the admission chain", () => {
  test("a request with no policy is admitted before any check runs", async () => {
    let calls = 0;
    const counting: AdmissionCheck = { name: "counting", admit: async () => (calls++, NOTHING_HELD) };
    const chain = new AdmissionChain([counting, new PolicyCounters(sql)]);
    const before = statements;
    expect(await chain.admit(request(NO_POLICY))).toBe(NOTHING_HELD);
    expect(calls).toBe(0);
    expect(statements).toBe(before);
  });

  test("a guardrail refusal comes before the counters, which then take nothing", async () => {
    const chain = new AdmissionChain([new GuardrailCheck(), new PolicyCounters(sql)]);
    const policy = effective(
      bound("pol_chain_guard", "guardrail", { allow_streaming: false }),
      bound("pol_chain_rate", "rate_limit", { window_secs: 60, max_requests: 5 }),
    );
    const before = statements;
    expect(await chain.admit(request(policy, { stream: true }))).toMatchObject({ status: 403, policy: { policyId: "pol_chain_guard" } });
    expect(statements).toBe(before);
    const grant = await chain.admit(request(policy, { stream: false }));
    expect(isRefusal(grant)).toBe(false);
    expect(await reserved(policy.rateLimits[0]!.counterKey)).toMatchObject({ requests: 1 });
  });

  test("a refusal by a later check releases what earlier checks granted", async () => {
    // Counters first on purpose: the guardrail after them refuses.
    const chain = new AdmissionChain([new PolicyCounters(sql), new GuardrailCheck()]);
    const policy = effective(
      bound("pol_release_budget", "budget", { window: "day", limit_micro_usd: 1_000 }),
      bound("pol_release_rate", "rate_limit", { window_secs: 60, max_requests: 5 }),
      bound("pol_release_guard", "guardrail", { model_deny: ["openai/gpt-4o-mini"] }),
    );
    expect(await chain.admit(request(policy))).toMatchObject({ status: 403 });
    expect(await reserved(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 0 });
    expect(await reserved(policy.rateLimits[0]!.counterKey)).toMatchObject({ requests: 0 });
  });

  test("the chain's grant settles every check's grant", async () => {
    const chain = new AdmissionChain([new GuardrailCheck(), new PolicyCounters(sql)]);
    const policy = effective(
      bound("pol_settle_budget", "budget", { window: "month", limit_micro_usd: 1_000 }),
      bound("pol_settle_guard", "guardrail", { max_request_tokens: 100 }),
    );
    const grant = await chain.admit(request(policy, { maxTokens: 50, costCeilingMicroUsd: 400 }));
    if (isRefusal(grant)) throw new Error(grant.message);
    expect(await reserved(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 400 });
    await grant.settle({ chargeMicroUsd: 120 });
    const [row] = await sql`select reserved_micro_usd as reserved, spent_micro_usd as spent from admission_counters where counter_key = ${policy.budgets[0]!.counterKey}`;
    expect(row).toMatchObject({ reserved: 0, spent: 120 });
  });
});

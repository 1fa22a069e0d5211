import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { isRefusal, NOTHING_HELD, type Grant, type Refusal } from "../../src/admission/admission-check";
import { PolicyCounters } from "../../src/admission/policy-counters";
import type { Sql } from "../../src/db/connect-database";
import { migrate } from "../../src/db/migrate";
import { NO_POLICY } from "../../src/policy/compose-policies";
import { createTestDatabase, BIGINT_AS_NUMBER } from "../support/test-database";
import { bound, effective, request } from "./admission-support";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** Two clients, as two instances sharing one PostgreSQL would have. */
let sqlA: Sql;
let sqlB: Sql;
let statements = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  sqlA = postgres(database.url, { max: 8, onnotice: () => {}, debug: () => void statements++, types: BIGINT_AS_NUMBER }) as unknown as Sql;
  sqlB = postgres(database.url, { max: 8, onnotice: () => {}, types: BIGINT_AS_NUMBER }) as unknown as Sql;
  await migrate(sqlA);
});
afterAll(async () => {
  await sqlA.end();
  await sqlB.end();
  await database.drop();
});

async function counter(key: string) {
  const [row] = await sqlB`select reserved_micro_usd::int as reserved, spent_micro_usd::int as spent, window_requests::int as requests, window_tokens::int as tokens from admission_counters where counter_key = ${key}`;
  return row as { reserved: number; spent: number; requests: number; tokens: number };
}

async function bucketSpend(key: string): Promise<number> {
  const [row] = await sqlB`select coalesce(sum(spent_micro_usd), 0)::int as spent from budget_spend where counter_key = ${key}`;
  return (row as { spent: number }).spent;
}

const grantOf = (result: Grant | Refusal): Grant => {
  if (isRefusal(result)) throw new Error(`refused: ${result.message}`);
  return result;
};

describe("budgets and rate limits on two instances sharing one database", () => {
  test("2 × 200 concurrent requests against a budget: exactly as many admitted as the limit holds, never more spent", async () => {
    const a = new PolicyCounters(sqlA);
    const b = new PolicyCounters(sqlB);
    const policy = effective(bound("pol_budget_exact", "budget", { window: "day", limit_micro_usd: 10_000 }));
    const key = policy.budgets[0]!.counterKey;
    // Each request may cost 100 and costs exactly that: the limit holds 100 of them. Fewer
    // admitted means a refusal while room existed; more means overspend.
    const fire = async (instance: PolicyCounters) => {
      const result = await instance.admit(request(policy, { costCeilingMicroUsd: 100 }));
      if (isRefusal(result)) return result;
      await Bun.sleep(Math.random() * 5);
      await result.settle({ chargeMicroUsd: 100 });
      return "admitted" as const;
    };
    const results = await Promise.all([...Array.from({ length: 200 }, () => fire(a)), ...Array.from({ length: 200 }, () => fire(b))]);
    const admitted = results.filter((r) => r === "admitted").length;
    const refusals = results.filter((r): r is Refusal => r !== "admitted");
    expect(admitted).toBe(100);
    expect(refusals.every((r) => r.status === 402 && r.code === "budget_exceeded" && r.policy?.policyId === "pol_budget_exact")).toBe(true);
    expect(await counter(key)).toMatchObject({ reserved: 0, spent: 10_000 });
    expect(await bucketSpend(key)).toBe(10_000);
  });

  test("with charges below the ceiling, spend never passes the limit and what is left is usable", async () => {
    const a = new PolicyCounters(sqlA);
    const b = new PolicyCounters(sqlB);
    const limit = 20_000;
    const policy = effective(bound("pol_budget_partial", "budget", { window: "month", limit_micro_usd: limit }));
    const key = policy.budgets[0]!.counterKey;
    let charged = 0;
    const fire = async (instance: PolicyCounters) => {
      const result = await instance.admit(request(policy, { costCeilingMicroUsd: 300 }));
      if (isRefusal(result)) return false;
      const charge = Math.floor(Math.random() * 301);
      charged += charge;
      await result.settle({ chargeMicroUsd: charge });
      return true;
    };
    await Promise.all([...Array.from({ length: 200 }, () => fire(a)), ...Array.from({ length: 200 }, () => fire(b))]);
    const state = await counter(key);
    expect(state.reserved).toBe(0);
    expect(state.spent).toBe(charged);
    expect(state.spent).toBeLessThanOrEqual(limit);
    // Once nothing is in flight, a request fits exactly when the rest covers its ceiling.
    const rest = limit - state.spent;
    const exact = await a.admit(request(policy, { costCeilingMicroUsd: rest }));
    expect(isRefusal(exact)).toBe(false);
    await grantOf(exact).release();
    const over = await b.admit(request(policy, { costCeilingMicroUsd: rest + 1 }));
    expect(isRefusal(over) && over.status).toBe(402);
  });

  test("2 × 200 concurrent requests against max_requests: exactly the limit admitted, each refusal a 429 with a Retry-After in the window", async () => {
    const a = new PolicyCounters(sqlA);
    const b = new PolicyCounters(sqlB);
    const policy = effective(bound("pol_rate_exact", "rate_limit", { window_secs: 60, max_requests: 50 }));
    const results = await Promise.all([...Array.from({ length: 200 }, () => a.admit(request(policy))), ...Array.from({ length: 200 }, () => b.admit(request(policy)))]);
    const refusals = results.filter(isRefusal);
    expect(results.length - refusals.length).toBe(50);
    for (const refusal of refusals) {
      expect(refusal).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
      expect(refusal.retryAfterSecs!).toBeGreaterThanOrEqual(59);
      expect(refusal.retryAfterSecs!).toBeLessThanOrEqual(60);
    }
    expect(await counter(policy.rateLimits[0]!.counterKey)).toMatchObject({ requests: 50 });
  });

  test("2 × 200 concurrent requests against max_tokens count each request's output ceiling", async () => {
    const a = new PolicyCounters(sqlA);
    const b = new PolicyCounters(sqlB);
    const policy = effective(bound("pol_rate_tokens", "rate_limit", { window_secs: 60, max_tokens: 1_000 }));
    const fire = (instance: PolicyCounters) => instance.admit(request(policy, { outputCeiling: 30 }));
    const results = await Promise.all([...Array.from({ length: 200 }, () => fire(a)), ...Array.from({ length: 200 }, () => fire(b))]);
    expect(results.filter((r) => !isRefusal(r)).length).toBe(33);
    expect(await counter(policy.rateLimits[0]!.counterKey)).toMatchObject({ requests: 33, tokens: 990 });
  });

  test("Retry-After is the whole seconds until the oldest admission leaves the sliding window", async () => {
    const counters = new PolicyCounters(sqlA);
    const policy = effective(bound("pol_rate_retry", "rate_limit", { window_secs: 2, max_requests: 2 }));
    grantOf(await counters.admit(request(policy)));
    await Bun.sleep(1_100);
    grantOf(await counters.admit(request(policy)));
    const full = await counters.admit(request(policy));
    // The first admission leaves the window ~0.9 s from now: 1 whole second.
    expect(isRefusal(full) && full.retryAfterSecs).toBe(1);
    await Bun.sleep(1_000);
    // Sliding: the first has left, the second is still in the window.
    grantOf(await counters.admit(request(policy)));
    const again = await counters.admit(request(policy));
    expect(isRefusal(again) && again.retryAfterSecs).toBe(1);
    expect(isRefusal(again) && again.message).toContain("2 requests per 2 s");
  });

  test("a request whose output ceiling alone exceeds max_tokens waits a whole window", async () => {
    const counters = new PolicyCounters(sqlA);
    const policy = effective(bound("pol_rate_huge", "rate_limit", { window_secs: 30, max_tokens: 50 }));
    const refused = await counters.admit(request(policy, { outputCeiling: 51 }));
    expect(refused).toMatchObject({ status: 429, retryAfterSecs: 30 });
  });

  test("a refused request consumes nothing: a budget with room reserves nothing when a rate limit is full", async () => {
    const counters = new PolicyCounters(sqlA);
    const policy = effective(
      bound("pol_all_budget", "budget", { window: "total", limit_micro_usd: 1_000 }),
      bound("pol_all_rate", "rate_limit", { window_secs: 60, max_requests: 1 }),
    );
    const first = grantOf(await counters.admit(request(policy)));
    const second = await counters.admit(request(policy));
    expect(second).toMatchObject({ status: 429 });
    expect(await counter(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 100 });
    await first.settle({ chargeMicroUsd: 40 });
    expect(await counter(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 0, spent: 40 });
    // Settling keeps the rate-limit admission: the request was made.
    expect(await counter(policy.rateLimits[0]!.counterKey)).toMatchObject({ requests: 1 });
  });

  test("release withdraws the admission and the hold; settle is idempotent and never counts more than the hold", async () => {
    const counters = new PolicyCounters(sqlA);
    const policy = effective(
      bound("pol_rel_budget", "budget", { window: "day", limit_micro_usd: 1_000 }),
      bound("pol_rel_rate", "rate_limit", { window_secs: 60, max_requests: 1 }),
    );
    const [budgetKey, rateKey] = [policy.budgets[0]!.counterKey, policy.rateLimits[0]!.counterKey];
    const released = grantOf(await counters.admit(request(policy)));
    await released.release();
    await released.release();
    expect(await counter(budgetKey)).toMatchObject({ reserved: 0, spent: 0 });
    expect(await counter(rateKey)).toMatchObject({ requests: 0 });
    const settled = grantOf(await counters.admit(request(policy)));
    await settled.settle({ chargeMicroUsd: 500 });
    await settled.settle({ chargeMicroUsd: 500 });
    expect(await counter(budgetKey)).toMatchObject({ reserved: 0, spent: 100 });
    expect(await bucketSpend(budgetKey)).toBe(100);
  });

  test("an unknown charge counts the whole reservation", async () => {
    const counters = new PolicyCounters(sqlA);
    const policy = effective(bound("pol_unknown", "budget", { window: "total", limit_micro_usd: 1_000 }));
    await grantOf(await counters.admit(request(policy, { costCeilingMicroUsd: 250 }))).settle({ chargeMicroUsd: null });
    expect(await counter(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 0, spent: 250 });
  });

  test("rolling windows count the spend buckets that end inside them; total counts everything", async () => {
    const counters = new PolicyCounters(sqlA);
    const day = effective(bound("pol_day_window", "budget", { window: "day", limit_micro_usd: 1_000 }));
    const key = day.budgets[0]!.counterKey;
    await sqlB`insert into admission_counters (counter_key, spent_micro_usd) values (${key}, 1600)`;
    // 900 spent in a bucket that ended 25 hours ago (outside), 600 in one ending 23 hours ago (inside).
    await sqlB`insert into budget_spend (counter_key, bucket_end, spent_micro_usd) values
      (${key}, now() - interval '25 hours', 900), (${key}, now() - interval '23 hours', 600)`;
    expect(isRefusal(await counters.admit(request(day, { costCeilingMicroUsd: 400 })))).toBe(false);
    expect(await counters.admit(request(day, { costCeilingMicroUsd: 1 }))).toMatchObject({ status: 402 });
    // The same counter judged as a lifetime budget sees all 1,600 (its own counter key in real use).
    const total = effective(bound("pol_day_window", "budget", { window: "total", limit_micro_usd: 2_000 }));
    expect(total.budgets[0]!.counterKey).toBe(key);
    const refused = await counters.admit(request(total, { costCeilingMicroUsd: 1 }));
    expect(isRefusal(refused) && refused.message).toContain("1600 spent, 400 reserved");
  });

  test("BYOK requests skip budgets but not rate limits", async () => {
    const counters = new PolicyCounters(sqlA);
    const policy = effective(
      bound("pol_byok_budget", "budget", { window: "day", limit_micro_usd: 10 }),
      bound("pol_byok_rate", "rate_limit", { window_secs: 60, max_requests: 1 }),
    );
    grantOf(await counters.admit(request(policy, { funding: "byok" })));
    expect(await counter(policy.budgets[0]!.counterKey)).toBeUndefined();
    expect(await counters.admit(request(policy, { funding: "byok" }))).toMatchObject({ status: 429 });
  });

  test("a disabled budget is skipped by composition; enabled again, it applies", async () => {
    const counters = new PolicyCounters(sqlA);
    const disabled = effective(bound("pol_toggle_budget", "budget", { window: "day", limit_micro_usd: 1 }, undefined, true));
    expect(disabled).toBe(NO_POLICY);
    expect(await counters.admit(request(disabled))).toBe(NOTHING_HELD);
    const enabled = effective(bound("pol_toggle_budget", "budget", { window: "day", limit_micro_usd: 1 }));
    expect(await counters.admit(request(enabled))).toMatchObject({ status: 402, code: "budget_exceeded" });
  });

  test("no policy costs no statement and no allocation", async () => {
    const counters = new PolicyCounters(sqlA);
    const before = statements;
    for (let i = 0; i < 100; i++) expect(await counters.admit(request(NO_POLICY))).toBe(NOTHING_HELD);
    expect(statements - before).toBe(0);
  });

  test("requests holding several counters, listed in opposite orders on two instances, with renewals and sweeps running, never deadlock", async () => {
    const a = new PolicyCounters(sqlA, { holdTtlSecs: 1 });
    const b = new PolicyCounters(sqlB, { holdTtlSecs: 1 });
    const clauses = [
      bound("pol_order_b1", "budget", { window: "day", limit_micro_usd: 1_000_000 }),
      bound("pol_order_b2", "budget", { window: "total", limit_micro_usd: 1_000_000 }),
      bound("pol_order_r1", "rate_limit", { window_secs: 60, max_requests: 10_000 }),
      bound("pol_order_r2", "rate_limit", { window_secs: 60, max_tokens: 10_000_000 }),
    ];
    const forward = effective(...clauses);
    const backward = effective(...[...clauses].reverse());
    const fire = async (instance: PolicyCounters, policy: typeof forward, i: number) => {
      const grant = grantOf(await instance.admit(request(policy)));
      if (i % 3 === 0) await grant.release();
      else await grant.settle({ chargeMicroUsd: 10 });
    };
    const maintenance = (async () => {
      for (let i = 0; i < 10; i++) {
        await Promise.all([a.tick(), b.tick()]);
        await Bun.sleep(20);
      }
    })();
    await Promise.all([...Array.from({ length: 150 }, (_, i) => fire(a, forward, i)), ...Array.from({ length: 150 }, (_, i) => fire(b, backward, i)), maintenance]);
    // 100 of the 300 were released, 200 settled at 10 each.
    for (const clause of forward.budgets) expect(await counter(clause.counterKey)).toMatchObject({ reserved: 0, spent: 2_000 });
    for (const clause of forward.rateLimits) expect(await counter(clause.counterKey)).toMatchObject({ requests: 200 });
  });

  test("a dead instance's holds are swept as spent at their whole amount; a live instance's are renewed", async () => {
    // Holds live 2 s. The sweep comes 2.6 s after the admissions and 1.3 s after the renewal:
    // 0.7 s of room on either side for a loaded machine's slow round trips.
    const dying = new PolicyCounters(sqlA, { holdTtlSecs: 2 });
    const living = new PolicyCounters(sqlB, { holdTtlSecs: 2 });
    const policy = effective(bound("pol_sweep", "budget", { window: "day", limit_micro_usd: 1_000 }));
    const key = policy.budgets[0]!.counterKey;
    const orphan = grantOf(await dying.admit(request(policy, { costCeilingMicroUsd: 300 })));
    const alive = grantOf(await living.admit(request(policy, { costCeilingMicroUsd: 200 })));
    await Bun.sleep(1_300);
    await living.tick(); // renews its own hold, finds nothing expired yet
    await Bun.sleep(1_300);
    // `dying` never renewed: its hold expired; `living` renewed 1.3 s ago.
    expect(await living.sweepExpiredHolds()).toBe(1);
    expect(await counter(key)).toMatchObject({ reserved: 200, spent: 300 });
    expect(await bucketSpend(key)).toBe(300);
    // The dead instance's settlement, if it ever comes, finds nothing left to settle.
    await orphan.settle({ chargeMicroUsd: 10 });
    await alive.settle({ chargeMicroUsd: 50 });
    expect(await counter(key)).toMatchObject({ reserved: 0, spent: 350 });
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isRefusal, type Grant, type Refusal } from "../../src/admission/admission-check";
import { GroupCommit } from "../../src/admission/group-commit";
import { PolicyCounters } from "../../src/admission/policy-counters";
import type { Sql } from "../../src/db/connect-database";
import { bound, countersDatabase, effective, request } from "./admission-support";

let db: Awaited<ReturnType<typeof countersDatabase>>;
let sql: Sql;
let reader: Sql;
const calls = () => db.calls();

beforeAll(async () => {
  db = await countersDatabase();
  ({ sql, reader } = db);
});
afterAll(() => db.close());

async function counter(key: string) {
  const [row] = await reader`select reserved_micro_usd::int as reserved, spent_micro_usd::int as spent, window_requests::int as requests, window_tokens::text as tokens from admission_counters where counter_key = ${key}`;
  return row as { reserved: number; spent: number; requests: number; tokens: string };
}

const admitted = (result: Grant | Refusal): result is Grant => !isRefusal(result);

describe("group commit of budget and rate-limit admissions", () => {
  test("requests queued behind a call in flight are judged in the order they came, each seeing the ones before; a refusal in the middle takes nothing", async () => {
    const counters = new PolicyCounters(sql);
    const policy = effective(bound("pol_batch_order", "budget", { window: "day", limit_micro_usd: 350 }));
    // The first goes alone; the other four wait for it and go together, in this order.
    const results = await Promise.all([100, 100, 100, 100, 50].map((cost) => counters.admit(request(policy, { costCeilingMicroUsd: cost }))));
    expect(results.map(admitted)).toEqual([true, true, true, false, true]);
    const refusal = results[3] as Refusal;
    expect(refusal).toMatchObject({ status: 402, code: "budget_exceeded" });
    // The refused one saw the three admitted before it, and took nothing: the 50 after it fit.
    expect(refusal.message).toContain("0 spent, 300 reserved");
    expect(await counter(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 350 });
  });

  test("a full rate limit admits the first requests of a batch and refuses the rest with a whole window to wait", async () => {
    const counters = new PolicyCounters(sql);
    const policy = effective(bound("pol_batch_rate", "rate_limit", { window_secs: 30, max_requests: 3 }));
    const results = await Promise.all(Array.from({ length: 6 }, () => counters.admit(request(policy))));
    expect(results.map(admitted)).toEqual([true, true, true, false, false, false]);
    for (const refusal of results.slice(3) as Refusal[]) expect(refusal).toMatchObject({ status: 429, retryAfterSecs: 30 });
    expect(await counter(policy.rateLimits[0]!.counterKey)).toMatchObject({ requests: 3 });
  });

  test("requests on different counters at once go in separate batches and each counter stays exact", async () => {
    const counters = new PolicyCounters(sql);
    const budget = bound("pol_mix_budget", "budget", { window: "total", limit_micro_usd: 1_000 });
    const rate = bound("pol_mix_rate", "rate_limit", { window_secs: 60, max_requests: 15 });
    const [budgetOnly, rateOnly, both] = [effective(budget), effective(rate), effective(budget, rate)];
    const mixed = Array.from({ length: 60 }, (_, i) => [budgetOnly, rateOnly, both][i % 3]!);
    const results = await Promise.all(mixed.map((policy) => counters.admit(request(policy, { costCeilingMicroUsd: 50 }))));
    const budgetKey = budgetOnly.budgets[0]!.counterKey;
    const rateKey = rateOnly.rateLimits[0]!.counterKey;
    const admittedBudget = results.filter((result, i) => admitted(result) && mixed[i]!.budgets.length > 0).length;
    const admittedRate = results.filter((result, i) => admitted(result) && mixed[i]!.rateLimits.length > 0).length;
    // 20 requests of 50 fit the budget of 1,000 exactly; 15 fit the rate limit.
    expect(admittedBudget).toBe(20);
    expect(admittedRate).toBe(15);
    expect(await counter(budgetKey)).toMatchObject({ reserved: 1_000 });
    expect(await counter(rateKey)).toMatchObject({ requests: 15 });
    await Promise.all(results.filter(admitted).map((grant) => grant.settle({ chargeMicroUsd: 10 })));
    expect(await counter(budgetKey)).toMatchObject({ reserved: 0, spent: admittedBudget * 10 });
  });

  test("under concurrency, one database call decides many admissions and many settlements", async () => {
    const counters = new PolicyCounters(sql);
    const policy = effective(
      bound("pol_batch_calls_budget", "budget", { window: "day", limit_micro_usd: 1e12 }),
      bound("pol_batch_calls_rate", "rate_limit", { window_secs: 60, max_requests: 1e6 }),
    );
    const before = calls();
    const fire = async () => {
      const grant = await counters.admit(request(policy));
      if (isRefusal(grant)) throw new Error(grant.message);
      await grant.settle({ chargeMicroUsd: 1 });
    };
    await Promise.all(Array.from({ length: 200 }, fire));
    // 200 admissions and 200 settlements, one call each without batching.
    expect(calls() - before).toBeLessThan(100);
    expect(await counter(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 0, spent: 200 });
    expect(await counter(policy.rateLimits[0]!.counterKey)).toMatchObject({ requests: 200 });
  });

  test("when the database fails in the middle of a batch, every request of the batch gets the error and nothing of it is admitted", async () => {
    const counters = new PolicyCounters(sql);
    const policy = effective(bound("pol_batch_fail", "rate_limit", { window_secs: 60, max_requests: 100 }));
    const key = policy.rateLimits[0]!.counterKey;
    // The counter's tokens sit just below bigint's maximum: the batch's second request overflows it, after the first was judged.
    const start = (2n ** 63n - 1n - 150n).toString();
    await reader`insert into admission_counters (counter_key, window_tokens) values (${key}, ${start})`;
    const settled = await Promise.allSettled([1, 100, 100].map((tokens) => counters.admit(request(policy, { outputCeiling: tokens }))));
    expect(settled.map((result) => result.status)).toEqual(["fulfilled", "rejected", "rejected"]);
    expect((settled[1] as PromiseRejectedResult).reason).toBe((settled[2] as PromiseRejectedResult).reason);
    // Only the first request (its own call) was admitted.
    expect(await counter(key)).toMatchObject({ requests: 1, tokens: (2n ** 63n - 1n - 149n).toString() });
    const [{ rows }] = (await reader`select count(*)::int as rows from rate_limit_admissions where counter_key = ${key}`) as unknown as [{ rows: number }];
    expect(rows).toBe(1);
  });

  test("settlements the database refuses stay pending for every grant of the batch and land on the next tick", async () => {
    let failing = false;
    // The same client, refusing every statement while `failing` (an unreachable database).
    const flaky = new Proxy(sql, {
      get(target, property, receiver) {
        if (property === "unsafe" && failing) return () => Promise.reject(new Error("connection refused"));
        return Reflect.get(target, property, receiver);
      },
    });
    const counters = new PolicyCounters(flaky);
    const policy = effective(bound("pol_batch_pending", "budget", { window: "day", limit_micro_usd: 10_000 }));
    const grants = (await Promise.all(Array.from({ length: 5 }, () => counters.admit(request(policy))))).filter(admitted);
    expect(grants.length).toBe(5);
    failing = true;
    await Promise.all(grants.map((grant) => grant.settle({ chargeMicroUsd: 40 })));
    expect(await counter(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 500, spent: 0 });
    failing = false;
    await counters.tick();
    expect(await counter(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 0, spent: 200 });
  });
});

describe("GroupCommit", () => {
  test("one call per key in flight; items arriving meanwhile go in the next call, in order, at most maxBatch at a time", async () => {
    const seen: string[][] = [];
    const batches = new GroupCommit<string, string>(async (items) => {
      seen.push(items);
      await Bun.sleep(5);
      return items.map((item) => item.toUpperCase());
    }, 3);
    const results = await Promise.all([
      ...["a", "b", "c", "d", "e"].map((item) => batches.submit("one", item)),
      batches.submit("two", "x"),
    ]);
    expect(results).toEqual(["A", "B", "C", "D", "E", "X"]);
    expect(seen).toEqual([["a"], ["x"], ["b", "c", "d"], ["e"]]);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isRefusal, type Grant, type Refusal } from "../../src/admission/admission-check";
import type { LeaseSettings } from "../../src/admission/counter-leases";
import { PolicyCounters } from "../../src/admission/policy-counters";
import type { Sql } from "../../src/db/connect-database";
import { bound, countersDatabase, effective, request } from "./admission-support";

/**
 * Leases of room on hot keys far from their limits (src/admission/counter-leases.ts,
 * migration 0027): few database calls for many requests, the same counters once the
 * leases end, no lease near a limit, and never more admitted than a limit across two
 * instances.
 */
let db: Awaited<ReturnType<typeof countersDatabase>>;
let sql: Sql;
let reader: Sql;
const calls = () => db.calls();
const LEASES: LeaseSettings = { requests: 16, maxRequests: 16, lifeMs: 1_000, headroomFactor: 8, hotAdmissionsPerSecond: 4 };

beforeAll(async () => {
  db = await countersDatabase();
  ({ sql, reader } = db);
});
afterAll(() => db.close());

async function counter(key: string) {
  const [row] = await reader`select reserved_micro_usd::int as reserved, spent_micro_usd::int as spent, window_requests::int as requests, window_tokens::int as tokens from admission_counters where counter_key = ${key}`;
  return row as { reserved: number; spent: number; requests: number; tokens: number };
}

const admitted = (result: Grant | Refusal): result is Grant => !isRefusal(result);

/** `count` requests in waves of `concurrency`, each settled at `charge` once admitted. */
async function load(counters: PolicyCounters, policy: ReturnType<typeof effective>, count: number, concurrency: number, charge: number) {
  let admittedCount = 0;
  let refused = 0;
  for (let sent = 0; sent < count; sent += concurrency) {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, count - sent) }, async () => {
        const grant = await counters.admit(request(policy));
        if (!admitted(grant)) return void refused++;
        admittedCount++;
        await grant.settle({ chargeMicroUsd: charge });
      }),
    );
  }
  return { admitted: admittedCount, refused };
}

describe("leases of room on hot keys", () => {
  test("a hot key far from its limits is admitted from leases, with a database call for many requests, and its counters are exact once the leases end", async () => {
    const policy = effective(
      bound("pol_lease_budget", "budget", { window: "day", limit_micro_usd: 1e12 }),
      bound("pol_lease_rate", "rate_limit", { window_secs: 60, max_requests: 1e6, max_tokens: 1e9 }),
    );
    const leased = new PolicyCounters(sql, { leases: { ...LEASES, requests: 64, maxRequests: 64 } });
    const before = calls();
    const leasedRun = await load(leased, policy, 400, 8, 3);
    const leasedCalls = calls() - before;
    await leased.stop();
    expect(leasedRun).toEqual({ admitted: 400, refused: 0 });
    // Spent is every charge; nothing stays reserved; the rate limit counts each request
    // and its output ceiling (100 tokens) once, however it was admitted.
    expect(await counter(policy.budgets[0]!.counterKey)).toMatchObject({ reserved: 0, spent: 1_200 });
    expect(await counter(policy.rateLimits[0]!.counterKey)).toMatchObject({ requests: 400, tokens: 40_000 });

    const oneByOne = new PolicyCounters(sql);
    const policyTwo = effective(
      bound("pol_lease_budget_2", "budget", { window: "day", limit_micro_usd: 1e12 }),
      bound("pol_lease_rate_2", "rate_limit", { window_secs: 60, max_requests: 1e6, max_tokens: 1e9 }),
    );
    const beforeOneByOne = calls();
    await load(oneByOne, policyTwo, 400, 8, 3);
    const oneByOneCalls = calls() - beforeOneByOne;
    await oneByOne.stop();
    // Group commit alone: about two calls per wave of 8 (admit and settle); leases of 64:
    // two calls per lease, which the next one takes over after three quarters of it.
    console.log(`database calls for 400 requests: ${leasedCalls} with leases of 64, ${oneByOneCalls} without`);
    expect(leasedCalls * 4).toBeLessThan(oneByOneCalls);
  });

  test("a lease's spend lands in the budget's window, and its rate-limit row is stamped at the end of its life", async () => {
    const policy = effective(
      bound("pol_lease_spend", "budget", { window: "day", limit_micro_usd: 1e12 }),
      bound("pol_lease_stamp", "rate_limit", { window_secs: 60, max_requests: 1e6 }),
    );
    const counters = new PolicyCounters(sql, { leases: LEASES });
    const started = Date.now();
    await load(counters, policy, 64, 8, 5);
    await counters.stop();
    const [spend] = await reader`select coalesce(sum(spent_micro_usd), 0)::int as spent from budget_spend where counter_key = ${policy.budgets[0]!.counterKey} and bucket_end > now() - interval '1 day'`;
    expect(spend!.spent).toBe(320);
    const rows = await reader`select grant_id, extract(epoch from admitted_at)::float8 * 1000 as at, requests from rate_limit_admissions where counter_key = ${policy.rateLimits[0]!.counterKey} and requests > 1`;
    expect(rows.length).toBeGreaterThan(0);
    // A lease's kept row: its requests, at least the lease's life after the test began.
    for (const row of rows) {
      expect(String(row.grant_id)).toEndWith(".used");
      expect(Number(row.at)).toBeGreaterThanOrEqual(started + LEASES.lifeMs - 50);
    }
  });

  test("near a limit no lease is granted: every request is judged in order, and exactly the limit is admitted", async () => {
    // 100 requests of room; a lease of 16 needs 9 × 16 free: none is ever granted.
    const policy = effective(bound("pol_lease_near", "rate_limit", { window_secs: 60, max_requests: 100 }));
    const counters = new PolicyCounters(sql, { leases: LEASES });
    const run = await load(counters, policy, 300, 16, 0);
    await counters.stop();
    expect(run).toEqual({ admitted: 100, refused: 200 });
    const [leases] = await reader`select count(*)::int as n from rate_limit_admissions where counter_key = ${policy.rateLimits[0]!.counterKey} and grant_id like 'lse%'`;
    expect(leases!.n).toBe(0);
  });

  test("two instances leasing one key never admit more than its limit, and the counter matches what they admitted", async () => {
    // Room for leases at first (1,000 ≥ 9 × 16), none near the end.
    const policy = effective(bound("pol_lease_two", "rate_limit", { window_secs: 60, max_requests: 1_000 }));
    const first = new PolicyCounters(sql, { leases: LEASES });
    const second = new PolicyCounters(sql, { leases: LEASES });
    const [a, b] = await Promise.all([load(first, policy, 1_500, 16, 0), load(second, policy, 1_500, 16, 0)]);
    const leasesTaken = await reader`select count(*)::int as n from rate_limit_admissions where counter_key = ${policy.rateLimits[0]!.counterKey} and grant_id like 'lse%'`;
    await Promise.all([first.stop(), second.stop()]);
    expect(a.admitted + b.admitted).toBeLessThanOrEqual(1_000);
    // Room a lease kept from the other instance is bounded: at most one lease per instance.
    expect(a.admitted + b.admitted).toBeGreaterThanOrEqual(1_000 - 2 * LEASES.requests);
    expect(leasesTaken[0]!.n).toBeGreaterThan(0);
    expect((await counter(policy.rateLimits[0]!.counterKey)).requests).toBe(a.admitted + b.admitted);
  });

  test("a lease whose instance died is swept as spent at its whole amount once its hold expires", async () => {
    const policy = effective(bound("pol_lease_dead", "budget", { window: "total", limit_micro_usd: 1e12 }));
    const dying = new PolicyCounters(sql, { leases: LEASES, holdTtlSecs: 1 });
    // Never stopped and never ticks: as if the process had died holding its lease.
    const grants: Grant[] = [];
    for (let i = 0; i < 40; i++) {
      const grant = await dying.admit(request(policy));
      if (admitted(grant)) grants.push(grant);
    }
    const key = policy.budgets[0]!.counterKey;
    const [hold] = await reader`select count(*)::int as n, coalesce(sum(amount_micro_usd), 0)::int as amount from admission_holds where counter_key = ${key} and grant_id like 'lse%'`;
    expect(hold!.n).toBeGreaterThan(0);
    await Bun.sleep(1_200);
    const sweeper = new PolicyCounters(sql);
    expect(await sweeper.sweepExpiredHolds()).toBeGreaterThan(0);
    const after = await counter(key);
    expect(after.reserved).toBeLessThan(1_600 * 40);
    expect(after.spent).toBeGreaterThanOrEqual(hold!.amount);
  });
});

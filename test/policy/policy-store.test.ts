import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/db/connect-database";
import { bindPolicy, deletePolicy, insertPolicy, setPolicyDisabled, unbindPolicy, updatePolicyWith } from "../../src/db/queries/policies";
import { NO_POLICY } from "../../src/policy/compose-policies";
import { effectivePolicyView } from "../../src/policy/effective-policy-view";
import type { PrincipalRef } from "../../src/policy/effective-policy";
import { PolicyStore } from "../../src/policy/policy-store";
import { createMigratedTestDatabase, type MigratedTestDatabase } from "../support/test-database";

let database: MigratedTestDatabase;
let sql: Sql;
/** Counts the statements the stores send, to show what a cached lookup costs. */
let queries = 0;

const account = "acct_store";
const tenant = { accountId: account, namespaceId: "ns_store" };
const ns: PrincipalRef = { type: "namespace", id: "ns_store" };
const key: PrincipalRef = { type: "api_key", id: "k_store" };
const budget = { window: "day" as const, limit_micro_usd: 10 };

beforeAll(async () => {
  database = await createMigratedTestDatabase({ debug: () => void queries++ });
  sql = database.sql;
  await sql`insert into accounts (id, email) values (${account}, 'store@example.test'), ('acct_other', 'other@example.test')`;
  await sql`insert into namespaces (id, account_id, name) values ('ns_store', ${account}, 'default'), ('ns_other', 'acct_other', 'default')`;
});
afterAll(() => database.close());

let counter = 0;
async function policy(kind: string, spec: object, t = tenant) {
  return (await insertPolicy(sql, t, { id: `pol_store_${++counter}`, name: `p${counter}`, kind, spec })).id;
}
async function bind(policyId: string, principal: PrincipalRef, t = tenant) {
  return (await bindPolicy(sql, t, { id: `pb_store_${++counter}`, policyId, principalType: principal.type, principalId: principal.id }))!;
}

describe("PolicyStore", () => {
  test("principals with nothing bound get the shared empty policy, and after the first lookup cost no query", async () => {
    const store = new PolicyStore(sql, 60_000);
    const principals: PrincipalRef[] = [{ type: "namespace", id: "ns_empty" }, { type: "api_key", id: "k_empty" }];
    expect(await store.effectivePolicy(account, principals)).toBe(NO_POLICY);
    const before = queries;
    for (let i = 0; i < 100; i++) expect(await store.effectivePolicy(account, principals)).toBe(NO_POLICY);
    expect(queries - before).toBe(0);
  });

  test("misses of one lookup are one query, and concurrent lookups of the same principals share it", async () => {
    const store = new PolicyStore(sql, 60_000);
    const principals: PrincipalRef[] = [{ type: "namespace", id: "ns_a" }, { type: "api_key", id: "k_a" }, { type: "oauth_client", id: "c_a" }];
    const before = queries;
    await Promise.all(Array.from({ length: 20 }, () => store.effectivePolicy(account, principals)));
    expect(queries - before).toBe(1);
  });

  test("only the account's own bindings count", async () => {
    const foreign = await policy("budget", budget, { accountId: "acct_other", namespaceId: "ns_other" });
    // A row naming this key but owned by another account (written around the API).
    await sql`insert into policy_bindings (id, policy_id, principal_type, principal_id) values ('pb_foreign', ${foreign}, 'api_key', 'k_lonely')`;
    const store = new PolicyStore(sql, 0);
    expect(await store.effectivePolicy(account, [{ type: "api_key", id: "k_lonely" }])).toBe(NO_POLICY);
    expect((await store.effectivePolicy("acct_other", [{ type: "api_key", id: "k_lonely" }])).budgets).toHaveLength(1);
  });

  test("a change made through this instance's store applies at once; another instance sees it within its TTL", async () => {
    const ttlMs = 1_000; // outlasts the writes between a cached read and the check that it is still cached, on a loaded machine too
    const here = new PolicyStore(sql, ttlMs);
    const there = new PolicyStore(sql, ttlMs);
    const principals = [ns, key];
    const view = async (store: PolicyStore) => effectivePolicyView(await store.effectivePolicy(account, principals));
    expect((await view(here)).budgets).toEqual([]);
    expect((await view(there)).budgets).toEqual([]);

    // Bind: this instance invalidates the principal, the other still serves its cached entry.
    const budgetId = await policy("budget", budget);
    const binding = await bind(budgetId, key);
    here.principalChanged(account, key);
    expect((await view(here)).budgets).toEqual([budget]);
    expect((await view(there)).budgets).toEqual([]);
    await Bun.sleep(ttlMs + 50);
    expect((await view(there)).budgets).toEqual([budget]);

    // Update, disable, enable, delete: each invalidates every cached principal bound to the policy.
    await updatePolicyWith(sql, tenant, budgetId, () => ({ spec: { window: "month", limit_micro_usd: 99 } }));
    here.policyChanged(budgetId);
    expect((await view(here)).budgets).toEqual([{ window: "month", limit_micro_usd: 99 }]);
    expect((await view(there)).budgets).toEqual([budget]);
    await setPolicyDisabled(sql, tenant, budgetId, true);
    here.policyChanged(budgetId);
    expect((await view(here)).budgets).toEqual([]);
    await setPolicyDisabled(sql, tenant, budgetId, false);
    here.policyChanged(budgetId);
    expect((await view(here)).budgets).toEqual([{ window: "month", limit_micro_usd: 99 }]);

    // Unbind, then delete a policy bound to the namespace.
    await unbindPolicy(sql, tenant, budgetId, binding);
    here.principalChanged(account, key);
    expect((await view(here)).budgets).toEqual([]);
    const guardId = await policy("guardrail", { allow_streaming: false });
    await bind(guardId, ns);
    here.principalChanged(account, ns);
    expect((await view(here)).guardrail).toMatchObject({ allow_streaming: false });
    await deletePolicy(sql, tenant, guardId);
    here.policyChanged(guardId);
    expect(await here.effectivePolicy(account, principals)).toBe(NO_POLICY);
    await Bun.sleep(ttlMs + 50);
    expect(await there.effectivePolicy(account, principals)).toBe(NO_POLICY);
  });

  test("a load in flight when a change is made is not cached", async () => {
    // The store's query runs on the real database; only its answer is held back until
    // the change has been made and announced, as a slow round trip would.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = { unsafe: async (...args: Parameters<Sql["unsafe"]>) => { const rows = await sql.unsafe(...args); await gate; return rows; } } as unknown as Sql;
    const store = new PolicyStore(slow, 60_000);
    const principal: PrincipalRef = { type: "api_key", id: "k_race" };
    const stale = store.effectivePolicy(account, [principal]);
    await Bun.sleep(50);
    const budgetId = await policy("budget", budget);
    await bind(budgetId, principal);
    store.principalChanged(account, principal);
    release();
    // The lookup that started first answers with what it read...
    expect(await stale).toBe(NO_POLICY);
    // ...but did not cache it: the next lookup reads the change.
    expect((await store.effectivePolicy(account, [principal])).budgets.map((clause) => clause.spec)).toEqual([budget]);
  });

  test("the composition of cached entries is reused until one of them changes", async () => {
    const store = new PolicyStore(sql, 60_000);
    const principal: PrincipalRef = { type: "api_key", id: "k_memo" };
    await bind(await policy("rate_limit", { window_secs: 1, max_requests: 1 }), principal);
    const first = await store.effectivePolicy(account, [principal]);
    expect(await store.effectivePolicy(account, [principal])).toBe(first);
    store.principalChanged(account, principal);
    const second = await store.effectivePolicy(account, [principal]);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });
});

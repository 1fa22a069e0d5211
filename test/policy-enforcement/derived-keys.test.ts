import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { api, callThroughSdk } from "./enforcement-support";

/**
 * A key minted by a key answers to the policies bound to its parent as well as its own
 * (DESIGN "Derived credentials never outlive or outrank their parent"): the parent's
 * budget counts the child's settled spend, and refuses the child once it is used.
 */
const MODEL = "mock-openai/gpt-4o-mini";

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness({ meteringFlushIntervalMs: 20 });
});
afterAll(() => harness.close());

async function spentOn(counterKey: string): Promise<number> {
  const sql = postgres(harness.server.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ spent: string }[]>`select spent_micro_usd::text as spent from admission_counters where counter_key = ${counterKey}`;
    return row ? Number(row.spent) : 0;
  } finally {
    await sql.end();
  }
}

describe("a derived key and its parent's budget", () => {
  test("the child's charges land on the parent's budget, which then refuses the child", async () => {
    const ns = `/v1/namespaces/${harness.account.namespaceId}`;
    const parent = await api(harness, "POST", `${ns}/keys`, { display_name: "parent", scopes: ["inference:invoke", "keys:write"] });
    const policy = await api(harness, "POST", `${ns}/policies`, { name: "parent budget", kind: "budget", spec: { window: "total", limit_micro_usd: 50_000_000 } });
    await api(harness, "POST", `${ns}/policies/${policy.id}/bind`, { principal_type: "api_key", principal_id: parent.id });
    const minted = await harness.server.api("POST", "/v1/keys", { token: parent.token, body: { display_name: "child", scopes: ["inference:invoke"] } });
    expect(minted.status).toBe(200);
    const child = minted.body;

    expect(await callThroughSdk(harness, "openai-chat", child.token, MODEL, { stream: false, maxTokens: 16 })).toMatchObject({ ok: true });
    const counterKey = `${policy.id}/budget/api_key/${parent.id}`;
    let spent = 0;
    for (let i = 0; i < 500 && spent === 0; i++) {
      spent = await spentOn(counterKey);
      if (spent === 0) await Bun.sleep(20);
    }
    expect(spent).toBeGreaterThan(0);

    // The parent's budget is now exactly used up by the child's charge.
    await api(harness, "PUT", `${ns}/policies/${policy.id}`, { spec: { window: "total", limit_micro_usd: spent } });
    const refused = await callThroughSdk(harness, "openai-chat", child.token, MODEL, { stream: false, maxTokens: 16 });
    expect(refused).toMatchObject({ ok: false, status: 402, code: "budget_exceeded" });
    // The parent is refused by the same budget: the spend was one.
    expect(await callThroughSdk(harness, "openai-chat", parent.token, MODEL, { stream: false, maxTokens: 16 })).toMatchObject({ ok: false, status: 402 });
  });
});

describe("the effective policy of a derived key", () => {
  test("GET …/policies/effective for a child and a grandchild shows the budget bound to their ancestor, as enforcement applies it", async () => {
    const ns = `/v1/namespaces/${harness.account.namespaceId}`;
    const parent = await api(harness, "POST", `${ns}/keys`, { display_name: "view parent", scopes: ["inference:invoke", "keys:write"] });
    const budget = { window: "day", limit_micro_usd: 1_234_567 };
    const policy = await api(harness, "POST", `${ns}/policies`, { name: "view parent budget", kind: "budget", spec: budget });
    await api(harness, "POST", `${ns}/policies/${policy.id}/bind`, { principal_type: "api_key", principal_id: parent.id });
    const child = (await harness.server.api("POST", "/v1/keys", { token: parent.token, body: { display_name: "view child", scopes: ["inference:invoke", "keys:write"] } })).body;
    const grandchild = (await harness.server.api("POST", "/v1/keys", { token: child.token, body: { display_name: "view grandchild", scopes: ["inference:invoke"] } })).body;
    const unrelated = await api(harness, "POST", `${ns}/keys`, { display_name: "view unrelated", scopes: ["inference:invoke"] });
    const effective = (keyId: string) => api(harness, "GET", `${ns}/policies/effective?principal_type=api_key&principal_id=${keyId}`);
    for (const key of [parent, child, grandchild]) expect((await effective(key.id)).budgets).toContainEqual(budget);
    expect((await effective(unrelated.id)).budgets).not.toContainEqual(budget);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startTestServer, type TestAccount, type TestServer } from "../../support/test-server";

let server: TestServer;
let alice: TestAccount;
let bob: TestAccount;
beforeAll(async () => {
  server = await startTestServer();
  alice = await server.createAccount();
  bob = await server.createAccount();
});
afterAll(() => server.close());

const budget = { window: "day", limit_micro_usd: 5_000_000 };
const rateLimit = { window_secs: 60, max_requests: 10 };
const guardrail = { model_allow: ["openai/gpt-4.1-mini", "anthropic/claude-sonnet-4"] };

async function createPolicy(account: TestAccount, body: unknown, base = `/v1/namespaces/${account.namespaceId}`) {
  const response = await server.api("POST", `${base}/policies`, { token: account.apiKey, body });
  if (response.status !== 200) throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body as { id: string; name: string; kind: string; spec: unknown; disabled_at: string | null };
}

/** A namespace-bound key of the account, by id and token. */
async function mintKey(account: TestAccount, scopes = ["inference:invoke"]) {
  const response = await server.api("POST", `/v1/namespaces/${account.namespaceId}/keys`, { token: account.apiKey, body: { display_name: "k", scopes } });
  return { id: response.body.id as string, token: response.body.token as string };
}

describe("policies: create, get, list, put, delete", () => {
  test("create returns the exact envelope, and get and list return the same", async () => {
    const ns = `/v1/namespaces/${alice.namespaceId}`;
    const created = await server.api("POST", `${ns}/policies`, { token: alice.apiKey, body: { name: "ci daily", kind: "budget", spec: budget } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^pol_[a-z0-9]{16}$/), name: "ci daily", kind: "budget", spec: budget, disabled_at: null });
    const got = await server.api("GET", `${ns}/policies/${created.body.id}`, { token: alice.apiKey });
    expect(got.body).toEqual(created.body);
    const listed = await server.api("GET", `${ns}/policies`, { token: alice.apiKey });
    expect(listed.body.data).toContainEqual(created.body);
  });

  test("list filters by ?kind= and refuses an unknown kind with 400 naming it", async () => {
    const account = await server.createAccount();
    const a = await createPolicy(account, { name: "b", kind: "budget", spec: budget });
    const b = await createPolicy(account, { name: "r", kind: "rate_limit", spec: rateLimit });
    const c = await createPolicy(account, { name: "g", kind: "guardrail", spec: guardrail });
    const d = await createPolicy(account, { name: "p", kind: "preset", spec: {} });
    const all = await server.api("GET", "/v1/policies", { token: account.apiKey });
    expect(all.body.data.map((p: any) => p.id)).toEqual([a.id, b.id, c.id, d.id]);
    for (const [kind, id] of [["budget", a.id], ["rate_limit", b.id], ["guardrail", c.id], ["preset", d.id]]) {
      const some = await server.api("GET", `/v1/policies?kind=${kind}`, { token: account.apiKey });
      expect(some.body.data.map((p: any) => p.id)).toEqual([id]);
    }
    const bad = await server.api("GET", "/v1/policies?kind=quota", { token: account.apiKey });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("bad_request");
    expect(bad.body.error_description).toContain("kind");
  });

  test("a preset's spec is stored with every clause, null where absent", async () => {
    const preset = await createPolicy(alice, { name: "p", kind: "preset", spec: { budget } });
    expect(preset.spec).toEqual({ guardrail: null, budget, rate_limit: null });
  });

  test("PUT changes name and spec; an absent one is unchanged; the kind is immutable", async () => {
    const policy = await createPolicy(alice, { name: "before", kind: "rate_limit", spec: rateLimit });
    const path = `/v1/policies/${policy.id}`;
    const renamed = await server.api("PUT", path, { token: alice.apiKey, body: { name: "after" } });
    expect(renamed.body).toEqual({ ...policy, name: "after" });
    const respecced = await server.api("PUT", path, { token: alice.apiKey, body: { spec: { window_secs: 10, max_tokens: 1000 } } });
    expect(respecced.body).toEqual({ ...policy, name: "after", spec: { window_secs: 10, max_tokens: 1000 } });
    const sameKind = await server.api("PUT", path, { token: alice.apiKey, body: { kind: "rate_limit", name: "again" } });
    expect(sameKind.status).toBe(200);
    const otherKind = await server.api("PUT", path, { token: alice.apiKey, body: { kind: "budget", spec: budget } });
    expect(otherKind.status).toBe(400);
    expect(otherKind.body.error_description).toContain("kind");
    const invalid = await server.api("PUT", path, { token: alice.apiKey, body: { spec: { window_secs: 0, max_requests: 1 } } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error_description).toContain("spec.window_secs");
    // Neither refused PUT changed anything.
    expect((await server.api("GET", path, { token: alice.apiKey })).body).toEqual({ ...sameKind.body });
    expect(sameKind.body.spec).toEqual({ window_secs: 10, max_tokens: 1000 });
  });

  test("DELETE answers { deleted: true } and removes the policy with its bindings", async () => {
    const policy = await createPolicy(alice, { name: "gone", kind: "budget", spec: budget });
    const key = await mintKey(alice);
    await server.api("POST", `/v1/policies/${policy.id}/bind`, { token: alice.apiKey, body: { principal_type: "api_key", principal_id: key.id } });
    await server.api("POST", `/v1/policies/${policy.id}/bind`, { token: alice.apiKey, body: { principal_type: "namespace", principal_id: alice.namespaceId } });
    const deleted = await server.api("DELETE", `/v1/policies/${policy.id}`, { token: alice.apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });
    expect((await server.api("GET", `/v1/policies/${policy.id}`, { token: alice.apiKey })).status).toBe(404);
    expect((await server.api("DELETE", `/v1/policies/${policy.id}`, { token: alice.apiKey })).status).toBe(404);
    const sql = postgres(server.databaseUrl, { max: 1, onnotice: () => {} });
    const [row] = await sql`select count(*)::int as n from policy_bindings where policy_id = ${policy.id}`;
    await sql.end();
    expect(row!.n).toBe(0);
    const principal = await server.api("GET", `/v1/principals/api_key/${key.id}/policies`, { token: alice.apiKey });
    expect(principal.body).toEqual({ data: [] });
  });
});

describe("policies: validation is a 400 naming the field", () => {
  const cases: Array<[string, unknown, string]> = [
    ["unknown kind", { name: "x", kind: "quota", spec: {} }, "kind"],
    ["missing spec", { name: "x", kind: "budget" }, "spec"],
    ["spec not an object", { name: "x", kind: "budget", spec: [1] }, "spec"],
    ["empty name", { name: "", kind: "budget", spec: budget }, "name"],
    ["unknown top-level field", { name: "x", kind: "budget", spec: budget, owner: "me" }, "owner"],
    ["zero budget", { name: "x", kind: "budget", spec: { window: "day", limit_micro_usd: 0 } }, "spec.limit_micro_usd"],
    ["negative budget", { name: "x", kind: "budget", spec: { window: "day", limit_micro_usd: -5 } }, "spec.limit_micro_usd"],
    ["fractional budget", { name: "x", kind: "budget", spec: { window: "day", limit_micro_usd: 1.5 } }, "spec.limit_micro_usd"],
    ["unsafe budget", { name: "x", kind: "budget", spec: { window: "day", limit_micro_usd: 2 ** 60 } }, "spec.limit_micro_usd"],
    ["string budget", { name: "x", kind: "budget", spec: { window: "day", limit_micro_usd: "5" } }, "spec.limit_micro_usd"],
    ["unknown window", { name: "x", kind: "budget", spec: { window: "week", limit_micro_usd: 5 } }, "spec.window"],
    ["unknown spec field", { name: "x", kind: "budget", spec: { ...budget, currency: "USD" } }, "spec.currency"],
    ["zero window_secs", { name: "x", kind: "rate_limit", spec: { window_secs: 0, max_requests: 1 } }, "spec.window_secs"],
    ["negative max_requests", { name: "x", kind: "rate_limit", spec: { window_secs: 1, max_requests: -1 } }, "spec.max_requests"],
    ["preset rate limit without a cap", { name: "x", kind: "preset", spec: { rate_limit: { window_secs: 60 } } }, "spec.rate_limit"],
    ["preset zero budget", { name: "x", kind: "preset", spec: { budget: { window: "day", limit_micro_usd: 0 } } }, "spec.budget.limit_micro_usd"],
    ["preset unknown clause", { name: "x", kind: "preset", spec: { quota: {} } }, "spec.quota"],
    ["model list of numbers", { name: "x", kind: "guardrail", spec: { model_allow: [1] } }, "spec.model_allow"],
    ["model list not a list", { name: "x", kind: "guardrail", spec: { model_deny: "openai/gpt-4o" } }, "spec.model_deny"],
    ["max_request_tokens zero", { name: "x", kind: "guardrail", spec: { max_request_tokens: 0 } }, "spec.max_request_tokens"],
    ["allow_streaming not boolean", { name: "x", kind: "guardrail", spec: { allow_streaming: "no" } }, "spec.allow_streaming"],
    ["unknown byok rule", { name: "x", kind: "guardrail", spec: { byok: "sometimes" } }, "spec.byok"],
    ["regex that does not compile", { name: "x", kind: "guardrail", spec: { content_patterns: [{ name: "p", pattern: "sk-[" }] } }, "spec.content_patterns.0.pattern"],
    ["regex with nested repetition", { name: "x", kind: "guardrail", spec: { content_patterns: [{ name: "p", pattern: "(a+)+$" }] } }, "spec.content_patterns.0.pattern"],
    ["regex too long", { name: "x", kind: "guardrail", spec: { content_patterns: [{ name: "p", pattern: "a".repeat(513) }] } }, "spec.content_patterns.0.pattern"],
    ["regex matching everything", { name: "x", kind: "guardrail", spec: { content_patterns: [{ name: "p", pattern: "x*" }] } }, "spec.content_patterns.0.pattern"],
    ["pattern without a name", { name: "x", kind: "guardrail", spec: { content_patterns: [{ pattern: "secret" }] } }, "spec.content_patterns.0.name"],
    ["unknown pattern action", { name: "x", kind: "guardrail", spec: { content_patterns: [{ name: "p", pattern: "secret", action: "mask" }] } }, "spec.content_patterns.0.action"],
  ];
  for (const [label, body, field] of cases) {
    test(`${label} → 400 naming ${field}`, async () => {
      const response = await server.api("POST", "/v1/policies", { token: alice.apiKey, body });
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: 400, error: "bad_request" });
      expect(response.body.error_description).toContain(field);
    });
  }

  test("a plain rate_limit policy without a cap is accepted (only presets insist), and limits nothing", async () => {
    const response = await server.api("POST", "/v1/policies", { token: alice.apiKey, body: { name: "x", kind: "rate_limit", spec: { window_secs: 60 } } });
    expect(response.status).toBe(200);
  });

  test("a body that is not JSON, or not an object, is a 400", async () => {
    const notJson = await server.api("POST", "/v1/policies", { token: alice.apiKey, rawBody: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
    const array = await server.api("POST", "/v1/policies", { token: alice.apiKey, body: [] });
    expect(array.status).toBe(400);
  });
});

describe("policies: disable and enable", () => {
  test("both are idempotent 200s with the post-call state, and the listing keeps disabled rows with disabled_at", async () => {
    const policy = await createPolicy(alice, { name: "toggle", kind: "guardrail", spec: { allow_streaming: false } });
    const disable = () => server.api("POST", `/v1/policies/${policy.id}/disable`, { token: alice.apiKey });
    const enable = () => server.api("POST", `/v1/policies/${policy.id}/enable`, { token: alice.apiKey });
    const first = await disable();
    expect({ status: first.status, body: first.body }).toEqual({ status: 200, body: { disabled: true } });
    const stamped = (await server.api("GET", `/v1/policies/${policy.id}`, { token: alice.apiKey })).body.disabled_at;
    expect(new Date(stamped).toISOString()).toBe(stamped);
    const second = await disable();
    expect({ status: second.status, body: second.body }).toEqual({ status: 200, body: { disabled: true } });
    // The first stamp stays.
    const listed = (await server.api("GET", "/v1/policies?kind=guardrail", { token: alice.apiKey })).body.data;
    expect(listed.find((p: any) => p.id === policy.id).disabled_at).toBe(stamped);
    for (let i = 0; i < 2; i++) {
      const enabled = await enable();
      expect({ status: enabled.status, body: enabled.body }).toEqual({ status: 200, body: { disabled: false } });
    }
    expect((await server.api("GET", `/v1/policies/${policy.id}`, { token: alice.apiKey })).body.disabled_at).toBeNull();
  });

  test("a disabled policy is skipped by the effective policy; re-enabled it applies again", async () => {
    const account = await server.createAccount();
    const policy = await createPolicy(account, { name: "cap", kind: "budget", spec: budget });
    await server.api("POST", `/v1/policies/${policy.id}/bind`, { token: account.apiKey, body: { principal_type: "namespace", principal_id: account.namespaceId } });
    const effective = () => server.api("GET", `/v1/policies/effective?principal_type=namespace&principal_id=${account.namespaceId}`, { token: account.apiKey });
    expect((await effective()).body.budgets).toEqual([budget]);
    await server.api("POST", `/v1/policies/${policy.id}/disable`, { token: account.apiKey });
    expect((await effective()).body).toEqual({ budgets: [], rate_limits: [], guardrail: null });
    await server.api("POST", `/v1/policies/${policy.id}/enable`, { token: account.apiKey });
    expect((await effective()).body.budgets).toEqual([budget]);
  });
});

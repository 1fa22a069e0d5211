import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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

const guardrail = { model_allow: ["openai/gpt-4.1-mini"], allow_streaming: false };
const budget = { window: "day", limit_micro_usd: 2_000_000 };
const rateLimit = { window_secs: 60, max_requests: 5 };

describe("budgets", () => {
  test("create, get, list, put and delete with the typed envelope", async () => {
    const ns = `/v1/namespaces/${alice.namespaceId}`;
    const created = await server.api("POST", `${ns}/budgets`, { token: alice.apiKey, body: { name: "ci", window: "day", limit_micro_usd: 5_000_000 } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^pol_/), name: "ci", window: "day", limit_micro_usd: 5_000_000, disabled_at: null });
    const id = created.body.id;
    expect((await server.api("GET", `${ns}/budgets/${id}`, { token: alice.apiKey })).body).toEqual(created.body);
    expect((await server.api("GET", `${ns}/budgets`, { token: alice.apiKey })).body.data).toContainEqual(created.body);
    // It is a policy of kind budget, with the flat spec.
    expect((await server.api("GET", `${ns}/policies/${id}`, { token: alice.apiKey })).body).toEqual({
      id,
      name: "ci",
      kind: "budget",
      spec: { window: "day", limit_micro_usd: 5_000_000 },
      disabled_at: null,
    });
    const limitOnly = await server.api("PUT", `${ns}/budgets/${id}`, { token: alice.apiKey, body: { limit_micro_usd: 9 } });
    expect(limitOnly.body).toEqual({ ...created.body, limit_micro_usd: 9 });
    const windowOnly = await server.api("PUT", `/v1/budgets/${id}`, { token: alice.apiKey, body: { window: "total", name: "ci total" } });
    expect(windowOnly.body).toEqual({ ...created.body, name: "ci total", window: "total", limit_micro_usd: 9 });
    const deleted = await server.api("DELETE", `/v1/budgets/${id}`, { token: alice.apiKey });
    expect(deleted.body).toEqual({ deleted: true });
    expect((await server.api("GET", `/v1/budgets/${id}`, { token: alice.apiKey })).status).toBe(404);
  });

  test("limit_micro_usd must be a positive safe integer and window a known one: 400 naming the field", async () => {
    for (const [body, field] of [
      [{ name: "x", window: "day", limit_micro_usd: 0 }, "limit_micro_usd"],
      [{ name: "x", window: "day", limit_micro_usd: -1 }, "limit_micro_usd"],
      [{ name: "x", window: "day", limit_micro_usd: 0.5 }, "limit_micro_usd"],
      [{ name: "x", window: "day" }, "limit_micro_usd"],
      [{ name: "x", window: "hour", limit_micro_usd: 1 }, "window"],
      [{ window: "day", limit_micro_usd: 1 }, "name"],
      [{ name: "x", window: "day", limit_micro_usd: 1, currency: "EUR" }, "currency"],
    ] as const) {
      const response = await server.api("POST", "/v1/budgets", { token: alice.apiKey, body });
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body.error_description).toContain(field);
    }
    const created = await server.api("POST", "/v1/budgets", { token: alice.apiKey, body: { name: "x", window: "day", limit_micro_usd: 1 } });
    const badPut = await server.api("PUT", `/v1/budgets/${created.body.id}`, { token: alice.apiKey, body: { limit_micro_usd: 0 } });
    expect(badPut.status).toBe(400);
    expect(badPut.body.error_description).toContain("limit_micro_usd");
    expect((await server.api("GET", `/v1/budgets/${created.body.id}`, { token: alice.apiKey })).body.limit_micro_usd).toBe(1);
  });

  test("a policy of another kind is not a budget (404), and budgets list only budgets", async () => {
    const preset = await server.api("POST", "/v1/presets", { token: alice.apiKey, body: { name: "p" } });
    for (const method of ["GET", "PUT", "DELETE"]) {
      const response = await server.api(method, `/v1/budgets/${preset.body.id}`, { token: alice.apiKey, body: method === "PUT" ? { name: "b" } : undefined });
      expect({ method, status: response.status, body: response.body }).toEqual({ method, status: 404, body: { error: "not_found", error_description: "budget not found" } });
    }
    expect((await server.api("GET", `/v1/presets/${preset.body.id}`, { token: alice.apiKey })).body.name).toBe("p");
    const budgets = await server.api("GET", "/v1/budgets", { token: alice.apiKey });
    expect(budgets.body.data.every((b: any) => typeof b.window === "string")).toBe(true);
  });

  test("toggled with the generic disable/enable", async () => {
    const created = await server.api("POST", "/v1/budgets", { token: alice.apiKey, body: { name: "t", window: "month", limit_micro_usd: 1 } });
    await server.api("POST", `/v1/policies/${created.body.id}/disable`, { token: alice.apiKey });
    expect((await server.api("GET", `/v1/budgets/${created.body.id}`, { token: alice.apiKey })).body.disabled_at).toEqual(expect.any(String));
  });
});

describe("presets", () => {
  test("create with some clauses; absent ones are null; an empty preset is valid", async () => {
    const created = await server.api("POST", "/v1/presets", { token: alice.apiKey, body: { name: "agent", guardrail, rate_limit: rateLimit } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^pol_/), name: "agent", guardrail, budget: null, rate_limit: rateLimit, disabled_at: null });
    expect((await server.api("GET", `/v1/presets/${created.body.id}`, { token: alice.apiKey })).body).toEqual(created.body);
    const empty = await server.api("POST", `/v1/namespaces/${alice.namespaceId}/presets`, { token: alice.apiKey, body: { name: "noop" } });
    expect(empty.body).toEqual({ id: expect.any(String), name: "noop", guardrail: null, budget: null, rate_limit: null, disabled_at: null });
    const listed = await server.api("GET", "/v1/presets", { token: alice.apiKey });
    expect(listed.body.data).toContainEqual(created.body);
    expect(listed.body.data).toContainEqual(empty.body);
  });

  test("stricter validation: a rate-limit clause needs max_requests or max_tokens; a budget needs limit_micro_usd > 0", async () => {
    for (const [body, field] of [
      [{ name: "x", rate_limit: { window_secs: 60 } }, "rate_limit"],
      [{ name: "x", rate_limit: { window_secs: 60, max_requests: null, max_tokens: null } }, "rate_limit"],
      [{ name: "x", budget: { window: "day", limit_micro_usd: 0 } }, "budget.limit_micro_usd"],
      [{ name: "x", guardrail: { content_patterns: [{ name: "p", pattern: "(x|xy)*z" }] } }, "guardrail.content_patterns.0.pattern"],
      [{ name: "x", policy: {} }, "policy"],
    ] as const) {
      const response = await server.api("POST", "/v1/presets", { token: alice.apiKey, body });
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body.error_description).toContain(field);
    }
    const tokensOnly = await server.api("POST", "/v1/presets", { token: alice.apiKey, body: { name: "x", rate_limit: { window_secs: 60, max_tokens: 100 } } });
    expect(tokensOnly.status).toBe(200);
  });

  test("PUT: absent = unchanged, JSON null is not a clear, clear_* removes a clause even when one is supplied", async () => {
    const created = await server.api("POST", "/v1/presets", { token: alice.apiKey, body: { name: "p", guardrail, budget, rate_limit: rateLimit } });
    const path = `/v1/presets/${created.body.id}`;
    const rename = await server.api("PUT", path, { token: alice.apiKey, body: { name: "renamed" } });
    expect(rename.body).toEqual({ ...created.body, name: "renamed" });
    const nulls = await server.api("PUT", path, { token: alice.apiKey, body: { guardrail: null, budget: null, rate_limit: null } });
    expect(nulls.body).toEqual(rename.body);
    const newBudget = { window: "month", limit_micro_usd: 30_000_000 };
    const replaced = await server.api("PUT", path, { token: alice.apiKey, body: { budget: newBudget } });
    expect(replaced.body).toEqual({ ...rename.body, budget: newBudget });
    const cleared = await server.api("PUT", path, { token: alice.apiKey, body: { clear_guardrail: true, rate_limit: { window_secs: 1, max_requests: 1 }, clear_rate_limit: true } });
    expect(cleared.body).toEqual({ ...replaced.body, guardrail: null, rate_limit: null });
    const falseClear = await server.api("PUT", path, { token: alice.apiKey, body: { clear_budget: false } });
    expect(falseClear.body).toEqual(cleared.body);
    expect((await server.api("GET", path, { token: alice.apiKey })).body).toEqual(cleared.body);
    // The generic view shows the same clauses as the spec.
    expect((await server.api("GET", `/v1/policies/${created.body.id}`, { token: alice.apiKey })).body.spec).toEqual({ guardrail: null, budget: newBudget, rate_limit: null });
  });

  test("PUT validation refuses and changes nothing", async () => {
    const created = await server.api("POST", "/v1/presets", { token: alice.apiKey, body: { name: "p", budget } });
    const path = `/v1/presets/${created.body.id}`;
    for (const [body, field] of [
      [{ rate_limit: { window_secs: 10 } }, "rate_limit"],
      [{ clear_budget: "yes" }, "clear_budget"],
      [{ budget: { window: "day", limit_micro_usd: -1 } }, "budget.limit_micro_usd"],
      [{ kind: "budget" }, "kind"],
    ] as const) {
      const response = await server.api("PUT", path, { token: alice.apiKey, body });
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body.error_description).toContain(field);
    }
    expect((await server.api("GET", path, { token: alice.apiKey })).body).toEqual(created.body);
  });

  test("another account's preset, and a non-preset policy, are 404 on every preset route", async () => {
    const bobs = await server.api("POST", "/v1/presets", { token: bob.apiKey, body: { name: "bob", budget } });
    const aBudget = await server.api("POST", "/v1/budgets", { token: alice.apiKey, body: { name: "b", window: "day", limit_micro_usd: 1 } });
    for (const id of [bobs.body.id, aBudget.body.id]) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const response = await server.api(method, `/v1/presets/${id}`, { token: alice.apiKey, body: method === "PUT" ? { name: "mine" } : undefined });
        expect({ id, method, status: response.status, body: response.body }).toEqual({ id, method, status: 404, body: { error: "not_found", error_description: "preset not found" } });
      }
    }
    expect((await server.api("GET", `/v1/presets/${bobs.body.id}`, { token: bob.apiKey })).body.name).toBe("bob");
    expect((await server.api("GET", `/v1/budgets/${aBudget.body.id}`, { token: alice.apiKey })).body.name).toBe("b");
  });

  test("delete answers { deleted: true } and takes the bindings", async () => {
    const created = await server.api("POST", "/v1/presets", { token: alice.apiKey, body: { name: "gone", budget } });
    await server.api("POST", `/v1/policies/${created.body.id}/bind`, { token: alice.apiKey, body: { principal_type: "namespace", principal_id: alice.namespaceId } });
    expect((await server.api("DELETE", `/v1/presets/${created.body.id}`, { token: alice.apiKey })).body).toEqual({ deleted: true });
    const bound = await server.api("GET", `/v1/principals/namespace/${alice.namespaceId}/policies`, { token: alice.apiKey });
    expect(bound.body.data.map((p: any) => p.id)).not.toContain(created.body.id);
  });
});

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

const budget = { window: "day", limit_micro_usd: 5_000_000 };
const rateLimit = { window_secs: 60, max_requests: 10 };

async function createPolicy(account: TestAccount, body: unknown) {
  const response = await server.api("POST", "/v1/policies", { token: account.apiKey, body });
  if (response.status !== 200) throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body as { id: string };
}

async function mintKey(account: TestAccount, scopes = ["inference:invoke"], nsid = account.namespaceId) {
  const response = await server.api("POST", `/v1/namespaces/${nsid}/keys`, { token: account.apiKey, body: { display_name: "k", scopes } });
  return { id: response.body.id as string, token: response.body.token as string };
}

const bind = (account: TestAccount, policyId: string, principal_type: string, principal_id: string, nsid = account.namespaceId) =>
  server.api("POST", `/v1/namespaces/${nsid}/policies/${policyId}/bind`, { token: account.apiKey, body: { principal_type, principal_id } });

describe("bind, unbind, bindings", () => {
  test("bind answers { binding_id }; bindings lists { id, policy_id, principal_type, principal_id }; unbind answers { unbound: true }", async () => {
    const policy = await createPolicy(alice, { name: "b", kind: "budget", spec: budget });
    const key = await mintKey(alice);
    const toKey = await bind(alice, policy.id, "api_key", key.id);
    expect(toKey.status).toBe(200);
    expect(toKey.body).toEqual({ binding_id: expect.stringMatching(/^pb_[a-z0-9]{16}$/) });
    const toNamespace = await bind(alice, policy.id, "namespace", alice.namespaceId);
    const listed = await server.api("GET", `/v1/namespaces/${alice.namespaceId}/policies/${policy.id}/bindings`, { token: alice.apiKey });
    expect(listed.body).toEqual({
      data: [
        { id: toKey.body.binding_id, policy_id: policy.id, principal_type: "api_key", principal_id: key.id },
        { id: toNamespace.body.binding_id, policy_id: policy.id, principal_type: "namespace", principal_id: alice.namespaceId },
      ],
    });
    const unbound = await server.api("DELETE", `/v1/policies/${policy.id}/bind/${toKey.body.binding_id}`, { token: alice.apiKey });
    expect({ status: unbound.status, body: unbound.body }).toEqual({ status: 200, body: { unbound: true } });
    const again = await server.api("DELETE", `/v1/policies/${policy.id}/bind/${toKey.body.binding_id}`, { token: alice.apiKey });
    expect({ status: again.status, body: again.body }).toEqual({ status: 404, body: { error: "not_found", error_description: "binding not found" } });
    const after = await server.api("GET", `/v1/policies/${policy.id}/bindings`, { token: alice.apiKey });
    expect(after.body.data.map((b: any) => b.id)).toEqual([toNamespace.body.binding_id]);
  });

  test("binding the same principal twice is idempotent: the existing binding's id, one row", async () => {
    const policy = await createPolicy(alice, { name: "b", kind: "budget", spec: budget });
    const first = await bind(alice, policy.id, "namespace", alice.namespaceId);
    const second = await bind(alice, policy.id, "namespace", alice.namespaceId);
    expect(second.status).toBe(200);
    expect(second.body.binding_id).toBe(first.body.binding_id);
    const listed = await server.api("GET", `/v1/policies/${policy.id}/bindings`, { token: alice.apiKey });
    expect(listed.body.data).toHaveLength(1);
  });

  test("a missing principal, an unknown oauth principal and another account's principal are the same 404", async () => {
    const policy = await createPolicy(alice, { name: "b", kind: "budget", spec: budget });
    const bobKey = await mintKey(bob);
    const missing = await bind(alice, policy.id, "api_key", "k_doesnotexist0000");
    expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { error: "not_found", error_description: "principal not found" } });
    for (const [type, id] of [
      ["api_key", bobKey.id],
      ["namespace", bob.namespaceId],
      ["namespace", "ns_doesnotexist00"],
      ["oauth_token", "tok_anything"],
      ["oauth_client", "brc_anything"],
    ]) {
      const response = await bind(alice, policy.id, type!, id!);
      expect({ type, status: response.status, body: response.body }).toEqual({ type, status: 404, body: missing.body });
    }
    expect((await server.api("GET", `/v1/policies/${policy.id}/bindings`, { token: alice.apiKey })).body.data).toEqual([]);
  });

  test("an unknown principal_type or a missing principal_id is a 400 naming it", async () => {
    const policy = await createPolicy(alice, { name: "b", kind: "budget", spec: budget });
    const badType = await bind(alice, policy.id, "account", alice.accountId);
    expect(badType.status).toBe(400);
    expect(badType.body.error_description).toContain("principal_type");
    const noId = await server.api("POST", `/v1/policies/${policy.id}/bind`, { token: alice.apiKey, body: { principal_type: "namespace" } });
    expect(noId.status).toBe(400);
    expect(noId.body.error_description).toContain("principal_id");
  });

  test("a namespace's policy cannot bind the account's other namespace or that namespace's keys", async () => {
    const other = await server.api("POST", "/v1/namespaces", { token: alice.apiKey, body: { name: "second" } });
    const otherKey = await mintKey(alice, ["inference:invoke"], other.body.id);
    const policy = await createPolicy(alice, { name: "b", kind: "budget", spec: budget });
    expect((await bind(alice, policy.id, "namespace", other.body.id)).status).toBe(404);
    expect((await bind(alice, policy.id, "api_key", otherKey.id)).status).toBe(404);
    // In its own namespace the same key binds.
    const own = await server.api("POST", `/v1/namespaces/${other.body.id}/policies`, { token: alice.apiKey, body: { name: "o", kind: "budget", spec: budget } });
    expect((await bind(alice, own.body.id, "api_key", otherKey.id, other.body.id)).status).toBe(200);
  });

  test("an account-wide caller may bind the account-wide key it uses", async () => {
    const account = await server.createAccount();
    const policy = await createPolicy(account, { name: "b", kind: "budget", spec: budget });
    const keyId = `k_${account.apiKey.slice(4).split(".")[0]}`;
    expect((await bind(account, policy.id, "api_key", keyId)).status).toBe(200);
    // A namespace-bound key of the same account may not reach it.
    const bound = await mintKey(account, ["policy:read", "policy:write"]);
    const response = await server.api("POST", `/v1/policies/${policy.id}/bind`, { token: bound.token, body: { principal_type: "api_key", principal_id: keyId } });
    expect(response.status).toBe(404);
  });

  test("unbinding through another policy of the same namespace is a 404", async () => {
    const one = await createPolicy(alice, { name: "one", kind: "budget", spec: budget });
    const two = await createPolicy(alice, { name: "two", kind: "budget", spec: budget });
    const binding = await bind(alice, one.id, "namespace", alice.namespaceId);
    const response = await server.api("DELETE", `/v1/policies/${two.id}/bind/${binding.body.binding_id}`, { token: alice.apiKey });
    expect(response.status).toBe(404);
    expect((await server.api("GET", `/v1/policies/${one.id}/bindings`, { token: alice.apiKey })).body.data).toHaveLength(1);
  });
});

describe("principals/{type}/{id}/policies and policies/effective", () => {
  test("lists the namespace's policies bound directly to the principal, disabled ones included", async () => {
    const account = await server.createAccount();
    const key = await mintKey(account);
    const onKey = await createPolicy(account, { name: "key", kind: "rate_limit", spec: rateLimit });
    const onNamespace = await createPolicy(account, { name: "ns", kind: "budget", spec: budget });
    await bind(account, onKey.id, "api_key", key.id);
    await bind(account, onNamespace.id, "namespace", account.namespaceId);
    await server.api("POST", `/v1/policies/${onKey.id}/disable`, { token: account.apiKey });
    const forKey = await server.api("GET", `/v1/namespaces/${account.namespaceId}/principals/api_key/${key.id}/policies`, { token: account.apiKey });
    expect(forKey.status).toBe(200);
    expect(forKey.body.data).toEqual([{ id: onKey.id, name: "key", kind: "rate_limit", spec: rateLimit, disabled_at: expect.any(String) }]);
    const forNamespace = await server.api("GET", `/v1/principals/namespace/${account.namespaceId}/policies`, { token: account.apiKey });
    expect(forNamespace.body.data.map((p: any) => p.id)).toEqual([onNamespace.id]);
  });

  test("another account's principal, a missing one and an unknown type are refused", async () => {
    const bobKey = await mintKey(bob);
    const foreign = await server.api("GET", `/v1/principals/api_key/${bobKey.id}/policies`, { token: alice.apiKey });
    const missing = await server.api("GET", "/v1/principals/api_key/k_doesnotexist0000/policies", { token: alice.apiKey });
    expect({ status: foreign.status, body: foreign.body }).toEqual({ status: 404, body: missing.body });
    expect(missing.status).toBe(404);
    const foreignEffective = await server.api("GET", `/v1/policies/effective?principal_type=api_key&principal_id=${bobKey.id}`, { token: alice.apiKey });
    expect({ status: foreignEffective.status, body: foreignEffective.body }).toEqual({ status: 404, body: missing.body });
    const unknownType = await server.api("GET", `/v1/principals/user/${alice.accountId}/policies`, { token: alice.apiKey });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.error_description).toContain("principal_type");
  });

  test("effective needs both principal_type and principal_id (400 naming the one missing)", async () => {
    const noType = await server.api("GET", `/v1/policies/effective?principal_id=${alice.namespaceId}`, { token: alice.apiKey });
    expect(noType.status).toBe(400);
    expect(noType.body.error_description).toContain("principal_type");
    const noId = await server.api("GET", "/v1/policies/effective?principal_type=namespace", { token: alice.apiKey });
    expect(noId.status).toBe(400);
    expect(noId.body.error_description).toContain("principal_id");
    const none = await server.api("GET", "/v1/policies/effective", { token: alice.apiKey });
    expect(none.status).toBe(400);
  });

  test("effective composes a key's policies with its namespace's, presets contributing their clauses", async () => {
    const account = await server.createAccount();
    const key = await mintKey(account);
    const path = `/v1/namespaces/${account.namespaceId}`;
    const nsBudget = await createPolicy(account, { name: "ns budget", kind: "budget", spec: { window: "month", limit_micro_usd: 100_000_000 } });
    const nsGuard = await createPolicy(account, {
      name: "ns guard",
      kind: "guardrail",
      spec: { model_allow: ["a/x", "b/y", "c/z"], model_deny: ["c/z"], max_request_tokens: 8000, content_patterns: [{ name: "aws", pattern: "AKIA[0-9A-Z]{16}" }] },
    });
    const keyPreset = await createPolicy(account, {
      name: "agent",
      kind: "preset",
      spec: {
        guardrail: { model_allow: ["a/x", "b/y"], allow_streaming: false, max_request_tokens: 2000, byok: "optional" },
        rate_limit: { window_secs: 60, max_requests: 30 },
        budget: { window: "day", limit_micro_usd: 1_000_000 },
      },
    });
    await bind(account, nsBudget.id, "namespace", account.namespaceId);
    await bind(account, nsGuard.id, "namespace", account.namespaceId);
    await bind(account, keyPreset.id, "api_key", key.id);

    const forKey = await server.api("GET", `${path}/policies/effective?principal_type=api_key&principal_id=${key.id}`, { token: account.apiKey });
    expect(forKey.status).toBe(200);
    expect(forKey.body).toEqual({
      budgets: [{ window: "month", limit_micro_usd: 100_000_000 }, { window: "day", limit_micro_usd: 1_000_000 }],
      rate_limits: [{ window_secs: 60, max_requests: 30 }],
      guardrail: {
        model_allow: ["a/x", "b/y"],
        model_deny: ["c/z"],
        max_request_tokens: 2000,
        allow_streaming: false,
        byok: "optional",
        content_patterns: [{ name: "aws", pattern: "AKIA[0-9A-Z]{16}" }],
      },
    });
    const forNamespace = await server.api("GET", `${path}/policies/effective?principal_type=namespace&principal_id=${account.namespaceId}`, { token: account.apiKey });
    expect(forNamespace.body).toEqual({
      budgets: [{ window: "month", limit_micro_usd: 100_000_000 }],
      rate_limits: [],
      guardrail: {
        model_allow: ["a/x", "b/y", "c/z"],
        model_deny: ["c/z"],
        max_request_tokens: 8000,
        allow_streaming: null,
        byok: null,
        content_patterns: [{ name: "aws", pattern: "AKIA[0-9A-Z]{16}" }],
      },
    });
    // A change on this instance applies at once (the store is invalidated, not waited out).
    await server.api("PUT", `/v1/policies/${nsBudget.id}`, { token: account.apiKey, body: { spec: { window: "total", limit_micro_usd: 7 } } });
    const changed = await server.api("GET", `${path}/policies/effective?principal_type=api_key&principal_id=${key.id}`, { token: account.apiKey });
    expect(changed.body.budgets[0]).toEqual({ window: "total", limit_micro_usd: 7 });
  });
});

describe("isolation, scopes, flat paths, OpenAPI", () => {
  test("another account's policy is a 404 like a missing one on every policy route, and stays untouched", async () => {
    const bobs = await createPolicy(bob, { name: "bob's", kind: "budget", spec: budget });
    const bobBinding = await server.api("POST", `/v1/policies/${bobs.id}/bind`, { token: bob.apiKey, body: { principal_type: "namespace", principal_id: bob.namespaceId } });
    const attempts: Array<[string, string, unknown?]> = [
      ["GET", "policies/{id}"],
      ["PUT", "policies/{id}", { name: "mine now" }],
      ["DELETE", "policies/{id}"],
      ["POST", "policies/{id}/bind", { principal_type: "namespace", principal_id: alice.namespaceId }],
      ["DELETE", `policies/{id}/bind/${bobBinding.body.binding_id}`],
      ["GET", "policies/{id}/bindings"],
      ["POST", "policies/{id}/disable"],
      ["POST", "policies/{id}/enable"],
      ["GET", "budgets/{id}"],
      ["PUT", "budgets/{id}", { name: "mine now" }],
      ["DELETE", "budgets/{id}"],
    ];
    for (const [method, template, body] of attempts) {
      const foreign = await server.api(method, `/v1/${template.replace("{id}", bobs.id)}`, { token: alice.apiKey, body });
      const missing = await server.api(method, `/v1/${template.replace("{id}", "pol_doesnotexist000")}`, { token: alice.apiKey, body });
      expect({ method, template, status: foreign.status, body: foreign.body }).toEqual({ method, template, status: 404, body: missing.body });
    }
    const still = await server.api("GET", `/v1/policies/${bobs.id}`, { token: bob.apiKey });
    expect(still.body).toEqual({ id: bobs.id, name: "bob's", kind: "budget", spec: budget, disabled_at: null });
    expect((await server.api("GET", `/v1/policies/${bobs.id}/bindings`, { token: bob.apiKey })).body.data).toHaveLength(1);
    // Alice's listings never show it.
    expect((await server.api("GET", "/v1/policies", { token: alice.apiKey })).body.data.map((p: any) => p.id)).not.toContain(bobs.id);
  });

  test("policy:read reads, policy:write is needed to change (403 naming the scope), and no policy scope is a 403 on reads", async () => {
    const reader = await mintKey(alice, ["policy:read"]);
    const writer = await mintKey(alice, ["policy:write"]);
    const wildcard = await mintKey(alice, ["policy:*"]);
    const none = await mintKey(alice, ["keys:read"]);
    const policy = await createPolicy(alice, { name: "s", kind: "budget", spec: budget });
    expect((await server.api("GET", "/v1/policies", { token: reader.token })).status).toBe(200);
    const refused = await server.api("POST", "/v1/policies", { token: reader.token, body: { name: "x", kind: "budget", spec: budget } });
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { error: "forbidden", error_description: "missing required scope: policy:write" } });
    for (const [method, path] of [
      ["POST", `/v1/policies/${policy.id}/disable`],
      ["POST", `/v1/policies/${policy.id}/bind`],
      ["DELETE", `/v1/policies/${policy.id}`],
      ["POST", "/v1/budgets"],
      ["POST", "/v1/presets"],
    ]) {
      expect({ path, status: (await server.api(method!, path!, { token: reader.token, body: {} })).status }).toEqual({ path, status: 403 });
    }
    const noRead = await server.api("GET", "/v1/presets", { token: none.token });
    expect(noRead.body).toEqual({ error: "forbidden", error_description: "missing required scope: policy:read" });
    expect((await server.api("GET", "/v1/budgets", { token: writer.token })).status).toBe(403);
    expect((await server.api("POST", "/v1/presets", { token: writer.token, body: { name: "w" } })).status).toBe(200);
    expect((await server.api("GET", "/v1/presets", { token: wildcard.token })).status).toBe(200);
    expect((await server.api("GET", "/v1/policies")).status).toBe(401);
  });

  test("the flat paths, `me` and the namespace id name the same namespace", async () => {
    const account = await server.createAccount();
    const bound = await mintKey(account, ["policy:read", "policy:write"]);
    const created = await server.api("POST", "/v1/policies", { token: bound.token, body: { name: "flat", kind: "guardrail", spec: { allow_streaming: false } } });
    for (const base of ["/v1", "/v1/namespaces/me", `/v1/namespaces/${account.namespaceId}`]) {
      const listed = await server.api("GET", `${base}/policies`, { token: bound.token });
      expect({ base, ids: listed.body.data.map((p: any) => p.id) }).toEqual({ base, ids: [created.body.id] });
    }
    // The account-wide key's `me` is the account's oldest namespace: the same one.
    expect((await server.api("GET", "/v1/namespaces/me/policies", { token: account.apiKey })).body.data).toHaveLength(1);
  });

  test("every policy route is in /openapi/json with its x-scope, in both forms", async () => {
    const spec = await server.api("GET", "/openapi/json");
    const expected: Array<[string, string, string]> = [
      ["get", "/policies", "policy:read"],
      ["post", "/policies", "policy:write"],
      ["get", "/policies/effective", "policy:read"],
      ["get", "/policies/{id}", "policy:read"],
      ["put", "/policies/{id}", "policy:write"],
      ["delete", "/policies/{id}", "policy:write"],
      ["post", "/policies/{id}/bind", "policy:write"],
      ["delete", "/policies/{id}/bind/{binding_id}", "policy:write"],
      ["get", "/policies/{id}/bindings", "policy:read"],
      ["post", "/policies/{id}/disable", "policy:write"],
      ["post", "/policies/{id}/enable", "policy:write"],
      ["get", "/principals/{principal_type}/{principal_id}/policies", "policy:read"],
      ["get", "/budgets", "policy:read"],
      ["post", "/budgets", "policy:write"],
      ["get", "/budgets/{id}", "policy:read"],
      ["put", "/budgets/{id}", "policy:write"],
      ["delete", "/budgets/{id}", "policy:write"],
      ["get", "/presets", "policy:read"],
      ["post", "/presets", "policy:write"],
      ["get", "/presets/{id}", "policy:read"],
      ["put", "/presets/{id}", "policy:write"],
      ["delete", "/presets/{id}", "policy:write"],
    ];
    for (const [method, path, scope] of expected) {
      for (const base of ["/v1/namespaces/{nsid}", "/v1"]) {
        expect({ route: `${method} ${base}${path}`, scope: spec.body.paths[base + path]?.[method]?.["x-scope"] }).toEqual({ route: `${method} ${base}${path}`, scope });
      }
    }
    const effective = spec.body.paths["/v1/policies/effective"].get.parameters;
    expect(effective.filter((p: any) => p.in === "query").map((p: any) => [p.name, p.required])).toEqual([["principal_type", true], ["principal_id", true]]);
  });
});

describe("a credential cannot loosen a policy that binds it", () => {
  const writeScopes = ["policy:read", "policy:write", "keys:write", "inference:invoke"];

  test("PUT, disable, DELETE and unbind by the bound key are 403 and leave the policy as it was", async () => {
    const policy = await createPolicy(alice, { name: "self", kind: "budget", spec: budget });
    const key = await mintKey(alice, writeScopes);
    const binding = await bind(alice, policy.id, "api_key", key.id);
    const base = `/v1/namespaces/${alice.namespaceId}`;
    const attempts = [
      server.api("PUT", `${base}/policies/${policy.id}`, { token: key.token, body: { spec: { window: "day", limit_micro_usd: 999_000_000 } } }),
      server.api("PUT", `${base}/budgets/${policy.id}`, { token: key.token, body: { limit_micro_usd: 999_000_000 } }),
      server.api("POST", `${base}/policies/${policy.id}/disable`, { token: key.token }),
      server.api("DELETE", `${base}/policies/${policy.id}`, { token: key.token }),
      server.api("DELETE", `${base}/budgets/${policy.id}`, { token: key.token }),
      server.api("DELETE", `${base}/policies/${policy.id}/bind/${binding.body.binding_id}`, { token: key.token }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ error: "forbidden", error_description: expect.stringContaining("bound to itself") });
    }
    const after = await server.api("GET", `${base}/policies/${policy.id}`, { token: alice.apiKey });
    expect(after.body).toMatchObject({ spec: budget, disabled_at: null });
    const bindings = await server.api("GET", `${base}/policies/${policy.id}/bindings`, { token: alice.apiKey });
    expect(bindings.body.data.map((b: any) => b.principal_id)).toEqual([key.id]);
    // Enabling only tightens, and the account's own key may change the policy.
    expect((await server.api("POST", `${base}/policies/${policy.id}/enable`, { token: key.token })).status).toBe(200);
    expect((await server.api("POST", `${base}/policies/${policy.id}/disable`, { token: alice.apiKey })).status).toBe(200);
  });

  test("a key minted by the bound key cannot change it either; an unbound key with policy:write can", async () => {
    const policy = await createPolicy(alice, { name: "parent's", kind: "budget", spec: budget });
    const parent = await mintKey(alice, writeScopes);
    await bind(alice, policy.id, "api_key", parent.id);
    const child = await server.api("POST", "/v1/keys", { token: parent.token, body: { display_name: "child", scopes: writeScopes } });
    expect(child.status).toBe(200);
    const base = `/v1/namespaces/${alice.namespaceId}`;
    const refused = await server.api("POST", `${base}/policies/${policy.id}/disable`, { token: child.body.token });
    expect(refused.status).toBe(403);
    const other = await mintKey(alice, writeScopes);
    expect((await server.api("PUT", `${base}/policies/${policy.id}`, { token: other.token, body: { name: "renamed" } })).status).toBe(200);
    // Another tenant's policy stays a 404, not a 403.
    expect((await server.api("POST", `/v1/policies/${policy.id}/disable`, { token: (await mintKey(bob, writeScopes)).token })).status).toBe(404);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { formToken, getPage, postForm, signedInUser, submitForm, type ConsoleUser } from "../support/console-session";
import { deviceTokens } from "../oauth/oauth-support";
import { callThroughSdk } from "../policy-enforcement/enforcement-support";

/**
 * The policies page's guardrail, bind and unbind forms, and the keys page's expiry date,
 * over plain HTTP against a server whose upstreams are the mocks: what the forms store is
 * what the JSON API reads back, and a guardrail made in the console refuses real requests.
 */
const ALLOWED = "mock-openai/gpt-4o-mini";
const DENIED = "mock-anthropic/claude-sonnet-4-5";

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
}, 60_000);
afterAll(() => harness.close());
beforeEach(async () => {
  await harness.server.server.services.db.sql`delete from auth_throttle`;
});

const api = (method: string, path: string, token: string, body?: unknown) => harness.server.api(method, path, { token, body });
const formError = (page: string) => /<p class="error" role="alert" id="form-error">([^<]*)<\/p>/.exec(page)?.[1] ?? "";

/** A namespace key made in the console with inference:invoke; its token and id. */
async function consoleKey(user: ConsoleUser, name: string, extra: Record<string, string> = {}) {
  const posted = await submitForm(harness.server, user, "/console/keys", "/console/keys", { display_name: name, "scope.inference:invoke": "on", ...extra });
  expect(posted.status).toBe(303);
  const created = await getPage(harness.server, user, posted.location!);
  const token = /id="new-token" type="text" readonly value="([^"]+)"/.exec(created.text)![1]!;
  const listed = (await api("GET", "/v1/keys", user.apiKey)).body.data as { id: string; display_name: string; expires_at: string | null }[];
  return { token, key: listed.find((entry) => entry.display_name === name)!, page: created.text };
}

async function bindingsOf(user: ConsoleUser, policyId: string) {
  const response = await api("GET", `/v1/policies/${policyId}/bindings`, user.apiKey);
  expect(response.status).toBe(200);
  return response.body.data as { id: string; principal_type: string; principal_id: string }[];
}

describe("a guardrail made in the console", () => {
  test("stores exactly the rules typed, and once bound to the namespace refuses a denied model and a blocked pattern", async () => {
    const user = await signedInUser(harness.server, 50_000_000);
    const { token } = await consoleKey(user, "app");
    const created = await submitForm(harness.server, user, "/console/policies", "/console/policies/guardrail", {
      name: "no claude",
      model_allow: "",
      model_deny: `${DENIED}\n\n${DENIED}\n`,
      allow_streaming: "on",
      max_request_tokens: "",
      byok: "",
      "pattern-1-name": "",
      "pattern-1-regex": "",
      "pattern-1-action": "block",
      "pattern-2-name": "ticket",
      "pattern-2-regex": "TICKET-\\d{4}",
      "pattern-2-action": "block",
    });
    expect(created.status).toBe(303);
    expect(created.location).toBe(`/console/policies?ns=${user.namespaceId}&done=guardrail`);
    const [guardrail] = (await api("GET", "/v1/policies?kind=guardrail", user.apiKey)).body.data;
    expect(guardrail).toMatchObject({ name: "no claude", disabled_at: null });
    // The empty row is skipped, the duplicate model kept once, a checked streaming box stores no rule.
    expect(guardrail.spec).toEqual({ model_deny: [DENIED], content_patterns: [{ name: "ticket", pattern: "TICKET-\\d{4}", action: "block" }] });

    // Bound to nothing, it applies to nothing: the denied model still answers.
    expect((await callThroughSdk(harness, "openai-chat", token, DENIED, { stream: false })).ok).toBe(true);
    const page = (await getPage(harness.server, user, "/console/policies")).text;
    expect(page).toContain("Nothing yet: bound to nothing, it applies to no request.");
    expect(page).toContain(`<option value="namespace:${user.namespaceId}">`);

    const bound = await submitForm(harness.server, user, "/console/policies", "/console/policies/bind", { id: guardrail.id, principal: `namespace:${user.namespaceId}` });
    expect(bound.status).toBe(303);
    expect(bound.location).toContain("done=bound");
    expect(await bindingsOf(user, guardrail.id)).toEqual([expect.objectContaining({ principal_type: "namespace", principal_id: user.namespaceId })]);

    const denied = await callThroughSdk(harness, "openai-chat", token, DENIED, { stream: false });
    expect(denied).toMatchObject({ ok: false, status: 403, code: "permission_denied" });
    const blocked = await callThroughSdk(harness, "openai-chat", token, ALLOWED, { stream: false, prompt: "See TICKET-1234, please." });
    expect(blocked).toMatchObject({ ok: false, status: 403, code: "permission_denied" });
    // Streaming stays allowed and a clean prompt to an allowed model passes.
    expect((await callThroughSdk(harness, "openai-chat", token, ALLOWED, { stream: true })).ok).toBe(true);
    expect((await getPage(harness.server, user, "/console/policies")).text).toContain(`The whole namespace`);
  }, 60_000);

  test("a pattern that can backtrack exponentially is refused with the service's reason, 400, what was typed kept, nothing stored", async () => {
    const user = await signedInUser(harness.server);
    const viaApi = await api("POST", "/v1/policies", user.apiKey, { name: "g", kind: "guardrail", spec: { content_patterns: [{ name: "runaway", pattern: "(a+)+$" }] } });
    expect(viaApi.status).toBe(400);
    const reason = (viaApi.body.error_description as string).replace(/^spec\.content_patterns\.0\.pattern /, "");
    expect(reason).toContain("catastrophic backtracking");
    const refused = await submitForm(harness.server, user, "/console/policies", "/console/policies/guardrail", {
      name: "g",
      model_deny: "openai/gpt-4.1-mini",
      "pattern-1-name": "runaway",
      "pattern-1-regex": "(a+)+$",
      "pattern-1-action": "block",
    });
    expect(refused.status).toBe(400);
    expect(formError(refused.text)).toBe(`Content pattern 1 (“runaway”): the regular expression ${reason}.`);
    expect(refused.text).toContain('value="(a+)+$"');
    expect(refused.text).toContain(">openai/gpt-4.1-mini</textarea>");
    // Unchecked on the refused post, the streaming box comes back unchecked.
    expect(/<input type="checkbox" id="guard-streaming"[^>]*>/.exec(refused.text)![0]).not.toContain("checked");
    expect((await api("GET", "/v1/policies", user.apiKey)).body.data).toEqual([]);
  });
});

describe("bindings from the console", () => {
  test("a budget bound to an API key shows the key by name and id, reads back through the API, and is unbound", async () => {
    const user = await signedInUser(harness.server);
    const { key } = await consoleKey(user, "deploy bot");
    expect((await submitForm(harness.server, user, "/console/policies", "/console/policies/budget", { name: "daily", window: "day", limit_usd: "5" })).status).toBe(303);
    const [budget] = (await api("GET", "/v1/budgets", user.apiKey)).body.data;
    const bound = await submitForm(harness.server, user, "/console/policies", "/console/policies/bind", { id: budget.id, principal: `api_key:${key.id}` });
    expect(bound.status).toBe(303);
    const bindings = await bindingsOf(user, budget.id);
    expect(bindings).toEqual([expect.objectContaining({ principal_type: "api_key", principal_id: key.id })]);
    // The API sees the key's policy the same way.
    expect((await api("GET", `/v1/principals/api_key/${key.id}/policies`, user.apiKey)).body.data.map((row: { id: string }) => row.id)).toEqual([budget.id]);
    const page = (await getPage(harness.server, user, "/console/policies")).text;
    expect(page).toContain(`<span id="binding-${bindings[0]!.id}">API key “deploy bot” (${key.id})</span>`);
    // A bound principal is no longer offered for that policy.
    expect(page).not.toContain(`<option value="api_key:${key.id}">`);

    const unbind = { csrf_token: formToken(page, "/console/policies/unbind"), ns: user.namespaceId, id: budget.id, binding: bindings[0]!.id };
    const unbound = await postForm(harness.server, user, "/console/policies/unbind", unbind);
    expect(unbound.status).toBe(303);
    expect(unbound.location).toContain("done=unbound");
    expect(await bindingsOf(user, budget.id)).toEqual([]);
    expect((await getPage(harness.server, user, "/console/policies")).text).not.toContain(`id="binding-`);
    // Unbinding the same binding again: it is gone, a 404 page.
    const again = await postForm(harness.server, user, "/console/policies/unbind", unbind);
    expect(again.status).toBe(404);
    expect(again.text).toContain("binding not found");
  });

  test("the bind list offers the namespace, its live keys, its live OAuth grants and its clients, and nothing revoked", async () => {
    const user = await signedInUser(harness.server);
    const { key } = await consoleKey(user, "live key");
    const { key: revoked } = await consoleKey(user, "old key");
    expect((await submitForm(harness.server, user, "/console/keys", "/console/keys/revoke", { id: revoked.id })).status).toBe(303);
    const client = await api("POST", "/v1/oauth/clients", user.apiKey, { client_name: "Reports", client_type: "public", redirect_uris: ["https://r.example/cb"], allowed_grant_types: ["authorization_code"] });
    expect(client.status).toBe(200);
    await deviceTokens(harness.server, user.apiKey, user.namespaceId, "usage:read");
    const [grant] = (await api("GET", "/v1/oauth/tokens", user.apiKey)).body.data;
    expect((await api("POST", "/v1/budgets", user.apiKey, { name: "cap", window: "total", limit_micro_usd: 1_000 })).status).toBe(200);
    const page = (await getPage(harness.server, user, "/console/policies")).text;
    const select = /<select id="bind-[^"]+" name="principal">(.*?)<\/select>/s.exec(page)![1]!;
    const values = [...select.matchAll(/<option value="([^"]+)">/g)].map((match) => match[1]);
    expect(values).toEqual([`namespace:${user.namespaceId}`, `api_key:${key.id}`, `oauth_token:${grant.id}`, `oauth_client:${client.body.id}`]);
    expect(select).toContain(`<optgroup label="API keys"><option value="api_key:${key.id}">API key “live key” (${key.id})</option></optgroup>`);
    expect(select).toContain(`<option value="oauth_token:${grant.id}">OAuth grant to ${grant.client_id} (${grant.id})</option>`);
    expect(select).toContain(`<optgroup label="OAuth clients"><option value="oauth_client:${client.body.id}">OAuth client “Reports” (${client.body.client_id})</option>`);
    // Binding the client works through the same service as the API.
    const [budget] = (await api("GET", "/v1/budgets", user.apiKey)).body.data;
    expect((await submitForm(harness.server, user, "/console/policies", "/console/policies/bind", { id: budget.id, principal: `oauth_client:${client.body.id}` })).status).toBe(303);
    expect(await bindingsOf(user, budget.id)).toEqual([expect.objectContaining({ principal_type: "oauth_client", principal_id: client.body.id })]);
    expect((await getPage(harness.server, user, "/console/policies")).text).toContain(`<span id="binding-`);
  });

  test("another account's key, client, namespace, policy or binding in a bind form is a 404 page and binds nothing", async () => {
    const alice = await signedInUser(harness.server);
    const bob = await signedInUser(harness.server);
    const aliceBudget = (await api("POST", "/v1/budgets", alice.apiKey, { name: "a", window: "day", limit_micro_usd: 5 })).body.id as string;
    const bobBudget = (await api("POST", "/v1/budgets", bob.apiKey, { name: "b", window: "day", limit_micro_usd: 5 })).body.id as string;
    const bobKey = (await api("POST", "/v1/keys", bob.apiKey, { display_name: "bob", scopes: ["usage:read"] })).body.id as string;
    const bobClient = (await api("POST", "/v1/oauth/clients", bob.apiKey, { client_name: "b", client_type: "public", redirect_uris: ["https://b.example/cb"], allowed_grant_types: ["authorization_code"] })).body.id as string;
    const bobBinding = (await api("POST", `/v1/policies/${bobBudget}/bind`, bob.apiKey, { principal_type: "api_key", principal_id: bobKey })).body.binding_id as string;
    // Alice's own binding, so her page has an unbind form, and a key of hers still to bind.
    expect((await api("POST", "/v1/keys", alice.apiKey, { display_name: "alice", scopes: ["usage:read"] })).status).toBe(200);
    const aliceBinding = (await api("POST", `/v1/policies/${aliceBudget}/bind`, alice.apiKey, { principal_type: "namespace", principal_id: alice.namespaceId })).body.binding_id as string;
    for (const principal of [`api_key:${bobKey}`, `oauth_client:${bobClient}`, `namespace:${bob.namespaceId}`, "oauth_token:og_missing", "api_key:k_\u0000"]) {
      const response = await submitForm(harness.server, alice, "/console/policies", "/console/policies/bind", { id: aliceBudget, principal });
      expect({ principal, status: response.status }).toEqual({ principal, status: 404 });
      expect(response.text).toContain("principal not found");
    }
    const foreignPolicy = await submitForm(harness.server, alice, "/console/policies", "/console/policies/bind", { id: bobBudget, principal: `namespace:${alice.namespaceId}` });
    expect(foreignPolicy.status).toBe(404);
    expect(foreignPolicy.text).toContain("policy not found");
    for (const fields of [{ id: aliceBudget, binding: bobBinding }, { id: bobBudget, binding: bobBinding }, { id: aliceBudget, binding: "pb_\u0000" }]) {
      const foreignUnbind = await submitForm(harness.server, alice, "/console/policies", "/console/policies/unbind", fields);
      expect(foreignUnbind.status).toBe(404);
    }
    expect(await bindingsOf(alice, aliceBudget)).toEqual([expect.objectContaining({ id: aliceBinding })]);
    expect(await bindingsOf(bob, bobBudget)).toEqual([expect.objectContaining({ id: bobBinding, principal_id: bobKey })]);
  });

  test("a bind form without a principal, or naming no principal type, is the page again with the reason and 400", async () => {
    const user = await signedInUser(harness.server);
    const budget = (await api("POST", "/v1/budgets", user.apiKey, { name: "a", window: "day", limit_micro_usd: 5 })).body.id as string;
    for (const [principal, message] of [
      ["", "Choose what to bind the policy to."],
      ["user:u_1", "principal must be one of &quot;namespace&quot;, &quot;api_key&quot;, &quot;oauth_token&quot;, &quot;oauth_client&quot;"],
    ] as const) {
      const response = await submitForm(harness.server, user, "/console/policies", "/console/policies/bind", { id: budget, principal });
      expect(response.status).toBe(400);
      expect(formError(response.text)).toBe(message);
      expect(response.text).toContain('action="/console/policies/bind"');
    }
    expect(await bindingsOf(user, budget)).toEqual([]);
  });

  test("the guardrail, bind and unbind forms without their CSRF token are 403 and change nothing", async () => {
    const user = await signedInUser(harness.server);
    const budget = (await api("POST", "/v1/budgets", user.apiKey, { name: "a", window: "day", limit_micro_usd: 5 })).body.id as string;
    const binding = (await api("POST", `/v1/policies/${budget}/bind`, user.apiKey, { principal_type: "namespace", principal_id: user.namespaceId })).body.binding_id as string;
    const attempts: Array<[string, Record<string, string>]> = [
      ["/console/policies/guardrail", { name: "g", model_deny: "a/b" }],
      ["/console/policies/bind", { id: budget, principal: `namespace:${user.namespaceId}` }],
      ["/console/policies/unbind", { id: budget, binding }],
      ["/console/keys", { display_name: "k", "scope.usage:read": "on", expires_on: "2099-01-01" }],
    ];
    for (const [action, fields] of attempts) {
      const response = await postForm(harness.server, user, action, { ...fields, ns: user.namespaceId });
      expect({ action, status: response.status }).toEqual({ action, status: 403 });
    }
    expect((await api("GET", "/v1/policies", user.apiKey)).body.data.map((row: { id: string }) => row.id)).toEqual([budget]);
    expect(await bindingsOf(user, budget)).toEqual([expect.objectContaining({ id: binding })]);
    expect((await api("GET", "/v1/keys", user.apiKey)).body.data).toEqual([]);
  });
});

describe("key expiry from the console", () => {
  test("a key with an expiry date works until the end of that day UTC: the page and the API show the same moment", async () => {
    const user = await signedInUser(harness.server, 10_000_000);
    const day = new Date(Date.now() + 40 * 86_400_000).toISOString().slice(0, 10);
    const { token, key, page } = await consoleKey(user, "temporary", { expires_on: day });
    expect(key.expires_at).toBe(`${day}T23:59:59.999Z`);
    expect(page).toContain(`<td data-label="Status" class="wrap">active, expires ${day} 23:59 UTC</td>`);
    expect((await callThroughSdk(harness, "openai-chat", token, ALLOWED, { stream: false })).ok).toBe(true);
    // Today is still a valid choice: the key lasts until midnight UTC.
    const today = new Date().toISOString().slice(0, 10);
    const { key: todays } = await consoleKey(user, "today only", { expires_on: today });
    expect(todays.expires_at).toBe(`${today}T23:59:59.999Z`);
    // Without a date the key does not expire.
    const { key: forever } = await consoleKey(user, "forever");
    expect(forever.expires_at).toBeNull();
    expect((await getPage(harness.server, user, "/console/keys")).text).toContain('<td data-label="Status" class="wrap">active, never expires</td>');
  });

  test("a date that has passed is refused with 400, the form kept, no key made", async () => {
    const user = await signedInUser(harness.server);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const refused = await submitForm(harness.server, user, "/console/keys", "/console/keys", { display_name: "late", "scope.usage:read": "on", expires_on: yesterday });
    expect(refused.status).toBe(400);
    expect(formError(refused.text)).toBe("The expiry date must be today or later (UTC).");
    expect(refused.text).toContain(`value="${yesterday}"`);
    expect((await api("GET", "/v1/keys", user.apiKey)).body.data).toEqual([]);
  });
});

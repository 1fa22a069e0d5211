import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { startTestServer, type TestServer } from "../support/test-server";
import { CONSOLE_PASSWORD, formToken, getPage, postForm, signedInUser, submitForm, type ConsoleUser } from "../support/console-session";
import { signInOverHttp } from "../support/console-http";
import { deviceTokens } from "../oauth/oauth-support";

let server: TestServer;
beforeAll(async () => {
  await sodium.ready;
  server = await startTestServer();
});
afterAll(() => server.close());
beforeEach(async () => {
  await server.server.services.db.sql`delete from auth_throttle`;
});

const PAGES = ["/console/requests", "/console/keys", "/console/byok", "/console/policies", "/console/routing-presets", "/console/oauth"];

/** What each of a user's rows is, made through the JSON API, so every row's form is on its page. */
async function resources(user: ConsoleUser) {
  const key = await server.api("POST", "/v1/keys", { token: user.apiKey, body: { display_name: "ci", scopes: ["keys:read"] } });
  const policy = await server.api("POST", "/v1/budgets", { token: user.apiKey, body: { name: "daily", window: "day", limit_micro_usd: 1_000_000 } });
  const preset = await server.api("POST", "/v1/routing-presets", { token: user.apiKey, body: { name: "fast", model: "openai/gpt-4o-mini" } });
  const policyPreset = await server.api("POST", "/v1/policies", { token: user.apiKey, body: { name: "bundle", kind: "preset", spec: { budget: { window: "day", limit_micro_usd: 1_000_000 } } } });
  const client = await server.api("POST", "/v1/oauth/clients", {
    token: user.apiKey,
    body: { client_name: "app", client_type: "public", redirect_uris: ["https://app.example/cb"], allowed_grant_types: ["authorization_code"] },
  });
  const tokens = await deviceTokens(server, user.apiKey, user.namespaceId, "usage:read");
  const grants = await server.api("GET", "/v1/oauth/tokens", { token: user.apiKey });
  const { kek_id, public_key } = (await server.api("GET", "/v1/byok/encryption-pubkey")).body;
  const box = sodium.crypto_box_seal(sodium.from_string("sk-test-0123456789abcdef"), sodium.from_base64(public_key, sodium.base64_variants.ORIGINAL));
  const byok = await server.api("POST", "/v1/byok/keys", {
    token: user.apiKey,
    body: { provider_name: "openai", kek_id, ciphertext_b64: sodium.to_base64(box, sodium.base64_variants.ORIGINAL), key_prefix: "sk-" },
  });
  const binding = await server.api("POST", `/v1/policies/${policy.body.id}/bind`, { token: user.apiKey, body: { principal_type: "api_key", principal_id: key.body.id } });
  for (const made of [key, policy, preset, policyPreset, client, grants, byok, binding]) expect(made.status).toBe(200);
  return { keyId: key.body.id as string, keyToken: key.body.token as string, policyId: policy.body.id as string, policyPresetId: policyPreset.body.id as string, bindingId: binding.body.binding_id as string, clientRowId: client.body.id as string, presetId: preset.body.id as string, clientId: client.body.id as string, grantId: grants.body.data[0].id as string, accessToken: tokens.access_token };
}

/** Every form of the management pages: where it posts, the page it is on, and fields that would be valid. */
function forms(ids: Awaited<ReturnType<typeof resources>>): Array<{ action: string; page: string; fields: Record<string, string> }> {
  return [
    { action: "/console/keys", page: "/console/keys", fields: { display_name: "new key", "scope.usage:read": "on", expires_on: "" } },
    { action: "/console/keys/revoke", page: "/console/keys", fields: { id: ids.keyId } },
    { action: "/console/byok", page: "/console/byok", fields: { provider_name: "openai", kek_id: "x", ciphertext_b64: "AAAA", key_prefix: "" } },
    { action: "/console/byok/delete", page: "/console/byok", fields: { provider: "openai" } },
    { action: "/console/policies/budget", page: "/console/policies", fields: { name: "b", window: "day", limit_usd: "5" } },
    { action: "/console/policies/rate-limit", page: "/console/policies", fields: { name: "r", window_secs: "60", max_requests: "10" } },
    { action: "/console/policies/edit-budget", page: "/console/policies", fields: { id: ids.policyId, window: "month", limit_usd: "9" } },
    { action: "/console/policies/edit-preset-budget", page: "/console/policies", fields: { id: ids.policyPresetId, window: "month", limit_usd: "9" } },
    { action: "/console/namespaces", page: "/console/keys", fields: { name: "another" } },
    { action: "/console/policies/disable", page: "/console/policies", fields: { id: ids.policyId } },
    { action: "/console/policies/delete", page: "/console/policies", fields: { id: ids.policyId } },
    {
      action: "/console/policies/guardrail",
      page: "/console/policies",
      fields: { name: "g", model_allow: "", model_deny: "openai/gpt-4.1-mini", allow_streaming: "on", max_request_tokens: "", byok: "", "pattern-1-name": "card", "pattern-1-regex": "\\d{16}", "pattern-1-action": "block" },
    },
    { action: "/console/policies/bind", page: "/console/policies", fields: { id: ids.policyId, principal: `oauth_client:${ids.clientRowId}` } },
    { action: "/console/policies/unbind", page: "/console/policies", fields: { id: ids.policyId, binding: ids.bindingId } },
    { action: "/console/routing-presets", page: "/console/routing-presets", fields: { name: "p2", model: "", system_prompt: "" } },
    { action: "/console/routing-presets/disable", page: "/console/routing-presets", fields: { id: ids.presetId } },
    { action: "/console/routing-presets/delete", page: "/console/routing-presets", fields: { id: ids.presetId } },
    { action: "/console/oauth/clients", page: "/console/oauth", fields: { client_name: "c", client_type: "public", redirect_uris: "https://c.example/cb", "grant.authorization_code": "on" } },
    { action: "/console/oauth/clients/delete", page: "/console/oauth", fields: { id: ids.clientId } },
    { action: "/console/oauth/grants/revoke", page: "/console/oauth", fields: { id: ids.grantId } },
  ];
}

/** What the user's rows are now, to show a refused form changed nothing. */
async function snapshot(user: ConsoleUser) {
  const read = async (path: string) => (await server.api("GET", path, { token: user.apiKey })).body;
  return JSON.stringify([await read("/v1/keys"), await read("/v1/policies"), await read("/v1/routing-presets"), await read("/v1/oauth/clients"), await read("/v1/oauth/tokens"), await read("/v1/byok/keys"), await read("/v1/namespaces")]);
}

describe("the management pages over HTTP", () => {
  test("each needs a session: without one it sends the browser to sign in and back", async () => {
    for (const path of PAGES) {
      const response = await fetch(`${server.url}${path}?ns=x`, { redirect: "manual" });
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(`/console?next=${encodeURIComponent(`${path}?ns=x`)}`);
    }
    // A form posted without a session changes nothing and leads back to its page after sign-in.
    for (const [action, page] of [["/console/keys/revoke", "/console/keys"], ["/console/oauth/clients/delete", "/console/oauth"], ["/console/byok", "/console/byok"]]) {
      const response = await fetch(`${server.url}${action}`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "id=k_1" });
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(`/console?next=${encodeURIComponent(page!)}`);
    }
  });

  test("each page carries the console's headers, loads nothing from elsewhere and labels every field", async () => {
    const user = await signedInUser(server);
    await resources(user);
    for (const path of PAGES) {
      const { status, text, response } = await getPage(server, user, path);
      expect(status).toBe(200);
      const csp = response.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain("unsafe");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(text).not.toMatch(/(src|href|action)="(https?:)?\/\//);
      // Every visible field has a <label for> naming its id.
      for (const match of text.matchAll(/<(input|select|textarea)\b([^>]*)>/g)) {
        if (/type="hidden"/.test(match[2]!)) continue;
        const id = /\bid="([^"]+)"/.exec(match[2]!)?.[1];
        expect(id).toBeDefined();
        expect(text).toContain(`for="${id}"`);
      }
      // The namespace picker keeps ?ns= on every navigation link.
      expect(text).toContain(`href="/console/keys?ns=${user.namespaceId}"`);
    }
  });

  test("a namespace of another account, or none at all, is a 404 page", async () => {
    const alice = await signedInUser(server);
    const bob = await signedInUser(server);
    for (const path of PAGES) {
      for (const ns of [bob.namespaceId, "ns_missing", "%00"]) {
        const { status, text } = await getPage(server, alice, `${path}?ns=${ns}`);
        expect(status).toBe(404);
        expect(text).toContain("There is no such namespace in this account.");
      }
    }
  });

  test("every form without its CSRF token, with another form's token, or from a foreign Origin is a 403 and changes nothing", async () => {
    const user = await signedInUser(server);
    const ids = await resources(user);
    const before = await snapshot(user);
    for (const form of forms(ids)) {
      const page = await getPage(server, user, form.page);
      const token = formToken(page.text, form.action);
      const fields = { ...form.fields, ns: user.namespaceId };
      const withoutToken = await postForm(server, user, form.action, fields);
      expect({ action: form.action, status: withoutToken.status }).toEqual({ action: form.action, status: 403 });
      expect(withoutToken.text).toContain("Request refused");
      const otherToken = formToken(page.text, "/console/sign-out");
      expect((await postForm(server, user, form.action, { ...fields, csrf_token: otherToken })).status).toBe(403);
      const foreign = await postForm(server, user, form.action, { ...fields, csrf_token: token }, { origin: "https://evil.example" });
      expect({ action: form.action, status: foreign.status }).toEqual({ action: form.action, status: 403 });
      // Another account's session with this form's token: the token is the session's own.
      const stranger = await signedInUser(server);
      expect((await postForm(server, stranger, form.action, { ...fields, csrf_token: token, ns: stranger.namespaceId })).status).toBe(403);
    }
    expect(await snapshot(user)).toBe(before);
  }, 120_000);

  test("another account's key, policy, preset, client, grant or BYOK key is a 404 page, and stays as it was", async () => {
    const alice = await signedInUser(server);
    const bob = await signedInUser(server);
    const bobs = await resources(bob);
    await resources(alice);
    const before = await snapshot(bob);
    const attempts: Array<[string, string, Record<string, string>]> = [
      ["/console/keys", "/console/keys/revoke", { id: bobs.keyId }],
      ["/console/policies", "/console/policies/edit-budget", { id: bobs.policyId, window: "day", limit_usd: "9" }],
      ["/console/policies", "/console/policies/edit-preset-budget", { id: bobs.policyPresetId, window: "day", limit_usd: "9" }],
      ["/console/policies", "/console/policies/disable", { id: bobs.policyId }],
      ["/console/policies", "/console/policies/delete", { id: bobs.policyId }],
      ["/console/policies", "/console/policies/bind", { id: bobs.policyId, principal: `namespace:${bob.namespaceId}` }],
      ["/console/policies", "/console/policies/unbind", { id: bobs.policyId, binding: bobs.bindingId }],
      ["/console/routing-presets", "/console/routing-presets/disable", { id: bobs.presetId }],
      ["/console/routing-presets", "/console/routing-presets/delete", { id: bobs.presetId }],
      ["/console/oauth", "/console/oauth/clients/delete", { id: bobs.clientId }],
      ["/console/oauth", "/console/oauth/grants/revoke", { id: bobs.grantId }],
    ];
    for (const [page, action, fields] of attempts) {
      const response = await submitForm(server, alice, page, action, fields);
      expect({ action, status: response.status }).toEqual({ action, status: 404 });
      expect(response.text).toContain("not found");
      // Bob's namespace named in Alice's form is a 404 too.
      const viaNamespace = await submitForm(server, alice, page, action, { ...fields, ns: bob.namespaceId });
      expect(viaNamespace.status).toBe(404);
    }
    // Alice deleting "her" openai key removes hers only; then it is a 404.
    const byokPage = await getPage(server, alice, "/console/byok");
    const deleteKey = () => postForm(server, alice, "/console/byok/delete", { csrf_token: formToken(byokPage.text, "/console/byok/delete"), ns: alice.namespaceId, provider: "openai" });
    expect((await deleteKey()).status).toBe(303);
    expect((await deleteKey()).status).toBe(404);
    expect(await snapshot(bob)).toBe(before);
    // Bob's token still works: nothing of his was revoked.
    expect((await server.api("GET", "/v1/keys", { token: bobs.keyToken })).status).toBe(200);
    expect((await server.api("GET", "/v1/usage", { token: bobs.accessToken })).status).toBe(200);
  }, 60_000);
});

describe("BYOK keys of a namespace in the console", () => {
  test("the page marks whose key each is; deleting a namespace's key leaves the account's", async () => {
    const user = await signedInUser(server);
    const { kek_id, public_key } = (await server.api("GET", "/v1/byok/encryption-pubkey")).body;
    const upload = (token: string, key: string) =>
      server.api("POST", "/v1/byok/keys", {
        token,
        body: { provider_name: "openai", kek_id, key_prefix: key.slice(0, 3), ciphertext_b64: sodium.to_base64(sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(public_key, sodium.base64_variants.ORIGINAL)), sodium.base64_variants.ORIGINAL) },
      });
    const bound = await server.mintKey(user.apiKey, ["byok:write"], user.namespaceId);
    expect((await upload(user.apiKey, "acc-console-secret-0123456789")).status).toBe(200);
    expect((await upload(bound, "nsk-console-secret-0123456789")).status).toBe(200);
    const page = await getPage(server, user, "/console/byok");
    expect(page.text).toContain("every namespace without its own key");
    expect(page.text).toContain(`namespace <code>${user.namespaceId}</code> only`);
    expect((await submitForm(server, user, "/console/byok", "/console/byok/delete", { provider: "openai", namespace_id: user.namespaceId })).status).toBe(303);
    const store = server.server.services.byokKeys;
    expect(await store.keyFor(user.accountId, "openai", user.namespaceId)).toBe("acc-console-secret-0123456789");
    expect(await store.keyFor(user.accountId, "openai")).toBe("acc-console-secret-0123456789");
    const listed = await server.api("GET", "/v1/byok/keys", { token: user.apiKey });
    expect(listed.body.data.map((key: { namespace_id: string | null }) => key.namespace_id)).toEqual([null]);
  });
});

describe("refused input", () => {
  const cases: Array<{ page: string; action: string; fields: Record<string, string>; status?: number; message: string }> = [
    { page: "/console/keys", action: "/console/keys", fields: { display_name: "k" }, message: "Choose at least one scope." },
    { page: "/console/keys", action: "/console/keys", fields: { display_name: "  ", "scope.usage:read": "on" }, message: "Name is required." },
    { page: "/console/keys", action: "/console/keys", fields: { display_name: "k", "scope.user:write": "on" }, message: "scope user:write cannot be granted to a namespace-bound key" },
    { page: "/console/keys", action: "/console/keys", fields: { display_name: "k", "scope.nonsense": "on" }, message: "unknown scope: nonsense" },
    { page: "/console/keys", action: "/console/keys", fields: { display_name: "a\u0000b", "scope.usage:read": "on" }, message: "Name must be one line of text." },
    { page: "/console/policies", action: "/console/policies/budget", fields: { name: "b", window: "day", limit_usd: "12.3456789" }, message: "at most 6 decimal places" },
    { page: "/console/policies", action: "/console/policies/budget", fields: { name: "b", window: "day", limit_usd: "0" }, message: "must be more than $0" },
    { page: "/console/policies", action: "/console/policies/budget", fields: { name: "b", window: "day", limit_usd: "-5" }, message: "must be an amount in US dollars" },
    { page: "/console/policies", action: "/console/policies/budget", fields: { name: "b", window: "day", limit_usd: "1e3" }, message: "must be an amount in US dollars" },
    { page: "/console/policies", action: "/console/policies/budget", fields: { name: "b", window: "day", limit_usd: "99999999999" }, message: "is too large" },
    { page: "/console/policies", action: "/console/policies/budget", fields: { name: "b", window: "week", limit_usd: "5" }, message: 'window must be one of "day", "month", "total"' },
    { page: "/console/policies", action: "/console/policies/rate-limit", fields: { name: "r", window_secs: "60" }, message: "a rate limit without a cap limits nothing" },
    { page: "/console/policies", action: "/console/policies/rate-limit", fields: { name: "r", window_secs: "9999999", max_requests: "5" }, message: "window_secs must be an integer number of seconds" },
    { page: "/console/policies", action: "/console/policies/rate-limit", fields: { name: "r", window_secs: "60", max_tokens: "1.5" }, message: "Most tokens must be a whole number" },
    { page: "/console/keys", action: "/console/keys", fields: { display_name: "k", "scope.usage:read": "on", expires_on: "2020-01-01" }, message: "The expiry date must be today or later (UTC)." },
    { page: "/console/keys", action: "/console/keys", fields: { display_name: "k", "scope.usage:read": "on", expires_on: "2030-02-30" }, message: "The expiry date must be a date such as 2030-12-31." },
    { page: "/console/keys", action: "/console/keys", fields: { display_name: "k", "scope.usage:read": "on", expires_on: "tomorrow" }, message: "The expiry date must be a date such as 2030-12-31." },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", allow_streaming: "on" }, message: "Set at least one rule" },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", "pattern-2-regex": "x+" }, message: "Content pattern 2 needs a name." },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", "pattern-1-name": "card", "pattern-1-action": "block" }, message: "Content pattern 1 (“card”) needs a regular expression." },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", "pattern-1-name": "n", "pattern-1-regex": "(a+)+$", "pattern-1-action": "block" }, message: "catastrophic backtracking" },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", "pattern-1-name": "n", "pattern-1-regex": "a*", "pattern-1-action": "block" }, message: "must not match the empty string" },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", "pattern-1-name": "n", "pattern-1-regex": "a", "pattern-1-action": "shout" }, message: "choose block or redact" },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", allow_streaming: "on", max_request_tokens: "0" }, message: "Most tokens per request must be a whole number of at least 1." },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", allow_streaming: "on", byok: "sometimes" }, message: 'spec.byok must be "required", "forbidden", "optional" or null' },
    { page: "/console/policies", action: "/console/policies/guardrail", fields: { name: "g", model_deny: "x".repeat(300) }, message: "spec.model_deny must be a list of at most 1000 model ids" },
    { page: "/console/routing-presets", action: "/console/routing-presets", fields: { name: "no spaces", model: "" }, message: "name must be 1 to 64 characters" },
    { page: "/console/routing-presets", action: "/console/routing-presets", fields: { name: "p", model: "@other" }, message: "model" },
    { page: "/console/routing-presets", action: "/console/routing-presets", fields: { name: "p", system_prompt: "a\u0001" }, message: "System prompt must not contain control characters." },
    { page: "/console/oauth", action: "/console/oauth/clients", fields: { client_name: "c", client_type: "public", redirect_uris: "http://app.example/cb", "grant.authorization_code": "on" }, message: "redirect_uris.0 must use https" },
    { page: "/console/oauth", action: "/console/oauth/clients", fields: { client_name: "c", client_type: "public", redirect_uris: "" }, message: "Choose at least one grant type." },
    { page: "/console/oauth", action: "/console/oauth/clients", fields: { client_name: "c", client_type: "public", "grant.refresh_token": "on" }, message: "allowed_grant_types must include" },
    { page: "/console/oauth", action: "/console/oauth/clients", fields: { client_name: "c", client_type: "other", "grant.authorization_code": "on" }, message: "Choose a client type." },
    { page: "/console/byok", action: "/console/byok", fields: { provider_name: "openai", api_base: "" }, message: "this form needs JavaScript" },
    { page: "/console/byok", action: "/console/byok", fields: { provider_name: "openai", kek_id: "kek_old", ciphertext_b64: "AAAA", key_prefix: "sk" }, message: "kek_id is not the current key-encryption key" },
    { page: "/console/byok", action: "/console/byok", fields: { provider_name: "no-such", kek_id: "k", ciphertext_b64: "AAAA", key_prefix: "" }, message: 'unknown provider "no-such"' },
  ];

  test("is answered with the form again, status 400, the message shown and what was typed kept", async () => {
    const user = await signedInUser(server);
    const before = await snapshot(user);
    for (const entry of cases) {
      const response = await submitForm(server, user, entry.page, entry.action, entry.fields);
      expect({ action: entry.action, fields: entry.fields, status: response.status }).toEqual({ action: entry.action, fields: entry.fields, status: entry.status ?? 400 });
      const message = /<p class="error" role="alert" id="form-error">([^<]*)<\/p>/.exec(response.text)?.[1] ?? "";
      expect(message).toContain(entry.message.replace(/"/g, "&quot;"));
      // The page is the form again, not an error page.
      expect(response.text).toContain(`action="${entry.action}"`);
    }
    expect(await snapshot(user)).toBe(before);
  }, 120_000);

  test("a second routing preset of the same name is a 409 with the message", async () => {
    const user = await signedInUser(server);
    expect((await submitForm(server, user, "/console/routing-presets", "/console/routing-presets", { name: "dup", model: "openai/gpt-4o-mini" })).status).toBe(303);
    const again = await submitForm(server, user, "/console/routing-presets", "/console/routing-presets", { name: "dup", model: "" });
    expect(again.status).toBe(409);
    expect(again.text).toContain("a routing preset named &quot;dup&quot; already exists in this namespace");
  });

  test("hostile input anywhere is a 4xx page, never a 500", async () => {
    const user = await signedInUser(server);
    const ids = await resources(user);
    const hostile = ["\u0000", "%", "x".repeat(20_000), "<script>alert(1)</script>", "\ud800", "../../etc", "pol_\u0000"];
    for (const form of forms(ids)) {
      for (const value of hostile) {
        const fields = Object.fromEntries(Object.keys(form.fields).map((name) => [name, value]));
        const response = await submitForm(server, user, form.page, form.action, fields);
        expect({ action: form.action, value: value.slice(0, 20), status: response.status < 500 }).toEqual({ action: form.action, value: value.slice(0, 20), status: true });
        expect(response.text).not.toContain("<script>alert");
      }
    }
    for (const query of ["limit=abc", "offset=-1", "limit=", "offset=99999999999999999999", "limit=1&offset=1"]) {
      const { status } = await getPage(server, user, `/console/requests?${query}`);
      expect(status === 200 || status === 400).toBe(true);
    }
    // Not a form at all: JSON, plain text, an empty body.
    for (const [type, body] of [["application/json", '{"csrf_token":1}'], ["text/plain", "hello"], ["application/x-www-form-urlencoded", ""]] as const) {
      const response = await fetch(`${server.url}/console/keys`, { method: "POST", headers: { "content-type": type, cookie: user.cookie }, body, redirect: "manual" });
      expect(response.status).toBe(403);
    }
  }, 120_000);
});

describe("forms that work", () => {
  test("a key created in the console shows its token once and works; revoked, it gets 401", async () => {
    const user = await signedInUser(server);
    const posted = await submitForm(server, user, "/console/keys", "/console/keys", { display_name: "deploy bot", "scope.keys:read": "on", "scope.usage:read": "on" });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(`/console/keys?ns=${user.namespaceId}&done=created`);
    const created = await getPage(server, user, posted.location!);
    expect(created.status).toBe(200);
    const token = /id="new-token" type="text" readonly value="([^"]+)"/.exec(created.text)![1]!;
    expect(token).toMatch(/^brk_/);
    const listed = await server.api("GET", "/v1/keys", { token });
    expect(listed.status).toBe(200);
    const key = listed.body.data.find((entry: { display_name: string }) => entry.display_name === "deploy bot");
    expect(key.scopes.sort()).toEqual(["keys:read", "usage:read"]);
    // The token is on the page that created it only.
    expect((await getPage(server, user, "/console/keys")).text).not.toContain(token);
    const revoked = await submitForm(server, user, "/console/keys", "/console/keys/revoke", { id: key.id });
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe(`/console/keys?ns=${user.namespaceId}&done=revoked`);
    expect((await server.api("GET", "/v1/keys", { token })).status).toBe(401);
  });

  test("reloading the page after Create key mints no second key and shows the token no more", async () => {
    const user = await signedInUser(server);
    const keyCount = async () => (await server.api("GET", "/v1/keys", { token: user.apiKey })).body.data.filter((key: { display_name: string }) => key.display_name === "reloaded").length;
    const posted = await submitForm(server, user, "/console/keys", "/console/keys", { display_name: "reloaded", "scope.usage:read": "on" });
    expect(posted.status).toBe(303);
    const first = await getPage(server, user, posted.location!);
    const token = /id="new-token" type="text" readonly value="(brk_[^"]+)"/.exec(first.text)![1]!;
    expect(first.text).toContain("New key “reloaded”");
    // The reload is the same GET: one key still, no token, and the table holds no trace of it.
    const reload = await getPage(server, user, posted.location!);
    expect(reload.status).toBe(200);
    expect(reload.text).not.toContain(token);
    expect(reload.text).not.toContain('id="new-token"');
    expect(reload.text).toContain("Key created.");
    expect(await keyCount()).toBe(1);
    const stored = await server.server.services.db.sql`select flash from console_sessions where account_id = ${user.accountId}`;
    expect(stored.every((row) => row.flash === null)).toBe(true);
    // The sealed message opens only for the session that made it: another session of the
    // same account, sent to the same address while a message waits, sees no token.
    const other = { ...user, cookie: (await signInOverHttp(server, user.email, CONSOLE_PASSWORD)).session! };
    const again = await submitForm(server, user, "/console/keys", "/console/keys", { display_name: "reloaded", "scope.usage:read": "on" });
    expect(again.status).toBe(303);
    const elsewhere = await getPage(server, other, again.location!);
    expect(elsewhere.text).not.toContain('id="new-token"');
    const sealed = await server.server.services.db.sql`select flash from console_sessions where account_id = ${user.accountId} and flash is not null`;
    expect(sealed.length).toBe(1);
    expect(Buffer.from(sealed[0]!.flash).toString("latin1")).not.toContain("brk_");
    expect((await getPage(server, user, again.location!)).text).toMatch(/id="new-token" type="text" readonly value="brk_/);
    expect(await keyCount()).toBe(2);
  });

  test("revoking a grant in the console ends its access token", async () => {
    const user = await signedInUser(server);
    const tokens = await deviceTokens(server, user.apiKey, user.namespaceId, "usage:read");
    expect((await server.api("GET", "/v1/usage", { token: tokens.access_token })).status).toBe(200);
    const page = await getPage(server, user, "/console/oauth");
    expect(page.text).toContain("usage:read");
    const grantId = /name="id" value="(og_[^"]+)"/.exec(page.text)![1]!;
    expect((await submitForm(server, user, "/console/oauth", "/console/oauth/grants/revoke", { id: grantId })).status).toBe(303);
    expect((await server.api("GET", "/v1/usage", { token: tokens.access_token })).status).toBe(401);
  });

  test("policies read back in words; disable, enable and delete go through the policy service", async () => {
    const user = await signedInUser(server);
    await server.api("POST", "/v1/policies", {
      token: user.apiKey,
      body: { name: "guard", kind: "guardrail", spec: { model_deny: ["openai/gpt-4o"], allow_streaming: false, content_patterns: [{ name: "card", pattern: "\\d{16}", action: "redact" }] } },
    });
    expect((await submitForm(server, user, "/console/policies", "/console/policies/rate-limit", { name: "burst", window_secs: "3600", max_requests: "1,000", max_tokens: "" })).location).toContain("done=rate_limit");
    const page = (await getPage(server, user, "/console/policies")).text;
    expect(page).toContain("Never these models: openai/gpt-4o");
    expect(page).toContain("No streaming");
    expect(page).toContain("Content pattern “card”: redacted");
    expect(page).toContain("At most 1,000 requests per 1 hour");
    const listed = (await server.api("GET", "/v1/policies?kind=rate_limit", { token: user.apiKey })).body.data[0];
    expect(listed.spec).toEqual({ window_secs: 3600, max_requests: 1000, max_tokens: null });
    expect((await submitForm(server, user, "/console/policies", "/console/policies/disable", { id: listed.id })).status).toBe(303);
    expect((await server.api("GET", `/v1/policies/${listed.id}`, { token: user.apiKey })).body.disabled_at).not.toBeNull();
    expect((await submitForm(server, user, "/console/policies", "/console/policies/enable", { id: listed.id })).status).toBe(303);
    expect((await server.api("GET", `/v1/policies/${listed.id}`, { token: user.apiKey })).body.disabled_at).toBeNull();
    expect((await submitForm(server, user, "/console/policies", "/console/policies/delete", { id: listed.id })).status).toBe(303);
    expect((await server.api("GET", `/v1/policies/${listed.id}`, { token: user.apiKey })).status).toBe(404);
  });
});

describe("presets and clients", () => {
  test("a routing preset is disabled, enabled and deleted from the console, as the API then reads it", async () => {
    const user = await signedInUser(server);
    const ids = await resources(user);
    const read = async () => server.api("GET", `/v1/routing-presets/${ids.presetId}`, { token: user.apiKey });
    const step = async (action: string, done: string) => {
      const response = await submitForm(server, user, "/console/routing-presets", `/console/routing-presets/${action}`, { id: ids.presetId });
      expect(response.location).toBe(`/console/routing-presets?ns=${user.namespaceId}&done=${done}`);
    };
    await step("disable", "disabled");
    expect((await read()).body.disabled_at).not.toBeNull();
    expect((await getPage(server, user, "/console/routing-presets")).text).toContain("<dd>Disabled</dd>");
    await step("enable", "enabled");
    expect((await read()).body.disabled_at).toBeNull();
    await step("delete", "deleted");
    expect((await read()).status).toBe(404);
    expect((await getPage(server, user, `/console/routing-presets?done=deleted`)).text).toContain("Routing preset deleted.");
  });

  test("deleting a client from the console revokes the tokens issued to it", async () => {
    const user = await signedInUser(server);
    const created = await submitForm(server, user, "/console/oauth", "/console/oauth/clients", {
      client_name: "Device app",
      client_type: "public",
      redirect_uris: "",
      "grant.urn:ietf:params:oauth:grant-type:device_code": "on",
    });
    expect(created.status).toBe(200);
    expect(created.text).toContain("A public client has no secret");
    const clientId = /id="new-client-id" type="text" readonly value="([^"]+)"/.exec(created.text)![1]!;
    const clients = await server.api("GET", "/v1/oauth/clients", { token: user.apiKey });
    const client = clients.body.data.find((entry: { client_id: string }) => entry.client_id === clientId);
    expect(client).toMatchObject({ client_name: "Device app", client_type: "public", redirect_uris: [], allowed_grant_types: ["urn:ietf:params:oauth:grant-type:device_code"] });
    const device = (await postOauth("/oauth/device_authorization", { client_id: clientId, scope: "usage:read" })) as { user_code: string; device_code: string };
    expect((await server.api("POST", "/oauth/device/decision", { token: user.apiKey, body: { user_code: device.user_code, namespace_id: user.namespaceId, approve: true } })).status).toBe(200);
    const tokens = await postOauth("/oauth/token", { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: device.device_code, client_id: clientId });
    expect((await server.api("GET", "/v1/usage", { token: tokens.access_token })).status).toBe(200);
    expect((await getPage(server, user, "/console/oauth")).text).toContain("<h3 id=\"grant-");
    expect((await submitForm(server, user, "/console/oauth", "/console/oauth/clients/delete", { id: client.id })).status).toBe(303);
    expect((await server.api("GET", "/v1/usage", { token: tokens.access_token })).status).toBe(401);
    expect((await getPage(server, user, "/console/oauth")).text).toContain("No live grants.");
  });
});

async function postOauth(path: string, fields: Record<string, string>) {
  const response = await fetch(server.url + path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, string>;
}

describe("the BYOK sealing script", () => {
  test("is served from this origin with a long cache lifetime, named by its version on the page", async () => {
    const user = await signedInUser(server);
    const { text, response } = await getPage(server, user, "/console/byok");
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'; connect-src 'self'");
    const src = /<script src="([^"]+)" defer><\/script>/.exec(text)![1]!;
    expect(src).toMatch(/^\/console\/assets\/byok-seal\.js\?v=[A-Za-z0-9_-]{16}$/);
    // The key field has no name: a form submission cannot carry it.
    expect(/<input id="byok-key"[^>]*>/.exec(text)![0]).not.toContain("name=");
    expect(/<button type="submit" id="byok-submit" disabled>/.test(text)).toBe(true);
    const script = await fetch(server.url + src);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const code = await script.text();
    expect(code.length).toBeGreaterThan(1000);
    expect(code).not.toMatch(/\bimport\b|require\(/);
  });
});

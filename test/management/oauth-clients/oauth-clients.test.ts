import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createHash } from "node:crypto";
import { startTestServer, type TestAccount, type TestServer } from "../../support/test-server";

let server: TestServer;
let alice: TestAccount;
let bob: TestAccount;
let db: ReturnType<typeof postgres>;

beforeAll(async () => {
  server = await startTestServer();
  db = postgres(server.databaseUrl, { max: 2, onnotice: () => {} });
  alice = await server.createAccount();
  bob = await server.createAccount();
});
afterAll(async () => {
  await db.end();
  await server.close();
});

const CODE_GRANT = ["authorization_code", "refresh_token"];
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

async function createClient(account: TestAccount, body: Record<string, unknown>, nsid = account.namespaceId) {
  const response = await server.api("POST", `/v1/namespaces/${nsid}/oauth/clients`, { token: account.apiKey, body });
  if (response.status !== 200) throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body;
}

const webApp = { client_name: "Web app", client_type: "confidential", redirect_uris: ["https://app.example/callback"], allowed_grant_types: CODE_GRANT };

/** A grant row as the authorization server writes one: ids and hashes only. */
async function insertGrant(account: TestAccount, clientRef: string | null, clientId: string, id: string) {
  await db.unsafe(
    `insert into oauth_tokens (id, account_id, namespace_id, client_id, oauth_client_ref, access_token_hash, refresh_token_hash, scopes, expires_at, refresh_expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, now() + interval '1 hour', now() + interval '30 days')`,
    [id, account.accountId, account.namespaceId, clientId, clientRef, createHash("sha256").update(`a-${id}`).digest(), createHash("sha256").update(`r-${id}`).digest(), ["usage:read"]],
  );
}

describe("OAuth clients (§4.12)", () => {
  test("the response carrying a client secret is never cached", async () => {
    const response = await server.api("POST", `/v1/namespaces/${alice.namespaceId}/oauth/clients`, { token: alice.apiKey, body: webApp });
    expect(response.status).toBe(200);
    expect(response.body.client_secret).toMatch(/^brcs_/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("pragma")).toBe("no-cache");
  });

  test("a confidential client gets brc_ id and a secret shown once and stored only as its SHA-256", async () => {
    const created = await createClient(alice, webApp);
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      client_id: expect.stringMatching(/^brc_[A-Za-z0-9_-]{20,}$/),
      client_name: "Web app",
      client_type: "confidential",
      redirect_uris: ["https://app.example/callback"],
      allowed_scopes: expect.any(Array),
      allowed_grant_types: CODE_GRANT,
      created_at: expect.any(String),
      client_secret: expect.stringMatching(/^brcs_[A-Za-z0-9_-]{40,}$/),
    });
    const [row] = await db.unsafe("select client_secret_hash from oauth_clients where id = $1", [created.id]);
    expect(Buffer.from(row!.client_secret_hash).equals(createHash("sha256").update(created.client_secret).digest())).toBe(true);
    const listed = await server.api("GET", "/v1/oauth/clients", { token: alice.apiKey });
    const entry = listed.body.data.find((client: any) => client.id === created.id);
    const { client_secret: _secret, ...withoutSecret } = created;
    expect(entry).toEqual(withoutSecret);
    expect(listed.text).not.toContain(created.client_secret);
    expect(listed.text).not.toContain("secret");
  });

  test("a public client has no secret; omitted allowed_scopes means every scope but the control-plane ones", async () => {
    const created = await createClient(alice, { client_name: "CLI tool", client_type: "public", allowed_grant_types: [DEVICE_GRANT, "refresh_token"] });
    expect(created.client_secret).toBeNull();
    expect(created.redirect_uris).toEqual([]);
    expect(created.allowed_scopes).toContain("inference:invoke");
    expect(created.allowed_scopes).toContain("usage:read");
    for (const scope of ["user:write", "clients:write", "namespace:write"]) expect(created.allowed_scopes).not.toContain(scope);
  });

  test("GET, PUT and DELETE take the client's id or its client_id; PUT replaces each list whole and keeps what it omits", async () => {
    const created = await createClient(alice, { ...webApp, allowed_scopes: ["usage:read", "inference:invoke"] });
    const byClientId = await server.api("GET", `/v1/oauth/clients/${created.client_id}`, { token: alice.apiKey });
    expect(byClientId.body.id).toBe(created.id);
    const renamed = await server.api("PUT", `/v1/namespaces/${alice.namespaceId}/oauth/clients/${created.id}`, { token: alice.apiKey, body: { client_name: "Renamed" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ client_name: "Renamed", allowed_scopes: ["usage:read", "inference:invoke"], redirect_uris: webApp.redirect_uris });
    const replaced = await server.api("PUT", `/v1/oauth/clients/${created.client_id}`, {
      token: alice.apiKey,
      body: { redirect_uris: ["http://127.0.0.1:9999/cb", "com.example.app:/oauth"], allowed_scopes: ["keys:read"] },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ client_name: "Renamed", redirect_uris: ["http://127.0.0.1:9999/cb", "com.example.app:/oauth"], allowed_scopes: ["keys:read"] });
    expect(replaced.body.client_secret).toBeUndefined();
    const deleted = await server.api("DELETE", `/v1/oauth/clients/${created.client_id}`, { token: alice.apiKey });
    expect({ status: deleted.status, body: deleted.body }).toEqual({ status: 200, body: { deleted: true } });
    const gone = await server.api("GET", `/v1/oauth/clients/${created.id}`, { token: alice.apiKey });
    expect({ status: gone.status, body: gone.body }).toEqual({ status: 404, body: { error: "not_found", error_description: "OAuth client not found" } });
  });

  test("grant types, redirect URIs and scopes are validated, each refusal naming the field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...webApp, allowed_grant_types: [] }, "allowed_grant_types"],
      [{ ...webApp, allowed_grant_types: ["client_credentials"] }, "allowed_grant_types"],
      [{ ...webApp, allowed_grant_types: ["refresh_token"] }, "allowed_grant_types"],
      [{ ...webApp, redirect_uris: [] }, "redirect_uris"],
      [{ ...webApp, redirect_uris: ["http://app.example/cb"] }, "redirect_uris.0"],
      [{ ...webApp, redirect_uris: ["https://app.example/cb#frag"] }, "redirect_uris.0"],
      [{ ...webApp, redirect_uris: ["/relative"] }, "redirect_uris.0"],
      [{ ...webApp, redirect_uris: ["https://ok.example/cb", "javascript:alert(1)"] }, "redirect_uris.1"],
      [{ ...webApp, redirect_uris: ["https://user:pw@app.example/cb"] }, "redirect_uris.0"],
      [{ ...webApp, allowed_scopes: ["clients:write"] }, "allowed_scopes"],
      [{ ...webApp, allowed_scopes: ["user:*"] }, "allowed_scopes"],
      [{ ...webApp, allowed_scopes: ["nope:read"] }, "allowed_scopes"],
      [{ ...webApp, allowed_scopes: [] }, "allowed_scopes"],
      [{ ...webApp, client_type: "trusted" }, "client_type"],
      [{ ...webApp, client_secret: "mine" }, "client_secret"],
      [{ client_type: "public", allowed_grant_types: [DEVICE_GRANT] }, "client_name"],
    ];
    for (const [body, field] of cases) {
      const response = await server.api("POST", "/v1/oauth/clients", { token: alice.apiKey, body });
      expect({ field, status: response.status, error: response.body.error }).toEqual({ field, status: 400, error: "bad_request" });
      expect(response.body.error_description).toContain(field);
    }
    const created = await createClient(alice, webApp);
    const dropRedirects = await server.api("PUT", `/v1/oauth/clients/${created.id}`, { token: alice.apiKey, body: { redirect_uris: [] } });
    expect(dropRedirects.status).toBe(400);
    expect(dropRedirects.body.error_description).toContain("redirect_uris");
  });

  test("another account's client, by id or client_id, is the same 404 as a missing one on every route", async () => {
    const bobs = await createClient(bob, webApp);
    const missing = await server.api("GET", "/v1/oauth/clients/00000000-0000-4000-8000-000000000000", { token: alice.apiKey });
    expect(missing.status).toBe(404);
    for (const ref of [bobs.id, bobs.client_id]) {
      for (const [method, body] of [["GET", undefined], ["PUT", { client_name: "x" }], ["DELETE", undefined]] as const) {
        const response = await server.api(method, `/v1/oauth/clients/${ref}`, { token: alice.apiKey, body });
        expect({ method, status: response.status, body: response.body }).toEqual({ method, status: 404, body: missing.body });
      }
    }
    const list = await server.api("GET", `/v1/namespaces/${bob.namespaceId}/oauth/clients`, { token: alice.apiKey });
    expect(list.status).toBe(404);
    expect((await server.api("GET", `/v1/oauth/clients/${bobs.id}`, { token: bob.apiKey })).status).toBe(200);
  });

  test("reading needs clients:read, writing clients:write; a namespace-bound key can read but never hold clients:write", async () => {
    const usageOnly = await server.mintKey(alice.apiKey, ["usage:read"]);
    const denied = await server.api("GET", "/v1/oauth/clients", { token: usageOnly });
    expect({ status: denied.status, body: denied.body }).toEqual({ status: 403, body: { error: "forbidden", error_description: "missing required scope: clients:read" } });
    const reader = await server.mintKey(alice.apiKey, ["clients:read"]);
    expect((await server.api("GET", "/v1/oauth/clients", { token: reader })).status).toBe(200);
    const write = await server.api("POST", "/v1/oauth/clients", { token: reader, body: webApp });
    expect(write.body.error_description).toBe("missing required scope: clients:write");
    const mint = await server.api("POST", "/v1/keys", { token: alice.apiKey, body: { display_name: "w", scopes: ["clients:write"] } });
    expect(mint.status).toBe(400);
  });

  test("deleting a client revokes its grants and drops the policy bindings to it", async () => {
    const client = await createClient(alice, webApp);
    const grantId = `og_del${Date.now()}`;
    await insertGrant(alice, client.id, client.client_id, grantId);
    const policy = await server.api("POST", "/v1/policies", { token: alice.apiKey, body: { name: "c", kind: "rate_limit", spec: { window_secs: 60, max_requests: 5 } } });
    const bound = await server.api("POST", `/v1/policies/${policy.body.id}/bind`, { token: alice.apiKey, body: { principal_type: "oauth_client", principal_id: client.id } });
    expect(bound.status).toBe(200);
    expect((await server.api("GET", "/v1/oauth/tokens", { token: alice.apiKey })).body.data.map((grant: any) => grant.id)).toContain(grantId);
    await server.api("DELETE", `/v1/oauth/clients/${client.id}`, { token: alice.apiKey });
    expect((await server.api("GET", "/v1/oauth/tokens", { token: alice.apiKey })).body.data.map((grant: any) => grant.id)).not.toContain(grantId);
    const bindings = await server.api("GET", `/v1/policies/${policy.body.id}/bindings`, { token: alice.apiKey });
    expect(bindings.body.data).toEqual([]);
  });
});

describe("OAuth grants under …/oauth/tokens", () => {
  test("lists the namespace's live grants in the pinned shape, and revokes one", async () => {
    const client = await createClient(alice, webApp);
    const grantId = `og_list${Date.now()}`;
    await insertGrant(alice, client.id, client.client_id, grantId);
    const listed = await server.api("GET", `/v1/namespaces/${alice.namespaceId}/oauth/tokens`, { token: alice.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((grant: any) => grant.id === grantId)).toEqual({
      id: grantId,
      client_id: client.client_id,
      client_name: "Web app",
      scopes: ["usage:read"],
      created_at: expect.any(String),
      last_used_at: null,
      expires_at: expect.any(String),
    });
    // Bob cannot see or revoke it.
    expect((await server.api("GET", "/v1/oauth/tokens", { token: bob.apiKey })).body.data).toEqual([]);
    const bobs = await server.api("DELETE", `/v1/oauth/tokens/${grantId}`, { token: bob.apiKey });
    expect({ status: bobs.status, body: bobs.body }).toEqual({ status: 404, body: { error: "not_found", error_description: "OAuth token not found" } });
    const revoked = await server.api("DELETE", `/v1/oauth/tokens/${grantId}`, { token: alice.apiKey });
    expect({ status: revoked.status, body: revoked.body }).toEqual({ status: 200, body: { revoked: true } });
    expect((await server.api("GET", "/v1/oauth/tokens", { token: alice.apiKey })).body.data.map((grant: any) => grant.id)).not.toContain(grantId);
    expect((await server.api("DELETE", `/v1/oauth/tokens/${grantId}`, { token: alice.apiKey })).status).toBe(404);
    // Listing needs keys:read, revoking keys:write.
    const usageOnly = await server.mintKey(alice.apiKey, ["usage:read"]);
    expect((await server.api("GET", "/v1/oauth/tokens", { token: usageOnly })).body.error_description).toBe("missing required scope: keys:read");
  });

  test("oauth_token and oauth_client principals bind within their namespace; another account's are a 404", async () => {
    const client = await createClient(alice, webApp);
    const grantId = `og_bind${Date.now()}`;
    await insertGrant(alice, client.id, client.client_id, grantId);
    const policy = await server.api("POST", "/v1/policies", { token: alice.apiKey, body: { name: "p", kind: "budget", spec: { window: "day", limit_micro_usd: 1_000_000 } } });
    for (const [type, id] of [["oauth_token", grantId], ["oauth_client", client.id]]) {
      const response = await server.api("POST", `/v1/policies/${policy.body.id}/bind`, { token: alice.apiKey, body: { principal_type: type, principal_id: id } });
      expect({ type, status: response.status }).toEqual({ type, status: 200 });
      const principal = await server.api("GET", `/v1/principals/${type}/${id}/policies`, { token: alice.apiKey });
      expect(principal.status).toBe(200);
      expect(JSON.stringify(principal.body)).toContain(policy.body.id);
      const fromBob = await server.api("GET", `/v1/principals/${type}/${id}/policies`, { token: bob.apiKey });
      expect(fromBob.status).toBe(404);
    }
    const bobPolicy = await server.api("POST", "/v1/policies", { token: bob.apiKey, body: { name: "p", kind: "budget", spec: { window: "day", limit_micro_usd: 1_000_000 } } });
    for (const [type, id] of [["oauth_token", grantId], ["oauth_client", client.id]]) {
      const response = await server.api("POST", `/v1/policies/${bobPolicy.body.id}/bind`, { token: bob.apiKey, body: { principal_type: type, principal_id: id } });
      expect({ type, status: response.status, error: response.body.error_description }).toEqual({ type, status: 404, error: "principal not found" });
    }
  });
});

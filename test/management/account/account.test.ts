import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { createTestDatabase } from "../../support/test-database";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../../support/test-server";
import { deviceTokens, postForm } from "../../oauth/oauth-support";

let database: { url: string; drop(): Promise<void> };
let server: TestServer;
/** A second instance on the same database, trusting cached credentials for 300 ms. */
let other: TestServer;
beforeAll(async () => {
  await sodium.ready;
  database = await createTestDatabase();
  server = await startTestServer({ credentialCacheTtlMs: 300 }, database);
  other = await startTestServer({ credentialCacheTtlMs: 300 }, database);
});
afterAll(async () => {
  await server.close();
  await other.close();
  await database.drop();
});

const sql = () => server.server.services.db.sql;

describe("operator passwords", () => {
  test("POST /admin/accounts stores an argon2id hash of the password, never the password", async () => {
    const created = await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email: "pw@example.test", password: "a long enough passphrase" } });
    expect(created.status).toBe(200);
    const [row] = await sql()<{ password_hash: string }[]>`select password_hash from accounts where id = ${created.body.account_id}`;
    expect(row!.password_hash.startsWith("$argon2id$")).toBe(true);
    expect(row!.password_hash).not.toContain("passphrase");
    expect(await Bun.password.verify("a long enough passphrase", row!.password_hash)).toBe(true);
  });

  test("a password shorter than 12 or longer than 1024 characters is a 400 naming the field, and no account is made", async () => {
    for (const password of ["short", "elevenchars", "x".repeat(1025), ""]) {
      const response = await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email: "shortpw@example.test", password } });
      expect(response.status).toBe(400);
      expect(response.body.error_description).toContain("password");
    }
    const [row] = await sql()<{ count: number }[]>`select count(*)::int as count from accounts where email = 'shortpw@example.test'`;
    expect(row!.count).toBe(0);
  });

  test("PUT /admin/accounts/{id}/password sets and replaces it; 404 for an unknown account, 401 without the operator token", async () => {
    const account = await server.createAccount();
    const set = await server.api("PUT", `/admin/accounts/${account.accountId}/password`, { token: TEST_ADMIN_TOKEN, body: { password: "first password here" } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ updated: true });
    const replaced = await server.api("PUT", `/admin/accounts/${account.accountId}/password`, { token: TEST_ADMIN_TOKEN, body: { password: "second password here" } });
    expect(replaced.body).toEqual({ updated: true });
    const [row] = await sql()<{ password_hash: string }[]>`select password_hash from accounts where id = ${account.accountId}`;
    expect(await Bun.password.verify("second password here", row!.password_hash)).toBe(true);
    expect(await Bun.password.verify("first password here", row!.password_hash)).toBe(false);
    expect((await server.api("PUT", "/admin/accounts/acct_missing/password", { token: TEST_ADMIN_TOKEN, body: { password: "some password 123" } })).status).toBe(404);
    expect((await server.api("PUT", `/admin/accounts/${account.accountId}/password`, { token: TEST_ADMIN_TOKEN, body: { password: "tiny" } })).status).toBe(400);
    expect((await server.api("PUT", `/admin/accounts/${account.accountId}/password`, { token: account.apiKey, body: { password: "some password 123" } })).status).toBe(401);
  });

  test("the admin CLI reads the password from stdin", async () => {
    const account = await server.createAccount();
    const child = Bun.spawn([process.execPath, "src/cli/admin.ts", "set-password", account.accountId], {
      env: { ...process.env, ADMIN_TOKEN: TEST_ADMIN_TOKEN, SWITCHYARD_URL: server.url },
      stdin: new TextEncoder().encode("piped in password\n"),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await child.exited).toBe(0);
    expect(JSON.parse(await new Response(child.stdout).text())).toEqual({ updated: true });
    const [row] = await sql()<{ password_hash: string }[]>`select password_hash from accounts where id = ${account.accountId}`;
    expect(await Bun.password.verify("piped in password", row!.password_hash)).toBe(true);
  });
});

describe("GET and PATCH /v1/account", () => {
  test("reads the account; PATCH sets and clears the display name and answers the same envelope", async () => {
    const email = `me-${Date.now()}@example.test`;
    const account = await server.createAccount(email);
    const read = await server.api("GET", "/v1/account", { token: account.apiKey });
    expect(read.status).toBe(200);
    expect(Object.keys(read.body).sort()).toEqual(["created_at", "display_name", "email", "id"]);
    expect(read.body).toMatchObject({ id: account.accountId, email, display_name: null });
    expect(new Date(read.body.created_at).toISOString()).toBe(read.body.created_at);
    const named = await server.api("PATCH", "/v1/account", { token: account.apiKey, body: { display_name: "Ada Lovelace" } });
    expect(named.status).toBe(200);
    expect(named.body).toEqual({ ...read.body, display_name: "Ada Lovelace" });
    const cleared = await server.api("PATCH", "/v1/account", { token: account.apiKey, body: { display_name: null } });
    expect(cleared.body.display_name).toBeNull();
  });

  test("a display name that is empty, blank-edged, too long or not a string is a 400; unknown fields too", async () => {
    const account = await server.createAccount();
    for (const body of [{ display_name: "" }, { display_name: " padded" }, { display_name: "x".repeat(101) }, { display_name: 5 }, { email: "new@example.test" }]) {
      const response = await server.api("PATCH", "/v1/account", { token: account.apiKey, body });
      expect(response.status).toBe(400);
    }
  });

  test("a namespace-bound key may read with user:read but can never PATCH or DELETE (user:write is control-plane)", async () => {
    const account = await server.createAccount();
    const reader = await server.mintKey(account.apiKey, ["user:read"]);
    expect((await server.api("GET", "/v1/account", { token: reader })).status).toBe(200);
    const patch = await server.api("PATCH", "/v1/account", { token: reader, body: { display_name: "x" } });
    expect(patch.status).toBe(403);
    expect(patch.body.error_description).toBe("missing required scope: user:write");
    expect((await server.api("DELETE", "/v1/account", { token: reader })).status).toBe(403);
    const minted = await server.api("POST", "/v1/namespaces/me/keys", { token: account.apiKey, body: { display_name: "w", scopes: ["user:write"] } });
    expect(minted.status).not.toBe(200);
    const other = await server.mintKey(account.apiKey, ["usage:read"]);
    expect((await server.api("GET", "/v1/account", { token: other })).body.error_description).toBe("missing required scope: user:read");
  });
});

describe("DELETE /v1/account", () => {
  test("destroys every credential at once here and within the cache TTL on another instance, archives every namespace and frees the email", async () => {
    const email = `doomed-${Date.now()}@example.test`;
    const account = await server.createAccount(email);
    const bound = await server.mintKey(account.apiKey, ["usage:read", "namespace:read"]);
    const second = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "second" } });
    // A BYOK key, an OAuth grant from the device flow, an authorization code and a console session.
    const { kek_id, public_key } = (await server.api("GET", "/v1/byok/encryption-pubkey")).body;
    const sealed = sodium.to_base64(sodium.crypto_box_seal(sodium.from_string("sk-customer-key"), sodium.from_base64(public_key, sodium.base64_variants.ORIGINAL)), sodium.base64_variants.ORIGINAL);
    expect((await server.api("POST", "/v1/byok/keys", { token: account.apiKey, body: { provider_name: "openai", kek_id, ciphertext_b64: sealed, key_prefix: "sk-" } })).status).toBe(200);
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "openai")).toBe("sk-customer-key");
    const hash = (text: string) => Buffer.from(new Bun.CryptoHasher("sha256").update(text).digest());
    const grant = await deviceTokens(server, account.apiKey, account.namespaceId, "usage:read namespace:read");
    await sql()`insert into oauth_authorization_codes (code_hash, client_id, account_id, namespace_id, redirect_uri, scopes, expires_at)
                values (${hash("c" + account.accountId)}, 'brc_x', ${account.accountId}, ${account.namespaceId}, 'http://127.0.0.1/cb', ${["usage:read"]}, now() + interval '1 minute')`;
    await sql()`insert into console_sessions (token_hash, account_id, csrf_secret, expires_at)
                values (${hash("s" + account.accountId)}, ${account.accountId}, ${hash("x")}, now() + interval '1 hour')`;

    // Both instances have the keys cached as valid.
    for (const instance of [server, other]) {
      expect((await instance.api("GET", "/v1/namespaces", { token: account.apiKey })).status).toBe(200);
      expect((await instance.api("GET", "/v1/namespaces", { token: bound })).status).toBe(200);
      expect((await instance.api("GET", "/v1/namespaces", { token: grant.access_token })).status).toBe(200);
    }
    const deleted = await server.api("DELETE", "/v1/account", { token: account.apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });

    // This instance refuses at once (its BYOK cache forgot the key too); the other within its cache TTL.
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "openai")).toBeUndefined();
    for (const token of [account.apiKey, bound, grant.access_token]) expect((await server.api("GET", "/v1/namespaces", { token })).status).toBe(401);
    await Bun.sleep(350);
    for (const token of [account.apiKey, bound, grant.access_token]) expect((await other.api("GET", "/v1/namespaces", { token })).status).toBe(401);
    const refreshed = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: grant.refresh_token, client_id: "switchyard-cli" });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe("invalid_grant");

    const [row] = await sql()<{ email: string; deleted_at: Date | null; display_name: string | null }[]>`select email, deleted_at, display_name from accounts where id = ${account.accountId}`;
    expect(row!.deleted_at).not.toBeNull();
    expect(row!.email).toBe(`deleted+${account.accountId}@invalid`);
    const counts = await sql()<{ live_namespaces: number; live_keys: number; live_grants: number; byok: number; codes: number; sessions: number }[]>`
      select (select count(*)::int from namespaces where account_id = ${account.accountId} and archived_at is null) as live_namespaces,
             (select count(*)::int from api_keys where account_id = ${account.accountId} and revoked_at is null) as live_keys,
             (select count(*)::int from oauth_tokens where account_id = ${account.accountId} and revoked_at is null) as live_grants,
             (select count(*)::int from byok_keys where account_id = ${account.accountId}) as byok,
             (select count(*)::int from oauth_authorization_codes where account_id = ${account.accountId}) as codes,
             (select count(*)::int from console_sessions where account_id = ${account.accountId}) as sessions`;
    expect(counts[0]).toEqual({ live_namespaces: 0, live_keys: 0, live_grants: 0, byok: 0, codes: 0, sessions: 0 });
    expect(second.status).toBe(200);

    // The email can hold a new account.
    const again = await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email } });
    expect(again.status).toBe(200);
    expect(again.body.account_id).not.toBe(account.accountId);
  });

  test("a key of a deleted account never authenticates, even one whose revocation was missed", async () => {
    const account = await server.createAccount();
    expect((await server.api("GET", "/v1/account", { token: account.apiKey })).status).toBe(200);
    await sql()`update accounts set deleted_at = now() where id = ${account.accountId}`;
    await Bun.sleep(350);
    expect((await server.api("GET", "/v1/account", { token: account.apiKey })).status).toBe(401);
  });
});

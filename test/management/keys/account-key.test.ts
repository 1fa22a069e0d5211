import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../../support/test-server";

/**
 * The account-wide key POST /admin/accounts returns is listed by GET /v1/account/keys
 * like any other key, and revocable with DELETE /v1/account/keys/{id}; a namespace-bound
 * credential can do neither, and another account's key is the 404 of a missing one.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** The key's id as stored and listed: k_<the id part of brk_<id>.<secret>>. */
const idOf = (token: string) => `k_${token.slice("brk_".length).split(".")[0]}`;

describe("the operator-issued account key", () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await server.createAccount();
  });

  test("is listed at the account with the fields of every key, every scope, never its secret", async () => {
    const listed = await server.api("GET", "/v1/account/keys", { token: account.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    const key = listed.body.data[0];
    expect(key).toMatchObject({ id: idOf(account.apiKey), display_name: "operator-issued", revoked_at: null, expires_at: null, last_used_at: null });
    expect(Object.keys(key).sort()).toEqual(["created_at", "display_name", "expires_at", "id", "key_prefix", "last_used_at", "revoked_at", "scopes"]);
    expect(key.scopes).toContain("keys:write");
    expect(account.apiKey.startsWith(key.key_prefix)).toBe(true);
    expect(listed.text).not.toContain(account.apiKey.split(".")[1]);
  });

  test("namespace keys are not in the account list, nor the account key in a namespace's", async () => {
    const minted = await server.api("POST", `/v1/namespaces/${account.namespaceId}/keys`, { token: account.apiKey, body: { display_name: "ci", scopes: ["usage:read"] } });
    const atAccount = await server.api("GET", "/v1/account/keys", { token: account.apiKey });
    expect(atAccount.body.data.map((k: any) => k.id)).toEqual([idOf(account.apiKey)]);
    const atNamespace = await server.api("GET", "/v1/keys", { token: account.apiKey });
    expect(atNamespace.body.data.map((k: any) => k.id)).toEqual([minted.body.id]);
    // And a namespace key is not revocable as an account key.
    const wrongPlace = await server.api("DELETE", `/v1/account/keys/${minted.body.id}`, { token: account.apiKey });
    expect(wrongPlace.status).toBe(404);
  });

  test("a namespace-bound key is refused with 403 on both routes, and cannot revoke it through its namespace either", async () => {
    const bound = await server.mintKey(account.apiKey, ["keys:read", "keys:write"]);
    const listed = await server.api("GET", "/v1/account/keys", { token: bound });
    expect(listed.status).toBe(403);
    expect(listed.body.error).toBe("forbidden");
    const revoke = await server.api("DELETE", `/v1/account/keys/${idOf(account.apiKey)}`, { token: bound });
    expect(revoke.status).toBe(403);
    const viaNamespace = await server.api("DELETE", `/v1/keys/${idOf(account.apiKey)}`, { token: bound });
    expect(viaNamespace.status).toBe(404);
    expect((await server.api("GET", "/v1/account/keys", { token: account.apiKey })).status).toBe(200);
  });

  test("needs keys:read to list and keys:write to revoke", async () => {
    expect((await server.api("GET", "/v1/account/keys")).status).toBe(401);
    const readOnly = await server.mintKey(account.apiKey, ["usage:read"]);
    expect((await server.api("GET", "/v1/account/keys", { token: readOnly })).status).toBe(403);
  });

  test("another account's key is the 404 of a missing one, and stays live", async () => {
    const other = await server.createAccount();
    expect((await server.api("GET", "/v1/account/keys", { token: other.apiKey })).body.data.map((k: any) => k.id)).toEqual([idOf(other.apiKey)]);
    const revoke = await server.api("DELETE", `/v1/account/keys/${idOf(account.apiKey)}`, { token: other.apiKey });
    const missing = await server.api("DELETE", "/v1/account/keys/k_missing", { token: other.apiKey });
    expect(revoke.status).toBe(404);
    expect(revoke.text).toBe(missing.text);
    expect((await server.api("GET", "/v1/account/keys", { token: account.apiKey })).status).toBe(200);
  });

  test("is revoked like any other key: it stops working at once, is listed as revoked, and takes the keys minted with it along", async () => {
    const fresh = await server.createAccount();
    const minted = await server.mintKey(fresh.apiKey, ["keys:read"]);
    expect((await server.api("GET", "/v1/keys", { token: minted })).status).toBe(200);
    const id = idOf(fresh.apiKey);
    const revoked = await server.api("DELETE", `/v1/account/keys/${id}`, { token: fresh.apiKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ revoked: true });
    expect((await server.api("GET", "/v1/account/keys", { token: fresh.apiKey })).status).toBe(401);
    // A derived key never outlives its parent (DESIGN.md), the operator's key included.
    expect((await server.api("GET", "/v1/keys", { token: minted })).status).toBe(401);
    const [row] = await server.server.services.db.sql.unsafe("select revoked_at from api_keys where id = $1", [id]);
    expect(row!.revoked_at).toBeInstanceOf(Date);
  });

  test("the OpenAPI document lists both routes with their scopes", async () => {
    const spec = await server.api("GET", "/openapi/json");
    expect(spec.body.paths["/v1/account/keys"].get["x-scope"]).toBe("keys:read");
    expect(spec.body.paths["/v1/account/keys/{id}"].delete["x-scope"]).toBe("keys:write");
  });
});

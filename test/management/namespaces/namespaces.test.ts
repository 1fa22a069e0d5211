import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startTestServer, type TestServer } from "../../support/test-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("GET /v1/namespaces", () => {
  test("lists the account's live namespaces oldest first, with id, name and created_at", async () => {
    const account = await server.createAccount();
    await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "staging" } });
    const response = await server.api("GET", "/v1/namespaces", { token: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body.data.map((n: any) => n.name)).toEqual(["default", "staging"]);
    expect(response.body.data[0].id).toBe(account.namespaceId);
    expect(Date.parse(response.body.data[0].created_at)).not.toBeNaN();
  });

  test("shows a namespace-bound credential only its own namespace", async () => {
    const account = await server.createAccount();
    const other = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "other" } });
    const bound = await server.mintKey(account.apiKey, ["namespace:read"], other.body.id);
    const response = await server.api("GET", "/v1/namespaces", { token: bound });
    expect(response.body.data.map((n: any) => n.id)).toEqual([other.body.id]);
  });

  test("requires namespace:read", async () => {
    const account = await server.createAccount();
    const key = await server.mintKey(account.apiKey, ["keys:read"]);
    const response = await server.api("GET", "/v1/namespaces", { token: key });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: "forbidden", error_description: "missing required scope: namespace:read" });
  });

  test("is 401 without a credential, with a WWW-Authenticate header", async () => {
    const response = await server.api("GET", "/v1/namespaces");
    expect(response.status).toBe(401);
    expect(response.body.error).toBe("unauthorized");
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
  });
});

describe("POST /v1/namespaces", () => {
  test("creates a namespace and returns its envelope", async () => {
    const account = await server.createAccount();
    const response = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "prod" } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: "prod" });
    expect(response.body.id).toMatch(/^ns_/);
  });

  test("refuses a name already used by a live namespace of the same account with 409", async () => {
    const account = await server.createAccount();
    await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "dup" } });
    const again = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "dup" } });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("conflict");
  });

  test("allows the same name in another account, and again after the first is archived", async () => {
    const a = await server.createAccount();
    const b = await server.createAccount();
    const first = await server.api("POST", "/v1/namespaces", { token: a.apiKey, body: { name: "shared" } });
    expect((await server.api("POST", "/v1/namespaces", { token: b.apiKey, body: { name: "shared" } })).status).toBe(200);
    expect((await server.api("DELETE", `/v1/namespaces/${first.body.id}`, { token: a.apiKey })).status).toBe(200);
    expect((await server.api("POST", "/v1/namespaces", { token: a.apiKey, body: { name: "shared" } })).status).toBe(200);
  });

  test("rejects a missing, empty or non-string name and unknown fields with 400", async () => {
    const account = await server.createAccount();
    for (const body of [{}, { name: "" }, { name: 42 }, { name: "ok", colour: "red" }]) {
      const response = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe("bad_request");
    }
  });

  test("requires namespace:write, which a namespace-bound key can never hold", async () => {
    const account = await server.createAccount();
    const key = await server.mintKey(account.apiKey, ["namespace:read"]);
    expect((await server.api("POST", "/v1/namespaces", { token: key, body: { name: "x" } })).status).toBe(403);
    const refused = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "x", scopes: ["namespace:write"] } });
    expect(refused.status).toBe(400);
  });
});

describe("DELETE /v1/namespaces/{nsid}", () => {
  test("archives the namespace and destroys its keys, OAuth tokens, clients and policies, keeping wallet and BYOK keys", async () => {
    const account = await server.createAccount(undefined, 1_000);
    const created = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "doomed" } });
    const nsid = created.body.id;
    const boundKey = await server.mintKey(account.apiKey, ["keys:read"], nsid);
    const sql = postgres(server.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await sql`insert into oauth_clients (id, account_id, namespace_id, client_id, client_name, client_type) values ('oc1', ${account.accountId}, ${nsid}, 'brc_x1', 'cli', 'public')`;
      await sql`insert into oauth_tokens (id, account_id, namespace_id, client_id, access_token_hash, scopes, expires_at) values ('ot1', ${account.accountId}, ${nsid}, 'brc_x1', '\\x01', '{}', now() + interval '1 hour')`;
      await sql`insert into policies (id, account_id, namespace_id, name, kind) values ('p1', ${account.accountId}, ${nsid}, 'cap', 'budget')`;
      await sql`insert into policy_bindings (id, policy_id, principal_type, principal_id) values ('b1', 'p1', 'namespace', ${nsid})`;
      await sql`insert into byok_keys (account_id, provider_name, kek_id, ciphertext, key_prefix) values (${account.accountId}, 'openai', 'kek', '\\x00', 'sk-')`;

      const response = await server.api("DELETE", `/v1/namespaces/${nsid}`, { token: account.apiKey });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ deleted: true });

      const [ns] = await sql`select archived_at from namespaces where id = ${nsid}`;
      expect(ns!.archived_at).not.toBeNull();
      const counts = await sql`select
        (select count(*)::int from api_keys where namespace_id = ${nsid}) as keys,
        (select count(*)::int from oauth_tokens where namespace_id = ${nsid}) as tokens,
        (select count(*)::int from oauth_clients where namespace_id = ${nsid}) as clients,
        (select count(*)::int from policies where namespace_id = ${nsid}) as policies,
        (select count(*)::int from policy_bindings where principal_id = ${nsid}) as bindings,
        (select count(*)::int from byok_keys where account_id = ${account.accountId}) as byok,
        (select balance_micro_usd::int from wallets where account_id = ${account.accountId}) as balance`;
      expect(counts[0]).toEqual({ keys: 0, tokens: 0, clients: 0, policies: 0, bindings: 0, byok: 1, balance: 1_000 });
    } finally {
      await sql.end();
    }
    // The destroyed key stops working at once on this instance.
    expect((await server.api("GET", "/v1/keys", { token: boundKey })).status).toBe(401);
    // And the archived namespace is gone from listings and paths.
    const list = await server.api("GET", "/v1/namespaces", { token: account.apiKey });
    expect(list.body.data.map((n: any) => n.id)).not.toContain(nsid);
    expect((await server.api("GET", `/v1/namespaces/${nsid}/keys`, { token: account.apiKey })).status).toBe(404);
    expect((await server.api("DELETE", `/v1/namespaces/${nsid}`, { token: account.apiKey })).status).toBe(404);
  });

  test("refuses to delete the caller's last namespace with 409", async () => {
    const account = await server.createAccount();
    const response = await server.api("DELETE", `/v1/namespaces/${account.namespaceId}`, { token: account.apiKey });
    expect(response.status).toBe(409);
    expect(response.body.error).toBe("conflict");
  });

  test("never leaves an account without a namespace when two deletes race", async () => {
    const account = await server.createAccount();
    const second = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "second" } });
    const results = await Promise.all([
      server.api("DELETE", `/v1/namespaces/${account.namespaceId}`, { token: account.apiKey }),
      server.api("DELETE", `/v1/namespaces/${second.body.id}`, { token: account.apiKey }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const list = await server.api("GET", "/v1/namespaces", { token: account.apiKey });
    expect(list.body.data).toHaveLength(1);
  });

  test("accepts `me` as the credential's own namespace", async () => {
    const account = await server.createAccount();
    await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "keep" } });
    const response = await server.api("DELETE", "/v1/namespaces/me", { token: account.apiKey });
    expect(response.status).toBe(200);
    const list = await server.api("GET", "/v1/namespaces", { token: account.apiKey });
    expect(list.body.data.map((n: any) => n.name)).toEqual(["keep"]);
  });
});

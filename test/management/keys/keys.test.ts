import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startTestServer, type TestServer } from "../../support/test-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("POST /v1/namespaces/{nsid}/keys", () => {
  test("returns the plaintext token once, brk_<id>.<secret>, and stores only its hash", async () => {
    const account = await server.createAccount();
    const response = await server.api("POST", `/v1/namespaces/${account.namespaceId}/keys`, {
      token: account.apiKey,
      body: { display_name: "ci", scopes: ["keys:read", "usage:read"] },
    });
    expect(response.status).toBe(200);
    const { token, id, key_prefix, display_name, scopes, expires_at } = response.body;
    expect(token).toMatch(/^brk_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(token.startsWith(key_prefix)).toBe(true);
    expect({ display_name, scopes, expires_at }).toEqual({ display_name: "ci", scopes: ["keys:read", "usage:read"], expires_at: null });

    const list = await server.api("GET", `/v1/namespaces/${account.namespaceId}/keys`, { token: account.apiKey });
    expect(list.text).not.toContain(token.split(".")[1]);
    expect(list.body.data.find((k: any) => k.id === id)).toMatchObject({ key_prefix, revoked_at: null, last_used_at: null });

    const sql = postgres(server.databaseUrl, { max: 1, onnotice: () => {} });
    const [row] = await sql`select token_hash from api_keys where id = ${id}`;
    await sql.end();
    expect(Buffer.from(row!.token_hash).length).toBe(32);
    expect(Buffer.from(row!.token_hash).toString()).not.toContain(token.split(".")[1]);
  });

  test("works as the flat /v1/keys for the caller's own namespace, and the key authenticates via every header", async () => {
    const account = await server.createAccount();
    const created = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "flat", scopes: ["keys:read"] } });
    expect(created.status).toBe(200);
    const token = created.body.token;
    const headerSets: Record<string, string>[] = [{ authorization: `Bearer ${token}` }, { "x-api-key": token }, { "x-goog-api-key": token }];
    for (const headers of headerSets) {
      const response = await server.api("GET", "/v1/keys", { headers });
      expect(response.status).toBe(200);
      expect(response.body.data.map((k: any) => k.id)).toContain(created.body.id);
    }
  });

  test("refuses scopes the caller does not hold (no upscaling), and allows any subset of them", async () => {
    const account = await server.createAccount();
    const limited = await server.mintKey(account.apiKey, ["keys:write", "keys:read", "usage:read"]);
    const up = await server.api("POST", "/v1/keys", { token: limited, body: { display_name: "up", scopes: ["keys:read", "billing:read"] } });
    expect(up.status).toBe(403);
    expect(up.body.error_description).toContain("billing:read");
    const down = await server.api("POST", "/v1/keys", { token: limited, body: { display_name: "down", scopes: ["usage:read"] } });
    expect(down.status).toBe(200);
    const same = await server.api("POST", "/v1/keys", { token: limited, body: { display_name: "same", scopes: ["keys:write", "keys:read", "usage:read"] } });
    expect(same.status).toBe(200);
  });

  test("treats a resource wildcard as covering its actions, but never the reverse", async () => {
    const account = await server.createAccount();
    const wild = await server.mintKey(account.apiKey, ["keys:write", "policy:*"]);
    expect((await server.api("POST", "/v1/keys", { token: wild, body: { display_name: "w", scopes: ["policy:read", "policy:write"] } })).status).toBe(200);
    const narrow = await server.mintKey(account.apiKey, ["keys:write", "policy:read"]);
    expect((await server.api("POST", "/v1/keys", { token: narrow, body: { display_name: "w", scopes: ["policy:*"] } })).status).toBe(403);
  });

  test("rejects unknown scopes, empty display names, empty scope lists and bad expiry with 400", async () => {
    const account = await server.createAccount();
    const bodies = [
      { display_name: "x", scopes: ["keys:destroy"] },
      { display_name: "", scopes: ["keys:read"] },
      { display_name: "x", scopes: [] },
      { display_name: "x", scopes: "keys:read" },
      { display_name: "x", scopes: ["keys:read"], expires_at: "tomorrow" },
      { display_name: "x", scopes: ["keys:read"], expires_at: "2001-01-01T00:00:00Z" },
      { display_name: "x", scopes: ["keys:read"], owner: "me" },
    ];
    for (const body of bodies) {
      const response = await server.api("POST", "/v1/keys", { token: account.apiKey, body });
      expect({ body, status: response.status, error: response.body?.error }).toEqual({ body, status: 400, error: "bad_request" });
    }
  });

  test("requires keys:write to mint and keys:read to list", async () => {
    const account = await server.createAccount();
    const reader = await server.mintKey(account.apiKey, ["keys:read"]);
    const mint = await server.api("POST", "/v1/keys", { token: reader, body: { display_name: "x", scopes: ["keys:read"] } });
    expect(mint.status).toBe(403);
    expect(mint.body.error_description).toBe("missing required scope: keys:write");
    const writer = await server.mintKey(account.apiKey, ["keys:write"]);
    expect((await server.api("GET", "/v1/keys", { token: writer })).body.error_description).toBe("missing required scope: keys:read");
  });

  test("an expired key gets 401 at once", async () => {
    const account = await server.createAccount();
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const created = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "short", scopes: ["keys:read"], expires_at: expiresAt } });
    expect(created.body.expires_at).toBe(expiresAt);
    expect((await server.api("GET", "/v1/keys", { token: created.body.token })).status).toBe(200);
    await Bun.sleep(1600);
    expect((await server.api("GET", "/v1/keys", { token: created.body.token })).status).toBe(401);
  });
});

describe("keys minted by keys", () => {
  test("the token response is never cached: Cache-Control no-store, Pragma no-cache", async () => {
    const account = await server.createAccount();
    const created = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "c", scopes: ["keys:read"] } });
    expect(created.status).toBe(200);
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(created.headers.get("pragma")).toBe("no-cache");
  });

  test("a wildcard is stored as the concrete scopes it stands for at mint time", async () => {
    const account = await server.createAccount();
    const created = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "w", scopes: ["usage:read", "byok:*", "policy:read"] } });
    expect(created.status).toBe(200);
    expect(created.body.scopes).toEqual(["usage:read", "byok:read", "byok:write", "policy:read"]);
    const sql = postgres(server.databaseUrl, { max: 1, onnotice: () => {} });
    const [row] = await sql`select scopes from api_keys where id = ${created.body.id}`;
    await sql.end();
    expect(row!.scopes).toEqual(["usage:read", "byok:read", "byok:write", "policy:read"]);
    const principal = await server.server.services.credentials.resolve(created.body.token);
    expect(principal!.scopes).not.toContain("byok:*");
  });

  test("a child expires no later than the key that minted it, and a grandchild no later than its grandparent", async () => {
    const account = await server.createAccount();
    const parentExpiry = new Date(Date.now() + 120_000).toISOString();
    const parent = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "p", scopes: ["keys:write", "keys:read"], expires_at: parentExpiry } });
    expect(parent.body.expires_at).toBe(parentExpiry);
    const unbounded = await server.api("POST", "/v1/keys", { token: parent.body.token, body: { display_name: "c", scopes: ["keys:write", "keys:read"] } });
    expect(unbounded.status).toBe(200);
    expect(unbounded.body.expires_at).toBe(parentExpiry);
    const later = await server.api("POST", "/v1/keys", {
      token: parent.body.token,
      body: { display_name: "c2", scopes: ["keys:read"], expires_at: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(later.body.expires_at).toBe(parentExpiry);
    const sooner = new Date(Date.now() + 60_000).toISOString();
    const earlier = await server.api("POST", "/v1/keys", { token: parent.body.token, body: { display_name: "c3", scopes: ["keys:read"], expires_at: sooner } });
    expect(earlier.body.expires_at).toBe(sooner);
    const grandchild = await server.api("POST", "/v1/keys", { token: unbounded.body.token, body: { display_name: "g", scopes: ["keys:read"] } });
    expect(grandchild.body.expires_at).toBe(parentExpiry);
    // The account-wide key never expires: what it mints without expires_at does not either.
    const free = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "f", scopes: ["keys:read"] } });
    expect(free.body.expires_at).toBeNull();
  });

  test("a child of a short-lived key stops working when its parent expires", async () => {
    const account = await server.createAccount();
    const parent = await server.api("POST", "/v1/keys", {
      token: account.apiKey,
      body: { display_name: "short", scopes: ["keys:write", "keys:read"], expires_at: new Date(Date.now() + 1500).toISOString() },
    });
    const child = await server.api("POST", "/v1/keys", { token: parent.body.token, body: { display_name: "child", scopes: ["keys:read"] } });
    expect((await server.api("GET", "/v1/keys", { token: child.body.token })).status).toBe(200);
    await Bun.sleep(1600);
    expect((await server.api("GET", "/v1/keys", { token: child.body.token })).status).toBe(401);
  });
});

describe("a derived key dies with its parent", () => {
  test("revoking a key revokes what it minted, and what those minted, at once on this instance", async () => {
    const account = await server.createAccount();
    const parent = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "p", scopes: ["keys:write", "keys:read"] } });
    const child = await server.api("POST", "/v1/keys", { token: parent.body.token, body: { display_name: "c", scopes: ["keys:write", "keys:read"] } });
    const grandchild = await server.api("POST", "/v1/keys", { token: child.body.token, body: { display_name: "g", scopes: ["keys:read"] } });
    const sibling = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "s", scopes: ["keys:read"] } });
    for (const token of [child.body.token, grandchild.body.token, sibling.body.token]) expect((await server.api("GET", "/v1/keys", { token })).status).toBe(200);
    expect((await server.api("DELETE", `/v1/keys/${parent.body.id}`, { token: account.apiKey })).status).toBe(200);
    expect((await server.api("GET", "/v1/keys", { token: child.body.token })).status).toBe(401);
    expect((await server.api("GET", "/v1/keys", { token: grandchild.body.token })).status).toBe(401);
    expect((await server.api("GET", "/v1/keys", { token: sibling.body.token })).status).toBe(200);
    expect((await server.api("GET", "/v1/keys", { token: account.apiKey })).status).toBe(200);
  });

  test("another instance refuses the child of a revoked or expired parent within the cache lifetime", async () => {
    const second = await startTestServer({ credentialCacheTtlMs: 300 }, { url: server.databaseUrl, drop: async () => {} });
    try {
      const account = await server.createAccount();
      const parent = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "p", scopes: ["keys:write", "keys:read"] } });
      const child = await server.api("POST", "/v1/keys", { token: parent.body.token, body: { display_name: "c", scopes: ["keys:write", "keys:read"] } });
      const grandchild = await server.api("POST", "/v1/keys", { token: child.body.token, body: { display_name: "g", scopes: ["keys:read"] } });
      expect((await second.api("GET", "/v1/keys", { token: grandchild.body.token })).status).toBe(200);
      await server.api("DELETE", `/v1/keys/${parent.body.id}`, { token: account.apiKey });
      await Bun.sleep(400);
      expect((await second.api("GET", "/v1/keys", { token: grandchild.body.token })).status).toBe(401);
      expect((await second.api("GET", "/v1/keys", { token: child.body.token })).status).toBe(401);
    } finally {
      await second.close();
    }
  });

  test("revoking a middle key leaves its parent working and kills its child", async () => {
    const account = await server.createAccount();
    const parent = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "p", scopes: ["keys:write", "keys:read"] } });
    const middle = await server.api("POST", "/v1/keys", { token: parent.body.token, body: { display_name: "m", scopes: ["keys:write", "keys:read"] } });
    const leaf = await server.api("POST", "/v1/keys", { token: middle.body.token, body: { display_name: "l", scopes: ["keys:read"] } });
    expect((await server.api("GET", "/v1/keys", { token: leaf.body.token })).status).toBe(200);
    expect((await server.api("DELETE", `/v1/keys/${middle.body.id}`, { token: parent.body.token })).status).toBe(200);
    expect((await server.api("GET", "/v1/keys", { token: leaf.body.token })).status).toBe(401);
    expect((await server.api("GET", "/v1/keys", { token: parent.body.token })).status).toBe(200);
  });
});

describe("DELETE /v1/namespaces/{nsid}/keys/{id}", () => {
  test("revokes the key: {revoked: true}, revoked_at stamped, 401 at once on this instance", async () => {
    const account = await server.createAccount();
    const created = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "r", scopes: ["keys:read"] } });
    expect((await server.api("GET", "/v1/keys", { token: created.body.token })).status).toBe(200); // now cached
    const revoke = await server.api("DELETE", `/v1/namespaces/${account.namespaceId}/keys/${created.body.id}`, { token: account.apiKey });
    expect(revoke.status).toBe(200);
    expect(revoke.body).toEqual({ revoked: true });
    expect((await server.api("GET", "/v1/keys", { token: created.body.token })).status).toBe(401);
    const list = await server.api("GET", "/v1/keys", { token: account.apiKey });
    expect(list.body.data.find((k: any) => k.id === created.body.id).revoked_at).not.toBeNull();
  });

  test("is 404 for a key id that is missing or in another namespace", async () => {
    const account = await server.createAccount();
    const other = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "other" } });
    const key = await server.api("POST", `/v1/namespaces/${other.body.id}/keys`, { token: account.apiKey, body: { display_name: "o", scopes: ["keys:read"] } });
    expect((await server.api("DELETE", `/v1/keys/${key.body.id}`, { token: account.apiKey })).status).toBe(404);
    expect((await server.api("DELETE", "/v1/keys/k_doesnotexist", { token: account.apiKey })).status).toBe(404);
    expect((await server.api("GET", "/v1/keys", { token: key.body.token })).status).toBe(200);
  });

  test("a key revoked on one instance stops working on another within the credential cache lifetime", async () => {
    const second = await startTestServer({ credentialCacheTtlMs: 300 }, { url: server.databaseUrl, drop: async () => {} });
    try {
      const account = await server.createAccount();
      const created = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "x", scopes: ["keys:read"] } });
      expect((await second.api("GET", "/v1/keys", { token: created.body.token })).status).toBe(200);
      await server.api("DELETE", `/v1/keys/${created.body.id}`, { token: account.apiKey });
      await Bun.sleep(400);
      expect((await second.api("GET", "/v1/keys", { token: created.body.token })).status).toBe(401);
    } finally {
      await second.close();
    }
  });
});

describe("last_used_at", () => {
  test("is kept from batched flushes, not a write per request", async () => {
    const tracker = server.server.services.lastUsed;
    // The tracker's own flush (every 5 s) may fall between the requests and the listing, the
    // more likely the slower the machine: it is stopped here, so the listing shows what the
    // requests themselves wrote.
    await tracker.stop();
    try {
      const account = await server.createAccount();
      const created = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "u", scopes: ["keys:read"] } });
      const before = Date.now();
      for (let i = 0; i < 5; i++) await server.api("GET", "/v1/keys", { token: created.body.token });
      const listedEarly = await server.api("GET", "/v1/keys", { token: account.apiKey });
      expect(listedEarly.body.data.find((k: any) => k.id === created.body.id).last_used_at).toBeNull();
      await tracker.flush();
      const listed = await server.api("GET", "/v1/keys", { token: account.apiKey });
      const lastUsed = Date.parse(listed.body.data.find((k: any) => k.id === created.body.id).last_used_at);
      expect(lastUsed).toBeGreaterThanOrEqual(before - 1000);
    } finally {
      tracker.start();
    }
  });
});

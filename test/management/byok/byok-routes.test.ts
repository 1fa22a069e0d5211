import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sodium from "libsodium-wrappers";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../../support/test-server";

// A catalog where one provider refuses BYOK keys, the rest as built in.
function catalogWithoutByokFor(providerId: string): string {
  const catalog = JSON.parse(readFileSync(new URL("../../../src/providers/builtin-catalog.json", import.meta.url), "utf8"));
  for (const provider of catalog.providers) if (provider.id === providerId) provider.byok = false;
  const path = join(mkdtempSync(join(tmpdir(), "byok-catalog-")), "providers.json");
  writeFileSync(path, JSON.stringify(catalog));
  return path;
}

let server: TestServer;
beforeAll(async () => {
  await sodium.ready;
  server = await startTestServer({ providersFile: catalogWithoutByokFor("xai") });
});
afterAll(() => server.close());

async function pubkey(s: TestServer = server): Promise<{ kek_id: string; public_key: string }> {
  const response = await s.api("GET", "/v1/byok/encryption-pubkey");
  expect(response.status).toBe(200);
  return response.body;
}

function seal(key: string, publicKeyB64: string): string {
  const box = sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(publicKeyB64, sodium.base64_variants.ORIGINAL));
  return sodium.to_base64(box, sodium.base64_variants.ORIGINAL);
}

async function upload(token: string, provider: string, key: string, extra: Record<string, unknown> = {}) {
  const { kek_id, public_key } = await pubkey();
  return server.api("POST", "/v1/byok/keys", { token, body: { provider_name: provider, kek_id, ciphertext_b64: seal(key, public_key), key_prefix: key.slice(0, 3), ...extra } });
}

describe("GET /v1/byok/encryption-pubkey", () => {
  test("is public, answers {kek_id, public_key} with a quoted-kek_id ETag and private caching; If-None-Match gives 304", async () => {
    const response = await server.api("GET", "/v1/byok/encryption-pubkey");
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["kek_id", "public_key"]);
    expect(Buffer.from(response.body.public_key, "base64").length).toBe(32);
    expect(Buffer.from(response.body.public_key, "base64").toString("base64")).toBe(response.body.public_key);
    expect(response.headers.get("etag")).toBe(`"${response.body.kek_id}"`);
    expect(response.headers.get("cache-control")).toBe("private, max-age=300");
    const again = await server.api("GET", "/v1/byok/encryption-pubkey", { headers: { "if-none-match": `"${response.body.kek_id}"` } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    expect(again.headers.get("etag")).toBe(`"${response.body.kek_id}"`);
    const stale = await server.api("GET", "/v1/byok/encryption-pubkey", { headers: { "if-none-match": '"kek_other"' } });
    expect(stale.status).toBe(200);
    expect(stale.body).toEqual(response.body);
  });
});

describe("/v1/byok/keys", () => {
  test("upsert answers {provider_name, kek_id, key_prefix}; the list shows every field but never the ciphertext or the key", async () => {
    const account = await server.createAccount();
    const stored = await upload(account.apiKey, "openai", "sk-proj-customer-secret-1", { api_base: "https://proxy.example.test/v1" });
    expect(stored.status).toBe(200);
    const { kek_id } = await pubkey();
    expect(stored.body).toEqual({ provider_name: "openai", kek_id, key_prefix: "sk-" });
    const list = await server.api("GET", "/v1/byok/keys", { token: account.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const entry = list.body.data[0];
    expect(Object.keys(entry).sort()).toEqual(
      ["api_base", "created_at", "kek_id", "key_prefix", "last_failure_at", "last_failure_kind", "last_used_at", "namespace_id", "provider_name", "updated_at"].sort(),
    );
    expect(entry).toMatchObject({ provider_name: "openai", namespace_id: null, kek_id, key_prefix: "sk-", api_base: "https://proxy.example.test/v1", last_used_at: null, last_failure_at: null, last_failure_kind: null });
    expect(new Date(entry.created_at).toISOString()).toBe(entry.created_at);
    expect(list.text).not.toContain("customer-secret");
    // A second upload replaces the first (idempotent per provider); api_base may be dropped.
    const replaced = await upload(account.apiKey, "openai", "sk-proj-customer-secret-2");
    expect(replaced.status).toBe(200);
    const after = await server.api("GET", "/v1/byok/keys", { token: account.apiKey });
    expect(after.body.data).toHaveLength(1);
    expect(after.body.data[0].api_base).toBeNull();
    expect(after.body.data[0].created_at).toBe(entry.created_at);
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "openai")).toBe("sk-proj-customer-secret-2");
  });

  test("refusals are 400 bad_request: stale or unknown kek_id (named), a box that does not open, unknown or non-BYOK provider, bad base64", async () => {
    const account = await server.createAccount();
    const { kek_id, public_key } = await pubkey();
    const good = { provider_name: "anthropic", kek_id, ciphertext_b64: seal("sk-ant-secret-value", public_key), key_prefix: "sk-" };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, kek_id: "kek_0000" }, "kek_id"],
      [{ ...good, ciphertext_b64: seal("sk-ant-secret-value", sodium.to_base64(sodium.crypto_box_keypair().publicKey, sodium.base64_variants.ORIGINAL)) }, "ciphertext_b64"],
      [{ ...good, ciphertext_b64: Buffer.from(new Uint8Array(60)).toString("base64") }, "ciphertext_b64"],
      [{ ...good, ciphertext_b64: "not base64!" }, "ciphertext_b64"],
      [{ ...good, provider_name: "no-such-provider" }, "provider_name"],
      [{ ...good, provider_name: "xai" }, "provider_name"],
      [{ ...good, key_prefix: "sk-ant-secret-value" }, "key_prefix"],
      [{ ...good, api_base: "ftp://example.test" }, "api_base"],
      [{ ...good, extra: 1 }, "extra"],
    ];
    for (const [body, field] of cases) {
      const response = await server.api("POST", "/v1/byok/keys", { token: account.apiKey, body });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe("bad_request");
      expect(response.body.error_description).toContain(field);
      expect(response.text).not.toContain("sk-ant-secret-value");
    }
    expect((await server.api("GET", "/v1/byok/keys", { token: account.apiKey })).body.data).toEqual([]);
  });

  test("key_prefix must be how the sealed key begins, at most 8 characters; one that is, or none, is stored as given", async () => {
    const account = await server.createAccount();
    const { kek_id, public_key } = await pubkey();
    const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    const post = (key_prefix: string, sealed = key) =>
      server.api("POST", "/v1/byok/keys", { token: account.apiKey, body: { provider_name: "openai", kek_id, ciphertext_b64: seal(sealed, public_key), key_prefix } });
    // A prefix that is not the key's start would make the listing lie about which key is stored.
    for (const prefix of ["sk-live", "SK-", "sk-proj-X", "sk-proj-abc", " sk-", "sk-…", "sk-...", "proj"]) {
      const response = await post(prefix);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe("bad_request");
      expect(response.body.error_description).toContain("key_prefix");
      expect(response.text).not.toContain("abcdefghijklmnop");
    }
    expect((await server.api("GET", "/v1/byok/keys", { token: account.apiKey })).body.data).toEqual([]);
    for (const prefix of ["", "s", "sk-proj-"]) {
      const response = await post(prefix);
      expect(response.status).toBe(200);
      expect(response.body.key_prefix).toBe(prefix);
      expect((await server.api("GET", "/v1/byok/keys", { token: account.apiKey })).body.data[0].key_prefix).toBe(prefix);
    }
    // Multi-byte characters count as characters, and must match the key's bytes.
    expect((await post("ключ", "ключ-0123456789abcdef")).status).toBe(200);
    expect((await post("ключ-012", "ключ-0123456789abcdef")).status).toBe(200);
    expect((await post("ключ-0123", "ключ-0123456789abcdef")).status).toBe(400);
    expect((await post("клюя", "ключ-0123456789abcdef")).status).toBe(400);
  });

  test("delete answers {deleted: true}, then 404; a provider without a key is 404", async () => {
    const account = await server.createAccount();
    expect((await upload(account.apiKey, "groq", "gsk_live_customer")).status).toBe(200);
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "groq")).toBe("gsk_live_customer");
    const deleted = await server.api("DELETE", "/v1/byok/keys/groq", { token: account.apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });
    // Invalidated at once on this instance.
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "groq")).toBeUndefined();
    for (const provider of ["groq", "mistral", "%00bad"]) {
      const missing = await server.api("DELETE", `/v1/byok/keys/${provider}`, { token: account.apiKey });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe("not_found");
    }
  });

  test("scopes: byok:read lists, byok:write changes; without them 403; without a credential 401", async () => {
    const account = await server.createAccount();
    const reader = await server.mintKey(account.apiKey, ["byok:read"]);
    const writer = await server.mintKey(account.apiKey, ["byok:write"]);
    const other = await server.mintKey(account.apiKey, ["inference:invoke"]);
    expect((await upload(writer, "openai", "sk-writer-key-123")).status).toBe(200);
    expect((await server.api("GET", "/v1/byok/keys", { token: reader })).body.data).toHaveLength(1);
    const readerWrites = await upload(reader, "openai", "sk-reader-key-123");
    expect(readerWrites.status).toBe(403);
    expect(readerWrites.body.error_description).toBe("missing required scope: byok:write");
    expect((await server.api("GET", "/v1/byok/keys", { token: writer })).status).toBe(403);
    expect((await server.api("GET", "/v1/byok/keys", { token: other })).body.error_description).toBe("missing required scope: byok:read");
    expect((await server.api("DELETE", "/v1/byok/keys/openai", { token: reader })).status).toBe(403);
    expect((await server.api("GET", "/v1/byok/keys")).status).toBe(401);
    expect((await server.api("POST", "/v1/byok/keys", { body: {} })).status).toBe(401);
  });

  test("a namespace-bound credential's key is its namespace's; another account sees and deletes none", async () => {
    const alice = await server.createAccount();
    const bob = await server.createAccount();
    // A key bound to alice's namespace with the byok scopes writes that namespace's key, which
    // the account-wide credential sees with its namespace_id.
    const aliceNamespaceKey = await server.mintKey(alice.apiKey, ["byok:read", "byok:write"], alice.namespaceId);
    expect((await upload(aliceNamespaceKey, "deepseek", "sk-alice-deepseek")).status).toBe(200);
    expect((await server.api("GET", "/v1/byok/keys", { token: alice.apiKey })).body.data.map((k: { provider_name: string; namespace_id: string }) => [k.provider_name, k.namespace_id])).toEqual([
      ["deepseek", alice.namespaceId],
    ]);
    expect(await server.server.services.byokKeys.keyFor(alice.accountId, "deepseek")).toBeUndefined();
    expect((await server.api("GET", "/v1/byok/keys", { token: bob.apiKey })).body.data).toEqual([]);
    const bobDeletes = await server.api("DELETE", "/v1/byok/keys/deepseek", { token: bob.apiKey });
    expect(bobDeletes.status).toBe(404);
    expect(bobDeletes.body).toEqual({ error: "not_found", error_description: "BYOK key not found" });
    expect((await upload(bob.apiKey, "deepseek", "sk-bob-deepseek")).status).toBe(200);
    expect(await server.server.services.byokKeys.keyFor(alice.accountId, "deepseek", alice.namespaceId)).toBe("sk-alice-deepseek");
    expect(await server.server.services.byokKeys.keyFor(bob.accountId, "deepseek")).toBe("sk-bob-deepseek");
    expect((await server.api("DELETE", "/v1/byok/keys/deepseek", { token: aliceNamespaceKey })).status).toBe(200);
    expect(await server.server.services.byokKeys.keyFor(bob.accountId, "deepseek")).toBe("sk-bob-deepseek");
  });
});

describe("KEK rotation", () => {
  test("a stored key still opens after rotation; uploads must use the new kek_id; reseal moves every key to it", async () => {
    const account = await server.createAccount();
    const before = await pubkey();
    expect((await upload(account.apiKey, "mistral", "mistral-customer-key")).status).toBe(200);
    const rotated = await server.api("POST", "/admin/byok/rotate-kek", { token: TEST_ADMIN_TOKEN, body: {} });
    expect(rotated.status).toBe(200);
    expect(rotated.body.kek_id).not.toBe(before.kek_id);
    const after = await pubkey();
    expect(after).toEqual({ kek_id: rotated.body.kek_id, public_key: rotated.body.public_key });
    // The old ETag no longer matches: clients learn of the rotation.
    expect((await server.api("GET", "/v1/byok/encryption-pubkey", { headers: { "if-none-match": `"${before.kek_id}"` } })).status).toBe(200);
    // The key sealed under KEK1 still opens (fresh store: no cached plaintext).
    server.server.services.byokKeys.invalidate(account.accountId, "mistral");
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "mistral")).toBe("mistral-customer-key");
    // An upload sealed to KEK1 is refused, naming kek_id.
    const stale = await server.api("POST", "/v1/byok/keys", {
      token: account.apiKey,
      body: { provider_name: "openai", kek_id: before.kek_id, ciphertext_b64: seal("sk-late-upload-1", before.public_key), key_prefix: "sk-" },
    });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe("bad_request");
    expect(stale.body.error_description).toContain("kek_id");
    const resealed = await server.api("POST", "/admin/byok/reseal", { token: TEST_ADMIN_TOKEN, body: {} });
    expect(resealed.status).toBe(200);
    expect(resealed.body.kek_id).toBe(after.kek_id);
    expect(resealed.body.resealed).toBeGreaterThanOrEqual(1);
    expect(resealed.body.unopenable).toBe(0);
    expect(resealed.body.remaining_on_old_keks).toBe(0);
    const list = await server.api("GET", "/v1/byok/keys", { token: account.apiKey });
    expect(list.body.data[0].kek_id).toBe(after.kek_id);
    server.server.services.byokKeys.invalidate(account.accountId, "mistral");
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "mistral")).toBe("mistral-customer-key");
    // The re-sealed box is a real sealed box to KEK2's public key: nothing is left under KEK1.
    const [row] = await server.server.services.db.sql<{ kek_id: string }[]>`select kek_id from byok_keys where account_id = ${account.accountId}`;
    expect(row!.kek_id).toBe(after.kek_id);
    // A second reseal has nothing left to do.
    expect((await server.api("POST", "/admin/byok/reseal", { token: TEST_ADMIN_TOKEN, body: {} })).body.resealed).toBe(0);
  });

  test("the operator routes need the operator token", async () => {
    const account = await server.createAccount();
    expect((await server.api("POST", "/admin/byok/rotate-kek", { token: account.apiKey, body: {} })).status).toBe(401);
    expect((await server.api("POST", "/admin/byok/reseal", { body: {} })).status).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sodium from "libsodium-wrappers";
import { ByokKeyStore } from "../../src/byok/byok-key-store";
import { KekStore } from "../../src/byok/kek-store";
import { loadMasterKey, MASTER_KEY_FILE } from "../../src/byok/master-key";
import { createTestDatabase } from "../support/test-database";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../support/test-server";

let database: { url: string; drop(): Promise<void> };
let first: TestServer;
let second: TestServer;
beforeAll(async () => {
  await sodium.ready;
  database = await createTestDatabase();
  // Two instances on one database; their KEKs must be the same.
  first = await startTestServer({}, database);
  second = await startTestServer({}, database);
});
afterAll(async () => {
  await first.close();
  await second.close();
  await database.drop();
});

const seal = (key: string, publicKeyB64: string) =>
  sodium.to_base64(sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(publicKeyB64, sodium.base64_variants.ORIGINAL)), sodium.base64_variants.ORIGINAL);

describe("KEKs shared across instances", () => {
  test("instances racing to create the first KEK end with one; each serves the same public key", async () => {
    const answers = await Promise.all([first, second, first, second].map((s) => s.api("GET", "/v1/byok/encryption-pubkey")));
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    const [row] = await first.server.services.db.sql<{ count: number }[]>`select count(*)::int as count from byok_keks`;
    expect(row!.count).toBe(1);
  });

  test("a key uploaded through one instance opens on the other; a rotation on one is served by the other", async () => {
    const account = await first.createAccount();
    const { kek_id, public_key } = (await first.api("GET", "/v1/byok/encryption-pubkey")).body;
    const stored = await second.api("POST", "/v1/byok/keys", { token: account.apiKey, body: { provider_name: "openai", kek_id, ciphertext_b64: seal("sk-shared-instances-1", public_key), key_prefix: "sk-" } });
    expect(stored.status).toBe(200);
    expect(await first.server.services.byokKeys.keyFor(account.accountId, "openai")).toBe("sk-shared-instances-1");
    const rotated = await first.api("POST", "/admin/byok/rotate-kek", { token: TEST_ADMIN_TOKEN, body: {} });
    const served = await second.api("GET", "/v1/byok/encryption-pubkey");
    expect(served.body).toEqual({ kek_id: rotated.body.kek_id, public_key: rotated.body.public_key });
  });

  test("concurrent rotations serialise: exactly one KEK is current afterwards", async () => {
    const results = await Promise.all([first, second, first].map((s) => s.api("POST", "/admin/byok/rotate-kek", { token: TEST_ADMIN_TOKEN, body: {} })));
    for (const result of results) expect(result.status).toBe(200);
    const current = await first.server.services.db.sql<{ kek_id: string }[]>`select kek_id from byok_keks where is_current`;
    expect(current).toHaveLength(1);
    expect((await second.api("GET", "/v1/byok/encryption-pubkey")).body.kek_id).toBe(current[0]!.kek_id);
  });
});

describe("ByokKeyStore cache", () => {
  test("another instance's change is seen once the TTL has passed, not before", async () => {
    const account = await first.createAccount();
    const { kek_id, public_key } = (await first.api("GET", "/v1/byok/encryption-pubkey")).body;
    const upload = (key: string) =>
      first.api("POST", "/v1/byok/keys", { token: account.apiKey, body: { provider_name: "google", kek_id, ciphertext_b64: seal(key, public_key), key_prefix: "AIza" } });
    expect((await upload("AIza-first-customer-key")).status).toBe(200);
    const sql = second.server.services.db.sql;
    // The TTL outlasts the upload below (a round trip through the other instance) even on a loaded machine.
    const ttlMs = 1_500;
    const store = new ByokKeyStore(sql, new KekStore(sql, () => Buffer.from(Buffer.alloc(32, 7))), ttlMs);
    expect(await store.keyFor(account.accountId, "google")).toBe("AIza-first-customer-key");
    expect((await upload("AIza-second-customer-key")).status).toBe(200);
    expect(await store.keyFor(account.accountId, "google")).toBe("AIza-first-customer-key");
    await Bun.sleep(ttlMs + 50);
    expect(await store.keyFor(account.accountId, "google")).toBe("AIza-second-customer-key");
    expect(await store.keyFor(account.accountId, "mistral")).toBeUndefined();
  });

  test("a decrypted key leaves the cache when its entry expires, without another read", async () => {
    const account = await first.createAccount();
    const { kek_id, public_key } = (await first.api("GET", "/v1/byok/encryption-pubkey")).body;
    const stored = await first.api("POST", "/v1/byok/keys", {
      token: account.apiKey,
      body: { provider_name: "mistral", kek_id, ciphertext_b64: seal("mistral-customer-key-0123", public_key), key_prefix: "mist" },
    });
    expect(stored.status).toBe(200);
    const sql = second.server.services.db.sql;
    const store = new ByokKeyStore(sql, new KekStore(sql, () => Buffer.from(Buffer.alloc(32, 7))), 100);
    expect(await store.keyFor(account.accountId, "mistral")).toBe("mistral-customer-key-0123");
    expect(await store.keyFor(account.accountId, "groq")).toBeUndefined();
    expect(store.cachedEntries).toBe(2);
    await Bun.sleep(250);
    expect(store.cachedEntries).toBe(0);
  });

  test("a KEK does not unwrap with another master key (the error names no key material)", async () => {
    const account = await first.createAccount();
    const { kek_id, public_key } = (await first.api("GET", "/v1/byok/encryption-pubkey")).body;
    await first.api("POST", "/v1/byok/keys", { token: account.apiKey, body: { provider_name: "openai", kek_id, ciphertext_b64: seal("sk-wrong-master-1", public_key), key_prefix: "sk-" } });
    const sql = first.server.services.db.sql;
    const store = new ByokKeyStore(sql, new KekStore(sql, () => new Uint8Array(32)), 1000);
    const error = await store.keyFor(account.accountId, "openai").then(() => undefined, (e: Error) => e);
    expect(error?.message).toContain("BYOK_MASTER_KEY");
    expect(error?.message).not.toContain("sk-wrong");
  });
});

describe("BYOK_MASTER_KEY", () => {
  test("unset: generated once into DATA_DIR with mode 0600, the same key on the next start", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "byok-master-")), "data");
    const key = loadMasterKey(undefined, dir);
    expect(key.length).toBe(32);
    const path = join(dir, MASTER_KEY_FILE);
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(loadMasterKey(undefined, dir)).equals(Buffer.from(key))).toBe(true);
    expect(Buffer.from(readFileSync(path, "utf8").trim(), "base64").equals(Buffer.from(key))).toBe(true);
  });

  test("set: must be standard base64 of 32 bytes", () => {
    const good = Buffer.alloc(32, 1).toString("base64");
    expect(Buffer.from(loadMasterKey(good, "/nonexistent")).equals(Buffer.alloc(32, 1))).toBe(true);
    for (const bad of ["", "short", Buffer.alloc(31).toString("base64"), Buffer.alloc(33).toString("base64")]) {
      expect(() => loadMasterKey(bad === "" ? "x" : bad, "/nonexistent")).toThrow("BYOK_MASTER_KEY");
    }
  });
});

describe("bun run admin rotate-kek / reseal", () => {
  test("rotate through the CLI, then reseal moves the stored key to the new KEK", async () => {
    const account = await first.createAccount();
    const before = (await first.api("GET", "/v1/byok/encryption-pubkey")).body;
    await first.api("POST", "/v1/byok/keys", { token: account.apiKey, body: { provider_name: "groq", kek_id: before.kek_id, ciphertext_b64: seal("gsk_cli_rotation_key", before.public_key), key_prefix: "gsk" } });
    const env = { ...process.env, ADMIN_TOKEN: TEST_ADMIN_TOKEN, SWITCHYARD_URL: second.url };
    // Async spawn: the servers under test run in this process and must keep answering.
    const runCli = async (...args: string[]) => {
      const child = Bun.spawn([process.execPath, "src/cli/admin.ts", ...args], { env, stdout: "pipe", stderr: "pipe" });
      const [stdout, exitCode] = await Promise.all([new Response(child.stdout).text(), child.exited]);
      return { stdout, exitCode };
    };
    const rotated = await runCli("rotate-kek");
    expect(rotated.exitCode).toBe(0);
    const kek = JSON.parse(rotated.stdout);
    expect(kek.kek_id).not.toBe(before.kek_id);
    const resealed = await runCli("reseal");
    expect(resealed.exitCode).toBe(0);
    expect(JSON.parse(resealed.stdout)).toMatchObject({ kek_id: kek.kek_id, unopenable: 0, remaining_on_old_keks: 0 });
    const list = await first.api("GET", "/v1/byok/keys", { token: account.apiKey });
    expect(list.body.data[0].kek_id).toBe(kek.kek_id);
    first.server.services.byokKeys.invalidate(account.accountId, "groq");
    expect(await first.server.services.byokKeys.keyFor(account.accountId, "groq")).toBe("gsk_cli_rotation_key");
  });
});

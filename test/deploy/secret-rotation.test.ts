import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { loadConfig } from "../../src/config";
import { createTestDatabase } from "../support/test-database";
import { startTestServer, type TestServer } from "../support/test-server";

/**
 * The rotations docs/operations.md describes, instance by instance on one database, as a
 * rolling restart goes: old instances and new ones serve side by side at every step.
 */
let database: { url: string; drop(): Promise<void> };
const running: TestServer[] = [];
beforeAll(async () => {
  await sodium.ready;
  database = await createTestDatabase();
});
afterAll(async () => {
  for (const server of running) await server.close();
  await database.drop();
});

async function instance(overrides: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const server = await startTestServer(overrides, database);
  running.push(server);
  return server;
}

const masterKey = (fill: number) => Buffer.alloc(32, fill).toString("base64");
const seal = (key: string, publicKeyB64: string) =>
  sodium.to_base64(sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(publicKeyB64, sodium.base64_variants.ORIGINAL)), sodium.base64_variants.ORIGINAL);
const adminCall = (server: TestServer, token: string, path = "/admin/accounts") =>
  server.api("POST", path, { token, body: path === "/admin/accounts" ? { email: `rotation-${Math.random().toString(36).slice(2)}@example.test` } : {} });

describe("rotating ADMIN_TOKEN", () => {
  test("ADMIN_TOKEN_PREVIOUS is refused without ADMIN_TOKEN, and read when both are set", () => {
    expect(() => loadConfig({ ADMIN_TOKEN_PREVIOUS: "old" })).toThrow("ADMIN_TOKEN_PREVIOUS is set but ADMIN_TOKEN is not");
    const config = loadConfig({ ADMIN_TOKEN: "new", ADMIN_TOKEN_PREVIOUS: "old" });
    expect([config.adminToken, config.adminTokenPrevious]).toEqual(["new", "old"]);
    expect(loadConfig({}).adminTokenPrevious).toBeUndefined();
  });

  test("old and new instances both take the old token during the rollout; afterwards only the new one works", async () => {
    const old = await instance({ adminToken: "admin-token-old" });
    const rolling = await instance({ adminToken: "admin-token-new", adminTokenPrevious: "admin-token-old" });
    // Step 1: the fleet is mixed; operator tools still send the old token, and it works everywhere.
    expect((await adminCall(old, "admin-token-old")).status).toBe(200);
    expect((await adminCall(rolling, "admin-token-old")).status).toBe(200);
    // Step 2: tools switch to the new token once every instance has it.
    expect((await adminCall(rolling, "admin-token-new")).status).toBe(200);
    expect((await adminCall(rolling, "some-other-token")).status).toBe(401);
    // Step 3: instances restarted without ADMIN_TOKEN_PREVIOUS refuse the old token.
    const done = await instance({ adminToken: "admin-token-new" });
    expect((await adminCall(done, "admin-token-new")).status).toBe(200);
    const refused = await adminCall(done, "admin-token-old");
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe("unauthorized");
  });
});

describe("rotating BYOK_MASTER_KEY", () => {
  test("BYOK_MASTER_KEY_PREVIOUS is refused without BYOK_MASTER_KEY, and a malformed one stops the start", async () => {
    expect(() => loadConfig({ BYOK_MASTER_KEY_PREVIOUS: masterKey(1) })).toThrow("BYOK_MASTER_KEY_PREVIOUS is set but BYOK_MASTER_KEY is not");
    await expect(startTestServer({ byokMasterKey: masterKey(2), byokMasterKeyPrevious: "not-a-key" }, database)).rejects.toThrow("BYOK_MASTER_KEY_PREVIOUS must be the standard base64");
  });

  test("keys stored under the old master key keep working through the rollout, and open with the new key alone after rotate-kek and reseal", async () => {
    const oldKey = masterKey(0x31);
    const newKey = masterKey(0x32);
    const old = await instance({ byokMasterKey: oldKey });
    const account = await old.createAccount();
    const { kek_id, public_key } = (await old.api("GET", "/v1/byok/encryption-pubkey")).body;
    const upload = await old.api("POST", "/v1/byok/keys", { token: account.apiKey, body: { provider_name: "openai", kek_id, ciphertext_b64: seal("sk-rotation-customer-key", public_key), key_prefix: "sk-" } });
    expect(upload.status).toBe(200);

    // Without the previous key, an instance on the new master key cannot open the old KEK:
    // this is why the rotation window exists.
    const newOnlyTooEarly = await instance({ byokMasterKey: newKey });
    await expect(newOnlyTooEarly.server.services.byokKeys.keyFor(account.accountId, "openai")).rejects.toThrow("does not unwrap with this BYOK_MASTER_KEY");

    // Step 1: instances restarted with the new key and the old one as previous; old instances still serve.
    const rolling = await instance({ byokMasterKey: newKey, byokMasterKeyPrevious: oldKey });
    expect(await rolling.server.services.byokKeys.keyFor(account.accountId, "openai")).toBe("sk-rotation-customer-key");
    expect(await old.server.services.byokKeys.keyFor(account.accountId, "openai")).toBe("sk-rotation-customer-key");

    // Step 2: once every instance has both, a new KEK (wrapped with the new key) and a reseal.
    const rotated = await adminCall(rolling, "test-admin-token", "/admin/byok/rotate-kek");
    expect(rotated.status).toBe(200);
    const resealed = await adminCall(rolling, "test-admin-token", "/admin/byok/reseal");
    expect(resealed.body).toEqual({ kek_id: rotated.body.kek_id, resealed: 1, unopenable: 0, remaining_on_old_keks: 0 });

    // Step 3: instances restarted with the new key alone open every stored key; the old key opens none.
    const done = await instance({ byokMasterKey: newKey });
    expect(await done.server.services.byokKeys.keyFor(account.accountId, "openai")).toBe("sk-rotation-customer-key");
    const oldOnly = await instance({ byokMasterKey: oldKey });
    await expect(oldOnly.server.services.byokKeys.keyFor(account.accountId, "openai")).rejects.toThrow("does not unwrap with this BYOK_MASTER_KEY");
  });
});

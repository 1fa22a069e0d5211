/**
 * docs/operations.md "Backup and restore", done as written: a database with an account, a minted key,
 * a BYOK key and some requests is dumped with pg_dump (custom format), restored with
 * pg_restore into a fresh database, and a server started on the copy sees all of it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sodium from "libsodium-wrappers";
import { MOCK_KEY, writeMockCatalog } from "../support/inference-harness";
import { mockProviderEnv, startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import { createTestDatabase } from "../support/test-database";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";

const BYOK_KEY = "sk-ant-restored-customer-key";

let mocks: MockUpstreamSet;
let providersFile: string;
let source: { url: string; drop(): Promise<void> };
let restored: { url: string; drop(): Promise<void> };
let folder: string;
let original: TestServer | undefined;
let copy: TestServer | undefined;

beforeAll(async () => {
  await sodium.ready;
  // No key check at the mocks: the test reads which key each request carried.
  mocks = await startAllMockUpstreams();
  providersFile = writeMockCatalog(mocks);
  Object.assign(process.env, mockProviderEnv(MOCK_KEY));
  source = await createTestDatabase();
  restored = await createTestDatabase();
  folder = mkdtempSync(join(tmpdir(), "switchyard-backup-"));
});
afterAll(async () => {
  await original?.close();
  await copy?.close();
  await mocks.close();
  await source.drop();
  await restored.drop();
  rmSync(folder, { recursive: true, force: true });
});

/** PostgreSQL's client programs from the cluster the test runner started (test/run-tests.ts). */
async function pgTool(name: "pg_dump" | "pg_restore", args: string[]): Promise<void> {
  const bin = process.env.TEST_PG_BIN;
  if (!bin) throw new Error("TEST_PG_BIN is not set: run the suite with `npm test` (test/run-tests.ts)");
  const child = Bun.spawn([join(bin, name), ...args], { stdout: "pipe", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`${name} exited ${code}: ${stderr}`);
}

const chat = (server: TestServer, key: string, model: string, text: string) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: text }] }),
  });

interface History {
  data: { id: string; model_id: string; status: string; funding_source: string; final_charge_micro_usd: number }[];
}

async function historyOf(server: TestServer, key: string, count: number): Promise<History["data"]> {
  // Records are written in batches: wait until the expected number is there.
  for (let attempt = 0; attempt < 100; attempt++) {
    const listed = await server.api<History>("GET", "/v1/namespaces/me/requests?limit=100", { token: key });
    if (listed.status === 200 && listed.body.data.length >= count) return listed.body.data;
    await Bun.sleep(50);
  }
  throw new Error(`fewer than ${count} request records appeared`);
}

const seal = (key: string, publicKeyB64: string) =>
  sodium.to_base64(sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(publicKeyB64, sodium.base64_variants.ORIGINAL)), sodium.base64_variants.ORIGINAL);

describe("backup with pg_dump and restore with pg_restore", () => {
  let account: TestAccount;
  let mintedKey: string;
  let historyBefore: History["data"];
  let balanceBefore: number;

  test("the copy serves the same account, keys, BYOK key and history", async () => {
    original = await startTestServer({ providersFile }, source);
    account = await original.createAccount(undefined, 50_000_000);
    mintedKey = await original.mintKey(account.apiKey, ["inference:invoke", "usage:read"]);
    const { kek_id, public_key } = (await original.api("GET", "/v1/byok/encryption-pubkey")).body;
    const uploaded = await original.api("POST", "/v1/byok/keys", {
      token: account.apiKey,
      body: { provider_name: "mock-anthropic", kek_id, ciphertext_b64: seal(BYOK_KEY, public_key), key_prefix: "sk-ant-" },
    });
    expect(uploaded.status).toBe(200);
    for (const text of ["first", "second"]) expect((await chat(original, mintedKey, "mock-openai/gpt-4o-mini", text)).status).toBe(200);
    expect((await chat(original, account.apiKey, "mock-anthropic/claude-sonnet-4-5", "paid with the customer's key")).status).toBe(200);
    historyBefore = await historyOf(original, account.apiKey, 3);
    balanceBefore = (await original.api("GET", "/v1/billing/balance", { token: account.apiKey })).body.balance_micro_usd;
    expect(balanceBefore).toBeLessThan(50_000_000);
    // Shutdown flushes what is buffered; the dump sees everything the server acknowledged.
    await original.close();
    original = undefined;

    const dump = join(folder, "switchyard.dump");
    await pgTool("pg_dump", ["--format=custom", "--no-owner", "--file", dump, source.url]);
    await pgTool("pg_restore", ["--no-owner", "--exit-on-error", "--dbname", restored.url, dump]);

    copy = await startTestServer({ providersFile }, restored);
    // The account, its balance and its history, record for record.
    expect((await copy.api("GET", "/v1/billing/balance", { token: account.apiKey })).body.balance_micro_usd).toBe(balanceBefore);
    expect(await historyOf(copy, account.apiKey, 3)).toEqual(historyBefore);
    expect(historyBefore.map((record) => record.funding_source).sort()).toEqual(["byok", "cloud_credit", "cloud_credit"]);
    // The minted key still authenticates and serves.
    const again = await chat(copy, mintedKey, "mock-openai/gpt-4o-mini", "after the restore");
    expect(again.status).toBe(200);
    // The BYOK key opens (its KEK came along, wrapped with the same master key) and goes upstream.
    expect(await copy.server.services.byokKeys.keyFor(account.accountId, "mock-anthropic")).toBe(BYOK_KEY);
    const anthropic = mocks.anthropic;
    anthropic.requests.length = 0;
    expect((await chat(copy, account.apiKey, "mock-anthropic/claude-sonnet-4-5", "after the restore")).status).toBe(200);
    expect(anthropic.requests.at(-1)!.headers["x-api-key"]).toBe(BYOK_KEY);
  }, 60_000);
});

import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestDatabase } from "../support/test-database";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { decide, deviceTokens, pollDevice, startDevice } from "./oauth-support";

/**
 * A grant dies with its namespace: at once on the instance that archived it, within
 * CREDENTIAL_CACHE_TTL_MS on another instance sharing the database. Codes approved for
 * the namespace die with it too.
 */
const TTL_MS = 1_000;
let database: { url: string; drop(): Promise<void> };
let first: TestServer;
let second: TestServer;
let account: TestAccount;
beforeAll(async () => {
  database = await createTestDatabase();
  first = await startTestServer({ credentialCacheTtlMs: TTL_MS }, database);
  second = await startTestServer({ credentialCacheTtlMs: TTL_MS }, database);
  account = await first.createAccount();
});
afterAll(async () => {
  await first.close();
  await second.close();
  await database.drop();
});

/**
 * Polls until the token is refused. A poll that was *sent* more than the cache TTL after
 * the change must already be refused; the clock is read before each call, so a slow
 * answer on a busy machine cannot fail the bound.
 */
async function refusedWithinTtl(status: () => Promise<number>, changedAt: number): Promise<void> {
  for (;;) {
    const sentAt = Date.now();
    if ((await status()) === 401) return;
    expect(sentAt - changedAt).toBeLessThan(TTL_MS + 500);
    await Bun.sleep(50);
  }
}

const keysStatus = async (server: TestServer, token: string) => (await server.api("GET", "/v1/namespaces/me/keys", { token })).status;

test("a deleted namespace's token stops at once here and within the cache TTL on the other instance", async () => {
  const namespace = (await first.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "doomed" } })).body.id as string;
  const tokens = await deviceTokens(first, account.apiKey, namespace);
  // An approved code not yet exchanged for tokens.
  const pending = await startDevice(first);
  expect((await decide(first, account.apiKey, pending.user_code, namespace)).status).toBe(200);
  // Both instances have the grant cached.
  expect(await keysStatus(first, tokens.access_token)).toBe(200);
  expect(await keysStatus(second, tokens.access_token)).toBe(200);

  expect((await first.api("DELETE", `/v1/namespaces/${namespace}`, { token: account.apiKey })).status).toBe(200);
  const deletedAt = Date.now();
  expect(await keysStatus(first, tokens.access_token)).toBe(401);
  // Until the other instance's cache entry ages out, its routes already find the namespace
  // archived (404); after, the token itself is refused.
  await refusedWithinTtl(() => keysStatus(second, tokens.access_token), deletedAt);
  // The approved code went with the namespace: the device hears invalid_grant.
  expect((await pollDevice(first, pending.device_code)).body.error).toBe("invalid_grant");
  const [left] = await first.server.services.db.sql<{ count: number }[]>`select count(*)::int as count from oauth_tokens where namespace_id = ${namespace}`;
  expect(left!.count).toBe(0);
});

test("a grant revoked on one instance is refused by the other within the cache TTL", async () => {
  const tokens = await deviceTokens(first, account.apiKey, account.namespaceId);
  expect(await keysStatus(second, tokens.access_token)).toBe(200);
  const revoked = await fetch(`${first.url}/oauth/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: tokens.access_token, client_id: "switchyard-cli" }),
  });
  expect(revoked.status).toBe(200);
  expect(await keysStatus(first, tokens.access_token)).toBe(401);
  const revokedAt = Date.now();
  await refusedWithinTtl(() => keysStatus(second, tokens.access_token), revokedAt);
});

test("a deleted account's grants stop working and cannot be refreshed", async () => {
  const doomed = await first.createAccount();
  const tokens = await deviceTokens(first, doomed.apiKey, doomed.namespaceId);
  expect(await keysStatus(first, tokens.access_token)).toBe(200);
  await first.server.services.db.sql`update accounts set deleted_at = now() where id = ${doomed.accountId}`;
  const deletedAt = Date.now();
  await refusedWithinTtl(() => keysStatus(first, tokens.access_token), deletedAt);
  const refreshed = await fetch(`${first.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: "switchyard-cli" }),
  });
  expect(refreshed.status).toBe(400);
  expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");
});

import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_OAUTH_LIFETIMES } from "../../src/config";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { CLI, decide, deviceTokens, pollDevice, postForm, startDevice } from "./oauth-support";

/** Expiry of device codes, access tokens and refresh tokens, on a server whose lifetimes are a second or two. */
let server: TestServer;
let account: TestAccount;
beforeAll(async () => {
  server = await startTestServer({ oauthLifetimes: { ...DEFAULT_OAUTH_LIFETIMES, deviceCodeSecs: 1, accessTokenSecs: 1, refreshTokenSecs: 2 } });
  account = await server.createAccount();
});
afterAll(() => server.close());

test("an expired device code is expired_token to the device and a 400 to the approver", async () => {
  const device = await startDevice(server);
  expect(device.expires_in).toBe(1);
  await Bun.sleep(1_100);
  const polled = await pollDevice(server, device.device_code);
  expect(polled.status).toBe(400);
  expect(polled.body.error).toBe("expired_token");
  const decided = await decide(server, account.apiKey, device.user_code, account.namespaceId);
  expect(decided.status).toBe(400);
  expect(decided.body.error).toBe("invalid_request");
  expect(decided.body.error_description).toContain("expired");
});

test("an approved code that expires before the device polls is expired_token too", async () => {
  const device = await startDevice(server);
  expect((await decide(server, account.apiKey, device.user_code, account.namespaceId)).status).toBe(200);
  await Bun.sleep(1_100);
  expect((await pollDevice(server, device.device_code)).body.error).toBe("expired_token");
});

test("an expired access token is refused; refreshing gets a working one; an expired refresh token is invalid_grant", async () => {
  const tokens = await deviceTokens(server, account.apiKey, account.namespaceId);
  expect(tokens.expires_in).toBe(1);
  expect((await server.api("GET", "/v1/namespaces/me/keys", { token: tokens.access_token })).status).toBe(200);
  await Bun.sleep(1_100);
  expect((await server.api("GET", "/v1/namespaces/me/keys", { token: tokens.access_token })).status).toBe(401);
  const refreshed = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: CLI });
  expect(refreshed.status).toBe(200);
  expect((await server.api("GET", "/v1/namespaces/me/keys", { token: refreshed.body.access_token })).status).toBe(200);
  await Bun.sleep(2_100);
  const late = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, client_id: CLI });
  expect(late.status).toBe(400);
  expect(late.body.error).toBe("invalid_grant");
});

test("codes expired for over an hour are swept when new ones are issued", async () => {
  const sql = server.server.services.db.sql;
  const stale = await startDevice(server);
  const recent = await startDevice(server);
  await sql`update oauth_device_codes set expires_at = now() - interval '2 hours' where user_code = ${stale.user_code}`;
  await sql`update oauth_device_codes set expires_at = now() - interval '10 minutes' where user_code = ${recent.user_code}`;
  await startDevice(server);
  const left = await sql<{ user_code: string }[]>`select user_code from oauth_device_codes where user_code in ${sql([stale.user_code, recent.user_code])}`;
  expect(left.map((row) => row.user_code)).toEqual([recent.user_code]);
  // Kept past its expiry, the recent one still tells its device why it stopped.
  expect((await pollDevice(server, recent.device_code)).body.error).toBe("expired_token");
  expect((await pollDevice(server, stale.device_code)).body.error).toBe("invalid_grant");
});

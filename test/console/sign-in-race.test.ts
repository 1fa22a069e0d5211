import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { SIGN_IN_PER_ACCOUNT, USER_CODE_PER_ADDRESS } from "../../src/auth/auth-throttle";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { createAccountWithPassword, signInOverHttp } from "../support/console-http";
import { decide, startDevice } from "../oauth/oauth-support";

/**
 * The throttles count an attempt before its secret is checked, so a burst of concurrent
 * attempts cannot all pass a lock check made before any of them was counted.
 */
let server: TestServer;
let account: TestAccount;
beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
});
afterAll(() => server.close());
beforeEach(async () => {
  await server.server.services.db.sql`delete from auth_throttle`;
});

const PASSWORD = "correct horse battery staple";

test("25 concurrent wrong passwords for one account get at most 10 verifications; the rest and then the right password are 429", async () => {
  const target = await createAccountWithPassword(server, PASSWORD, 0);
  const burst = await Promise.all(Array.from({ length: 25 }, () => signInOverHttp(server, target.email, "a wrong password")));
  const statuses = burst.map(({ response }) => response.status);
  // A 401 means the password was verified; a 429 means it never was.
  expect(statuses.filter((status) => status === 401).length).toBe(SIGN_IN_PER_ACCOUNT.maxFailures);
  expect(statuses.filter((status) => status === 429).length).toBe(25 - SIGN_IN_PER_ACCOUNT.maxFailures);
  const right = await signInOverHttp(server, target.email, PASSWORD);
  expect(right.response.status).toBe(429);
  expect(right.session).toBeUndefined();
});

test("25 concurrent unknown user codes from one address get at most 10 lookups; a real code is then 429", async () => {
  const real = await startDevice(server);
  const guesses = Array.from({ length: 25 }, (_, i) => `BBBB-B${"BCDFGHJKLMNPQRSTVWXZ"[i % 20]}${"BCDFG"[Math.floor(i / 20)]}B`);
  const burst = await Promise.all(guesses.map((guess) => decide(server, account.apiKey, guess, account.namespaceId)));
  const statuses = burst.map((response) => response.status);
  expect(statuses.filter((status) => status === 400).length).toBe(USER_CODE_PER_ADDRESS.maxFailures);
  expect(statuses.filter((status) => status === 429).length).toBe(25 - USER_CODE_PER_ADDRESS.maxFailures);
  const locked = await decide(server, account.apiKey, real.user_code, account.namespaceId);
  expect(locked.status).toBe(429);
});

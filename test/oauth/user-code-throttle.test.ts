import { afterAll, beforeAll, expect, test } from "bun:test";
import { USER_CODE_PER_ADDRESS } from "../../src/auth/auth-throttle";
import { describeDeviceCode } from "../../src/oauth/device-flow";
import { oauthDeps } from "../../src/oauth/oauth-deps";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { decide, startDevice } from "./oauth-support";

/**
 * Guessing user codes is throttled per client address: each unknown code counts a
 * failure; at the limit the address is locked (429 with Retry-After), even for a
 * code that exists.
 */
let server: TestServer;
let account: TestAccount;
beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
});
afterAll(() => server.close());

test("unknown user codes from one address lock it; known codes do not count", async () => {
  const real = await startDevice(server);
  // A known code, looked up many times, is not a guess.
  const deps = oauthDeps(server.server.services);
  for (let i = 0; i < USER_CODE_PER_ADDRESS.maxFailures + 2; i++) {
    expect((await describeDeviceCode(deps, real.user_code, "198.51.100.7"))?.userCode).toBe(real.user_code);
  }
  for (let i = 0; i < USER_CODE_PER_ADDRESS.maxFailures; i++) {
    const guess = await decide(server, account.apiKey, `BBBB-BBB${"BCDFGHJKLMNPQRSTVWXZ"[i]}`, account.namespaceId);
    expect(guess.status).toBe(400);
  }
  const locked = await decide(server, account.apiKey, real.user_code, account.namespaceId);
  expect(locked.status).toBe(429);
  expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
  // describeDeviceCode counts per address too, and another address is not locked.
  await expect(describeDeviceCode(deps, real.user_code, "127.0.0.1")).rejects.toMatchObject({ code: "too_many_requests" });
  expect((await describeDeviceCode(deps, real.user_code, "198.51.100.7"))?.clientId).toBe("switchyard-cli");
  expect(await describeDeviceCode(deps, "BBBB-BBBB", "198.51.100.7")).toBeUndefined();
});

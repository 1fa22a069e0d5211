import { afterAll, beforeAll, expect, test } from "bun:test";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { oauthRoutes } from "../../src/oauth/oauth-routes";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { pollDevice, startDevice } from "./oauth-support";

/**
 * The decision API with another approver plugged in (the console's session): asked only
 * when the request carries no credential header; a Bearer credential still decides when
 * present. Served on its own listener next to the test server, over the same database.
 */
let server: TestServer;
let account: TestAccount;
let listener: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
  const app = oauthRoutes(server.server.services, {
    sessionApprover: async (request) => (request.headers.get("cookie") === "session=good" ? { accountId: account.accountId, scopes: [...ALL_SCOPES] } : null),
  });
  listener = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => app.handle(request) });
});
afterAll(async () => {
  listener.stop(true);
  await server.close();
});

const decideWith = (headers: Record<string, string>, userCode: string) =>
  fetch(`http://127.0.0.1:${listener.port}/oauth/device/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ user_code: userCode, namespace_id: account.namespaceId, approve: true }),
  });

test("a session approves without a credential header; without either the answer is 401", async () => {
  const device = await startDevice(server);
  expect((await decideWith({ cookie: "session=bad" }, device.user_code)).status).toBe(401);
  expect((await decideWith({}, device.user_code)).status).toBe(401);
  const approved = await decideWith({ cookie: "session=good" }, device.user_code);
  expect(approved.status).toBe(200);
  expect(await approved.json()).toEqual({ status: "approved" });
  const tokens = await pollDevice(server, device.device_code);
  expect(tokens.status).toBe(200);
  expect(tokens.body.account_id).toBe(account.accountId);
});

test("a credential header wins over the session: a namespace-bound key is refused even with a good session", async () => {
  const device = await startDevice(server);
  const bound = await server.mintKey(account.apiKey, ["keys:read"]);
  expect((await decideWith({ cookie: "session=good", authorization: `Bearer ${bound}` }, device.user_code)).status).toBe(403);
});

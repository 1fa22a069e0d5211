import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseApiKeyToken } from "../../src/auth/tokens";
import { pickNamespace } from "../../src/console/console-namespace";
import { resolvePrincipalTarget } from "../../src/identity/principal-target";
import { resolveTenant } from "../../src/identity/tenant";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";

/**
 * One `me` (src/identity/me-namespace.ts): what a management path's `me` resolves to,
 * where the policy routes attribute an account-wide key's requests, the console's default
 * namespace and the request path's cached answer (presets, admission, the request's
 * record) are the same namespace, before and right after the oldest one is deleted.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** What each caller of `me` answers for an account-wide caller of `account`. */
async function everyMe(account: TestAccount, otherNamespaceId: string) {
  const services = server.server.services;
  const accountWide = { accountId: account.accountId, namespaceId: null, scopes: ["keys:read"] };
  const keyId = parseApiKeyToken(account.apiKey)!.keyId;
  const target = await resolvePrincipalTarget(services, accountWide, otherNamespaceId, { type: "api_key", id: keyId });
  return {
    management: (await resolveTenant(services, accountWide, "me")).namespaceId,
    policyAttribution: target.namespaceId,
    console: (await pickNamespace(services, account.accountId, undefined)).namespace.id,
    requestPath: await services.me.namespaceFor(accountWide),
  };
}

describe("me", () => {
  test("every caller agrees on the oldest live namespace, and moves to the next at once when it is deleted", async () => {
    const account = await server.createAccount();
    const created = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "second" } });
    expect(created.status).toBe(200);
    const second = created.body.id as string;

    const oldest = account.namespaceId;
    expect(await everyMe(account, second)).toEqual({ management: oldest, policyAttribution: oldest, console: oldest, requestPath: oldest });
    // The request path's answer is now cached for the account.
    expect(await server.server.services.me.namespaceFor({ accountId: account.accountId, namespaceId: null })).toBe(oldest);

    expect((await server.api("DELETE", `/v1/namespaces/${oldest}`, { token: account.apiKey })).status).toBe(200);
    expect(await everyMe(account, second)).toEqual({ management: second, policyAttribution: second, console: second, requestPath: second });
  });

  test("a namespace-bound credential's `me` is its own namespace, for every caller", async () => {
    const account = await server.createAccount();
    const bound = { accountId: account.accountId, namespaceId: account.namespaceId, scopes: ["keys:read"] };
    expect((await resolveTenant(server.server.services, bound, "me")).namespaceId).toBe(account.namespaceId);
    expect(await server.server.services.me.namespaceFor(bound)).toBe(account.namespaceId);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { parseApiKeyToken } from "../../src/auth/tokens";
import { checkAuthorizeRequest, issueAuthorizationCode } from "../../src/identity/oauth/authorization-request";
import { oauthDeps } from "../../src/oauth/oauth-deps";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { CLI, deviceTokens, pkcePair, postForm } from "../oauth/oauth-support";

/**
 * One revocation (src/identity/credential-revocation.ts): whichever path ends a
 * credential, it fails at once on the instance that ended it. The credential cache here
 * trusts what it resolved for ten minutes, so only the cache's invalidation can make the
 * next request fail; each credential is used (and so cached) before it is ended.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ credentialCacheTtlMs: 600_000 });
});
afterAll(() => server.close());

/** A request only a live credential with `keys:read` gets a 200 for. */
const keysListing = async (token: string) => (await server.api("GET", "/v1/keys", { token })).status;
const keyIdOf = (token: string) => parseApiKeyToken(token)!.keyId;

async function deviceGrant(account: TestAccount) {
  const tokens = await deviceTokens(server, account.apiKey, account.namespaceId, "keys:read");
  const grants = await server.api("GET", "/v1/oauth/tokens", { token: account.apiKey });
  expect(grants.body.data).toHaveLength(1);
  return { ...tokens, grantId: grants.body.data[0].id as string };
}

describe("every way a credential ends makes it fail at once on this instance", () => {
  test("a namespace key deleted through the keys route", async () => {
    const account = await server.createAccount();
    const key = await server.mintKey(account.apiKey, ["keys:read"]);
    expect(await keysListing(key)).toBe(200);
    expect((await server.api("DELETE", `/v1/keys/${keyIdOf(key)}`, { token: account.apiKey })).status).toBe(200);
    expect(await keysListing(key)).toBe(401);
  });

  test("an account-wide key deleted through the account keys route, and a key minted by a revoked key", async () => {
    const account = await server.createAccount();
    const parent = await server.mintKey(account.apiKey, ["keys:read", "keys:write"]);
    const child = await server.mintKey(parent, ["keys:read"]);
    expect(await keysListing(parent)).toBe(200);
    expect(await keysListing(child)).toBe(200);
    expect((await server.api("DELETE", `/v1/keys/${keyIdOf(parent)}`, { token: account.apiKey })).status).toBe(200);
    expect(await keysListing(child)).toBe(401);

    expect((await server.api("GET", "/v1/account/keys", { token: account.apiKey })).status).toBe(200);
    expect((await server.api("DELETE", `/v1/account/keys/${keyIdOf(account.apiKey)}`, { token: account.apiKey })).status).toBe(200);
    expect((await server.api("GET", "/v1/account/keys", { token: account.apiKey })).status).toBe(401);
  });

  test("an OAuth grant revoked through the management API", async () => {
    const account = await server.createAccount();
    const grant = await deviceGrant(account);
    expect(await keysListing(grant.access_token)).toBe(200);
    expect((await server.api("DELETE", `/v1/oauth/tokens/${grant.grantId}`, { token: account.apiKey })).status).toBe(200);
    expect(await keysListing(grant.access_token)).toBe(401);
  });

  test("an OAuth grant revoked at the revocation endpoint (RFC 7009), by its access or its refresh token", async () => {
    const account = await server.createAccount();
    for (const which of ["access_token", "refresh_token"] as const) {
      const grant = await deviceGrant(account);
      expect(await keysListing(grant.access_token)).toBe(200);
      expect((await postForm(server, "/oauth/revoke", { token: grant[which], client_id: CLI })).status).toBe(200);
      expect(await keysListing(grant.access_token)).toBe(401);
    }
  });

  test("a refresh ends the previous access token, and a rotated-out refresh token presented again revokes the grant", async () => {
    const account = await server.createAccount();
    const grant = await deviceGrant(account);
    expect(await keysListing(grant.access_token)).toBe(200);
    const refreshed = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: grant.refresh_token, client_id: CLI });
    expect(refreshed.status).toBe(200);
    expect(await keysListing(grant.access_token)).toBe(401);
    expect(await keysListing(refreshed.body.access_token)).toBe(200);

    const replayed = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: grant.refresh_token, client_id: CLI });
    expect(replayed.status).toBe(400);
    expect(replayed.body.error).toBe("invalid_grant");
    expect(await keysListing(refreshed.body.access_token)).toBe(401);
  });

  test("an authorization code exchanged a second time revokes the grant the first exchange made", async () => {
    const account = await server.createAccount();
    const redirectUri = "https://app.example.test/callback";
    const registered = await server.api("POST", "/v1/oauth/clients", {
      token: account.apiKey,
      body: { client_name: "Revocation test", client_type: "public", redirect_uris: [redirectUri], allowed_grant_types: ["authorization_code", "refresh_token"], allowed_scopes: ["keys:read"] },
    });
    expect(registered.status).toBe(200);
    const clientId = registered.body.client_id as string;
    const deps = oauthDeps(server.server.services);
    const pkce = pkcePair();
    const check = await checkAuthorizeRequest(deps, {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "keys:read",
      code_challenge: pkce.challenge,
      code_challenge_method: "S256",
    });
    if (check.kind !== "ok") throw new Error(`authorize check: ${JSON.stringify(check)}`);
    const location = new URL(await issueAuthorizationCode(deps, check.request, { accountId: account.accountId, scopes: [...ALL_SCOPES] }, account.namespaceId));
    const exchange = () =>
      postForm(server, "/oauth/token", { grant_type: "authorization_code", code: location.searchParams.get("code")!, redirect_uri: redirectUri, client_id: clientId, code_verifier: pkce.verifier });

    const first = await exchange();
    expect(first.status).toBe(200);
    expect(await keysListing(first.body.access_token)).toBe(200);
    const second = await exchange();
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("invalid_grant");
    expect(await keysListing(first.body.access_token)).toBe(401);
  });
});

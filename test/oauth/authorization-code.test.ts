import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomUUID } from "node:crypto";
import { checkAuthorizeRequest, denyAuthorization, issueAuthorizationCode, type AuthorizeRequest } from "../../src/oauth/authorization-request";
import { oauthDeps, type OauthDeps } from "../../src/oauth/oauth-deps";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { CLI, decide, pkcePair, pollDevice, postForm, startDevice } from "./oauth-support";

/**
 * Authorization code + PKCE for registered clients: the checks before consent (never an
 * open redirect), the exchange (verifier, exact redirect URI, single use, expiry, the
 * code's own client), and confidential clients' authentication at the token endpoint.
 * Clients are inserted as rows, their secrets stored as SHA-256 like the client routes do.
 */
let server: TestServer;
let account: TestAccount;
let deps: OauthDeps;
beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
  deps = oauthDeps(server.server.services);
});
afterAll(() => server.close());

const REDIRECT = "https://app.example.test/callback?tenant=7";
const approver = () => ({ accountId: account.accountId, scopes: [...ALL_SCOPES] });
const sql = () => server.server.services.db.sql;

interface Client {
  id: string;
  clientId: string;
  secret: string | null;
}

async function registerClient(options: { type: "public" | "confidential"; scopes?: string[]; grants?: string[]; owner?: TestAccount }): Promise<Client> {
  const owner = options.owner ?? account;
  const id = randomUUID();
  const clientId = `brc_${id.replace(/-/g, "").slice(0, 20)}`;
  const secret = options.type === "confidential" ? `secret-${randomUUID()}` : null;
  const hash = secret === null ? null : createHash("sha256").update(secret).digest();
  await sql()`insert into oauth_clients (id, account_id, namespace_id, client_id, client_name, client_type, client_secret_hash, redirect_uris, allowed_scopes, allowed_grant_types)
    values (${id}, ${owner.accountId}, ${owner.namespaceId}, ${clientId}, ${"Example App"}, ${options.type}, ${hash}, ${[REDIRECT]},
            ${options.scopes ?? ["inference:invoke", "usage:read", "keys:read"]}, ${options.grants ?? ["authorization_code", "refresh_token"]})`;
  return { id, clientId, secret };
}

async function authorize(client: Client, extra: Record<string, string> = {}, pkce = pkcePair()): Promise<{ request: AuthorizeRequest; code: string; verifier: string; location: URL }> {
  const check = await checkAuthorizeRequest(deps, { client_id: client.clientId, redirect_uri: REDIRECT, response_type: "code", state: "xyz", code_challenge: pkce.challenge, code_challenge_method: "S256", ...extra });
  if (check.kind !== "ok") throw new Error(`authorize check: ${JSON.stringify(check)}`);
  const location = new URL(await issueAuthorizationCode(deps, check.request, approver(), account.namespaceId));
  return { request: check.request, code: location.searchParams.get("code")!, verifier: pkce.verifier, location };
}

const exchange = (client: Client, code: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  postForm(server, "/oauth/token", { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.clientId, ...fields }, headers);

describe("before consent", () => {
  test("an unknown client or a redirect URI that is missing or not registered exactly is shown, never redirected to", async () => {
    const client = await registerClient({ type: "public" });
    const base = { client_id: client.clientId, response_type: "code", code_challenge: pkcePair().challenge, code_challenge_method: "S256" };
    for (const query of [
      { ...base, client_id: "brc_unknown", redirect_uri: REDIRECT },
      { ...base, client_id: undefined, redirect_uri: REDIRECT },
      { ...base, redirect_uri: undefined },
      { ...base, redirect_uri: "https://evil.example.test/callback" },
      { ...base, redirect_uri: REDIRECT + "&x=1" },
      { ...base, redirect_uri: REDIRECT.replace("callback", "Callback") },
      { ...base, redirect_uri: "https://app.example.test/callback" },
      { ...base, client_id: CLI, redirect_uri: REDIRECT },
    ]) {
      expect((await checkAuthorizeRequest(deps, query)).kind).toBe("show_error");
    }
  });

  test("other errors go back to the registered redirect URI with error and state", async () => {
    const client = await registerClient({ type: "public" });
    const cases: Array<[Record<string, string | undefined>, string]> = [
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ scope: "telepathy:read" }, "invalid_scope"],
      [{ scope: "user:write" }, "invalid_scope"],
      [{ code_challenge: undefined, code_challenge_method: undefined }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge: "short" }, "invalid_request"],
    ];
    for (const [override, error] of cases) {
      const check = await checkAuthorizeRequest(deps, { client_id: client.clientId, redirect_uri: REDIRECT, response_type: "code", state: "s p&c=1", code_challenge: pkcePair().challenge, code_challenge_method: "S256", ...override });
      expect(check.kind).toBe("redirect");
      const location = new URL((check as { location: string }).location);
      expect(location.origin + location.pathname).toBe("https://app.example.test/callback");
      expect(location.searchParams.get("tenant")).toBe("7");
      expect(location.searchParams.get("error")).toBe(error);
      expect(location.searchParams.get("state")).toBe("s p&c=1");
    }
    const noAuthCode = await registerClient({ type: "public", grants: ["urn:ietf:params:oauth:grant-type:device_code"] });
    const refused = await checkAuthorizeRequest(deps, { client_id: noAuthCode.clientId, redirect_uri: REDIRECT, response_type: "code", code_challenge: pkcePair().challenge, code_challenge_method: "S256" });
    expect(new URL((refused as { location: string }).location).searchParams.get("error")).toBe("unauthorized_client");
  });

  test("denial redirects with access_denied and the state", async () => {
    const client = await registerClient({ type: "public" });
    const check = await checkAuthorizeRequest(deps, { client_id: client.clientId, redirect_uri: REDIRECT, response_type: "code", state: "st/ate?=", code_challenge: pkcePair().challenge, code_challenge_method: "S256" });
    const location = new URL(denyAuthorization((check as { request: AuthorizeRequest }).request));
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(location.searchParams.get("state")).toBe("st/ate?=");
    expect(location.searchParams.get("code")).toBeNull();
  });
});

describe("the code exchange", () => {
  test("PKCE, state round trip, tokens bound to the namespace and the client's principal", async () => {
    const client = await registerClient({ type: "public" });
    const { code, verifier, location } = await authorize(client, { scope: "usage:read keys:read keys:write user:write", state: "a b&c=d/é" });
    expect(location.searchParams.get("state")).toBe("a b&c=d/é");
    expect(location.searchParams.get("tenant")).toBe("7");
    const [row] = await sql()<{ lifetime: number }[]>`select extract(epoch from expires_at - created_at)::float8 as lifetime from oauth_authorization_codes where client_id = ${client.clientId}`;
    expect(Math.abs(row!.lifetime - 60)).toBeLessThan(2);

    const wrongVerifier = await exchange(client, code, { code_verifier: pkcePair().verifier });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error).toBe("invalid_grant");
    const noVerifier = await exchange(client, code);
    expect(noVerifier.body.error).toBe("invalid_request");
    const wrongRedirect = await exchange(client, code, { code_verifier: verifier, redirect_uri: "https://app.example.test/callback" });
    expect(wrongRedirect.body.error).toBe("invalid_grant");
    const otherClient = await registerClient({ type: "public" });
    expect((await exchange(otherClient, code, { code_verifier: verifier })).body.error).toBe("invalid_grant");

    const tokens = await exchange(client, code, { code_verifier: verifier });
    expect(tokens.status).toBe(200);
    // keys:write is not the client's, user:write is control-plane.
    expect(tokens.body).toMatchObject({ token_type: "Bearer", scope: "usage:read keys:read", namespace_id: account.namespaceId, account_id: account.accountId });
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: tokens.body.access_token })).status).toBe(200);
    const principal = await server.server.services.credentials.resolve(tokens.body.access_token);
    expect(principal).toMatchObject({ kind: "oauth_token", namespaceId: account.namespaceId, oauthClientId: client.id, scopes: ["usage:read", "keys:read"] });
    expect(principal!.id).toMatch(/^og_/);

    // A second exchange of the same code revokes what the first one got.
    const reused = await exchange(client, code, { code_verifier: verifier });
    expect(reused.body.error).toBe("invalid_grant");
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: tokens.body.access_token })).status).toBe(401);
    expect((await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token, client_id: client.clientId })).body.error).toBe("invalid_grant");
  });

  test("control-plane scopes are never issued, even to a client allowed them", async () => {
    const client = await registerClient({ type: "public", scopes: ["usage:read", "user:write", "clients:write", "namespace:write", "user:read"] });
    const { code, verifier } = await authorize(client, { scope: "usage:read user:* clients:write namespace:write" });
    const tokens = await exchange(client, code, { code_verifier: verifier });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe("usage:read user:read");
    const controlOnly = await registerClient({ type: "public", scopes: ["user:write", "clients:write"] });
    const refused = await checkAuthorizeRequest(deps, { client_id: controlOnly.clientId, redirect_uri: REDIRECT, response_type: "code", code_challenge: pkcePair().challenge, code_challenge_method: "S256" });
    expect(new URL((refused as { location: string }).location).searchParams.get("error")).toBe("invalid_scope");
  });

  test("an expired code is invalid_grant", async () => {
    const client = await registerClient({ type: "public" });
    const { code, verifier } = await authorize(client);
    await sql()`update oauth_authorization_codes set expires_at = now() - interval '1 second' where client_id = ${client.clientId}`;
    const expired = await exchange(client, code, { code_verifier: verifier });
    expect(expired.body.error).toBe("invalid_grant");
    expect(expired.body.error_description).toContain("expired");
    // Over an hour past its expiry, the next code issued sweeps it.
    await sql()`update oauth_authorization_codes set expires_at = now() - interval '2 hours' where client_id = ${client.clientId}`;
    await authorize(client);
    const [left] = await sql()<{ count: number }[]>`select count(*)::int as count from oauth_authorization_codes where client_id = ${client.clientId}`;
    expect(left!.count).toBe(1);
  });

  test("a namespace the approver does not own is a 404; nothing grantable is a 403", async () => {
    const client = await registerClient({ type: "public" });
    const check = await checkAuthorizeRequest(deps, { client_id: client.clientId, redirect_uri: REDIRECT, response_type: "code", code_challenge: pkcePair().challenge, code_challenge_method: "S256", scope: "keys:read" });
    const request = (check as { request: AuthorizeRequest }).request;
    const stranger = await server.createAccount();
    await expect(issueAuthorizationCode(deps, request, approver(), stranger.namespaceId)).rejects.toMatchObject({ status: 404 });
    await expect(issueAuthorizationCode(deps, request, { accountId: account.accountId, scopes: ["usage:read"] }, account.namespaceId)).rejects.toMatchObject({ status: 403 });
  });
});

describe("confidential clients", () => {
  test("authenticate with client_secret_post or Basic; a wrong or missing secret is invalid_client", async () => {
    const client = await registerClient({ type: "confidential" });
    // No PKCE needed for a confidential client.
    const check = await checkAuthorizeRequest(deps, { client_id: client.clientId, redirect_uri: REDIRECT, response_type: "code" });
    expect(check.kind).toBe("ok");
    const issue = async () => new URL(await issueAuthorizationCode(deps, (check as { request: AuthorizeRequest }).request, approver(), account.namespaceId)).searchParams.get("code")!;

    const code = await issue();
    const missing = await exchange(client, code);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe("invalid_client");
    const wrongPost = await exchange(client, code, { client_secret: "wrong" });
    expect(wrongPost.status).toBe(400);
    expect(wrongPost.body.error).toBe("invalid_client");
    const basic = (id: string, secret: string) => ({ authorization: `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}` });
    const wrongBasic = await postForm(server, "/oauth/token", { grant_type: "authorization_code", code, redirect_uri: REDIRECT }, basic(client.clientId, "wrong"));
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.body.error).toBe("invalid_client");
    expect(wrongBasic.headers.get("www-authenticate")).toContain("Basic");
    const both = await exchange(client, code, { client_secret: client.secret! }, basic(client.clientId, client.secret!));
    expect(both.body.error).toBe("invalid_request");

    const byPost = await exchange(client, code, { client_secret: client.secret! });
    expect(byPost.status).toBe(200);
    const byBasic = await postForm(server, "/oauth/token", { grant_type: "authorization_code", code: await issue(), redirect_uri: REDIRECT }, basic(client.clientId, client.secret!));
    expect(byBasic.status).toBe(200);

    // Refreshing needs the secret too.
    const refreshNoSecret = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: byBasic.body.refresh_token, client_id: client.clientId });
    expect(refreshNoSecret.body.error).toBe("invalid_client");
    const refreshed = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: byBasic.body.refresh_token }, basic(client.clientId, client.secret!));
    expect(refreshed.status).toBe(200);
    // Revocation needs it as well; with it, the grant goes.
    const revokeNoSecret = await postForm(server, "/oauth/revoke", { token: refreshed.body.access_token, client_id: client.clientId });
    expect(revokeNoSecret.body.error).toBe("invalid_client");
    expect((await postForm(server, "/oauth/revoke", { token: refreshed.body.access_token, client_id: client.clientId, client_secret: client.secret! })).status).toBe(200);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: refreshed.body.access_token })).status).toBe(401);
  });
});

describe("grants belong to their client", () => {
  test("another client can neither refresh nor revoke a grant; a device code is its client's", async () => {
    const app = await registerClient({ type: "public", grants: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"] });
    const device = await startDevice(server, { client_id: app.clientId });
    expect((await decide(server, account.apiKey, device.user_code, account.namespaceId)).status).toBe(200);
    expect((await pollDevice(server, device.device_code, CLI)).body.error).toBe("invalid_grant");
    const tokens = await pollDevice(server, device.device_code, app.clientId);
    expect(tokens.status).toBe(200);
    // The client's allowed scopes bound what a device approval grants.
    expect(tokens.body.scope).toBe("inference:invoke usage:read keys:read");

    expect((await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token, client_id: CLI })).body.error).toBe("invalid_grant");
    const foreignRevoke = await postForm(server, "/oauth/revoke", { token: tokens.body.access_token, client_id: CLI });
    expect(foreignRevoke.status).toBe(200);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: tokens.body.access_token })).status).toBe(200);

    const noDevice = await registerClient({ type: "public" });
    expect((await postForm(server, "/oauth/device_authorization", { client_id: noDevice.clientId })).body.error).toBe("unauthorized_client");
  });
});

describe("a client's allowed_scopes bound its live grants", () => {
  test("narrowing allowed_scopes narrows a grant at its next refresh: the response's scope and the new access token", async () => {
    const client = await registerClient({ type: "public", scopes: ["usage:read", "keys:read", "keys:write"] });
    const { code, verifier } = await authorize(client, { scope: "usage:read keys:read keys:write" });
    const tokens = await exchange(client, code, { code_verifier: verifier });
    expect(tokens.body.scope).toBe("usage:read keys:read keys:write");

    const narrowed = await server.api("PUT", `/v1/oauth/clients/${client.id}`, { token: account.apiKey, body: { allowed_scopes: ["usage:read"] } });
    expect(narrowed.status).toBe(200);
    const refreshed = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token, client_id: client.clientId });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.scope).toBe("usage:read");
    expect(refreshed.headers.get("cache-control")).toBe("no-store");
    expect(refreshed.headers.get("pragma")).toBe("no-cache");
    const principal = await server.server.services.credentials.resolve(refreshed.body.access_token);
    expect(principal!.scopes).toEqual(["usage:read"]);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: refreshed.body.access_token })).status).toBe(403);
    // Widening the client again does not widen the grant back: it holds what it was narrowed to.
    await server.api("PUT", `/v1/oauth/clients/${client.id}`, { token: account.apiKey, body: { allowed_scopes: ["usage:read", "keys:read", "keys:write"] } });
    const again = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, client_id: client.clientId });
    expect(again.body.scope).toBe("usage:read");
  });

  test("a grant left with none of the client's scopes is invalid_grant at refresh", async () => {
    const client = await registerClient({ type: "public", scopes: ["usage:read", "keys:read"] });
    const { code, verifier } = await authorize(client, { scope: "keys:read" });
    const tokens = await exchange(client, code, { code_verifier: verifier });
    expect((await server.api("PUT", `/v1/oauth/clients/${client.id}`, { token: account.apiKey, body: { allowed_scopes: ["usage:read"] } })).status).toBe(200);
    const refreshed = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token, client_id: client.clientId });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe("invalid_grant");
  });
});

describe("keys minted with an access token", () => {
  test("expire no later than the token and are revoked with its grant by /oauth/revoke", async () => {
    const client = await registerClient({ type: "public", scopes: ["keys:read", "keys:write"] });
    const { code, verifier } = await authorize(client, { scope: "keys:read keys:write" });
    const tokens = await exchange(client, code, { code_verifier: verifier });
    const minted = await server.api("POST", "/v1/namespaces/me/keys", { token: tokens.body.access_token, body: { display_name: "from a token", scopes: ["keys:read", "keys:write"] } });
    expect(minted.status).toBe(200);
    const tokenExpiry = Date.now() + tokens.body.expires_in * 1000;
    expect(Math.abs(Date.parse(minted.body.expires_at) - tokenExpiry)).toBeLessThan(5000);
    const grandchild = await server.api("POST", "/v1/namespaces/me/keys", { token: minted.body.token, body: { display_name: "below", scopes: ["keys:read"] } });
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: minted.body.token })).status).toBe(200);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: grandchild.body.token })).status).toBe(200);

    expect((await postForm(server, "/oauth/revoke", { token: tokens.body.refresh_token, client_id: client.clientId })).status).toBe(200);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: minted.body.token })).status).toBe(401);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: grandchild.body.token })).status).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { CLI, DEVICE_GRANT, decide, deviceTokens, postForm, startDevice } from "./oauth-support";

/**
 * DESIGN "Keys people make": a key a person makes through their first-party CLI sign-in
 * is the account's (its expiry is the one asked for, revoking the sign-in leaves it
 * working); a key made by a third-party client's token stays bounded by that token,
 * whatever the client claims to be.
 */
let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
});
afterAll(() => server.close());

const mint = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  server.api("POST", "/v1/namespaces/me/keys", { token, body, headers });
const works = async (token: string) => (await server.api("GET", "/v1/namespaces/me/keys", { token })).status;

/** A public client registered by the account, allowed the device flow, and a grant of it approved by the account. */
async function thirdPartyTokens() {
  const registered = await server.api("POST", "/v1/oauth/clients", {
    token: account.apiKey,
    body: { client_name: "Deploy helper", client_type: "public", redirect_uris: [], allowed_grant_types: [DEVICE_GRANT, "refresh_token"], allowed_scopes: ["keys:read", "keys:write"] },
  });
  expect(registered.status).toBe(200);
  const clientId = registered.body.client_id as string;
  const device = await startDevice(server, { client_id: clientId, scope: "keys:read keys:write" });
  expect((await decide(server, account.apiKey, device.user_code, account.namespaceId)).status).toBe(200);
  // Its device code polled in the CLI's name is not the CLI's grant: refused, no token.
  const asCli = await postForm(server, "/oauth/token", { grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: CLI });
  expect(asCli.status).toBe(400);
  expect(asCli.body.access_token).toBeUndefined();
  const tokens = await postForm(server, "/oauth/token", { grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: clientId });
  expect(tokens.status).toBe(200);
  return { clientId, tokens: tokens.body as { access_token: string; refresh_token: string; expires_in: number } };
}

describe("a key made through the first-party CLI's sign-in", () => {
  test("expires when asked (or never), not with the sign-in, and outlives the sign-in's revocation", async () => {
    const tokens = await deviceTokens(server, account.apiKey, account.namespaceId, "keys:read keys:write");
    const tokenExpiry = Date.now() + tokens.expires_in * 1000;
    const forever = await mint(tokens.access_token, { display_name: "ci", scopes: ["keys:read"] });
    expect(forever.status).toBe(200);
    expect(forever.body.expires_at).toBeNull();
    const asked = new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString();
    const dated = await mint(tokens.access_token, { display_name: "ci dated", scopes: ["keys:read"], expires_at: asked });
    expect(Date.parse(dated.body.expires_at)).toBe(Date.parse(asked));
    expect(Date.parse(dated.body.expires_at)).toBeGreaterThan(tokenExpiry);
    // Logging out revokes the grant; the account's keys keep working.
    expect((await postForm(server, "/oauth/revoke", { token: tokens.refresh_token, client_id: CLI })).status).toBe(200);
    expect(await works(tokens.access_token)).toBe(401);
    expect(await works(forever.body.token)).toBe(200);
    expect(await works(dated.body.token)).toBe(200);
    // It still cannot carry a scope the sign-in does not hold.
    const fresh = await deviceTokens(server, account.apiKey, account.namespaceId, "keys:read keys:write");
    expect((await mint(fresh.access_token, { display_name: "wider", scopes: ["byok:write"] })).status).toBe(403);
  });

  test("a key made by that key stays bounded by it", async () => {
    const tokens = await deviceTokens(server, account.apiKey, account.namespaceId, "keys:read keys:write");
    const asked = new Date(Date.now() + 24 * 3600 * 1000).toISOString();
    const parent = await mint(tokens.access_token, { display_name: "parent", scopes: ["keys:read", "keys:write"], expires_at: asked });
    const child = await mint(parent.body.token, { display_name: "child", scopes: ["keys:read"] });
    expect(child.body.expires_at).toBe(parent.body.expires_at);
    expect((await server.api("DELETE", `/v1/namespaces/me/keys/${parent.body.id}`, { token: account.apiKey })).status).toBe(200);
    expect(await works(child.body.token)).toBe(401);
  });
});

describe("a key made by a third-party client's token", () => {
  test("stays bounded by the token and dies with its grant, whatever the request claims", async () => {
    const { clientId, tokens } = await thirdPartyTokens();
    const tokenExpiry = Date.now() + tokens.expires_in * 1000;
    // Everything a client controls says "I am the CLI": the user agent, a client id header, the CLI's client id in the body.
    const claims = { "user-agent": "switchyard-cli/0.1.0", "x-client-id": CLI, "x-switchyard-client": CLI };
    const minted = await mint(tokens.access_token, { display_name: "posing", scopes: ["keys:read"], expires_at: new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString() }, claims);
    expect(minted.status).toBe(200);
    expect(Math.abs(Date.parse(minted.body.expires_at) - tokenExpiry)).toBeLessThan(5000);
    const unasked = await mint(tokens.access_token, { display_name: "posing too", scopes: ["keys:read"] }, claims);
    expect(unasked.body.expires_at).not.toBeNull();
    const withField = await mint(tokens.access_token, { display_name: "posing 3", scopes: ["keys:read"], client_id: CLI }, claims);
    expect(withField.status === 400 || withField.body.expires_at !== null).toBe(true);
    // Revoking the client's grant takes the keys along.
    expect((await postForm(server, "/oauth/revoke", { token: tokens.refresh_token, client_id: clientId })).status).toBe(200);
    expect(await works(minted.body.token)).toBe(401);
    expect(await works(unasked.body.token)).toBe(401);
  });

  test("a client cannot register under the CLI's name to look first-party", async () => {
    const named = await server.api("POST", "/v1/oauth/clients", {
      token: account.apiKey,
      body: { client_name: "Switchyard CLI", client_type: "public", redirect_uris: [], allowed_grant_types: [DEVICE_GRANT] },
    });
    expect(named.status).toBe(400);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../support/test-server";
import { createAccountWithPassword, signedInAccount, signInOverHttp } from "../support/console-http";
import { pkcePair, pollDevice, startDevice } from "../oauth/oauth-support";

const PASSWORD = "correct horse battery staple";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
beforeEach(async () => {
  await server.server.services.db.sql`delete from auth_throttle`;
});

const signedIn = () => signedInAccount(server, PASSWORD);

const get = (path: string, cookie: string) => fetch(server.url + path, { headers: { cookie }, redirect: "manual" });
const postForm = (path: string, cookie: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(server.url + path, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers }, body: new URLSearchParams(fields) });
/** A hidden field of the form posting to `action` (the header's sign-out form has a csrf_token too). */
function hidden(page: string, action: string, name: string): string | undefined {
  const form = page.slice(page.indexOf(`action="${action}"`));
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(form)?.[1]?.replace(/&amp;/g, "&");
}

describe("POST /oauth/device/decision with a console session", () => {
  test("needs the session's x-csrf-token or this site's Origin; a foreign Origin is refused even with the token", async () => {
    const account = await signedIn();
    const device = await startDevice(server);
    const page = await (await get(`/oauth/device?user_code=${device.user_code}`, account.cookie)).text();
    const token = /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1]!;
    const decide = (headers: Record<string, string>) =>
      server.api("POST", "/oauth/device/decision", { headers: { cookie: account.cookie, ...headers }, body: { user_code: device.user_code, namespace_id: account.namespaceId, approve: true } });
    expect((await decide({})).status).toBe(403);
    expect((await decide({ "x-csrf-token": "not-the-token" })).status).toBe(403);
    expect((await decide({ "x-csrf-token": token, origin: "https://evil.example" })).status).toBe(403);
    expect((await server.api("POST", "/oauth/device/decision", { body: { user_code: device.user_code, namespace_id: account.namespaceId, approve: true } })).status).toBe(401);
    expect((await pollDevice(server, device.device_code)).body.error).toBe("authorization_pending");
    const approved = await decide({ "x-csrf-token": token });
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({ status: "approved" });
    expect((await pollDevice(server, device.device_code)).body.namespace_id).toBe(account.namespaceId);

    const other = await startDevice(server);
    const byOrigin = await server.api("POST", "/oauth/device/decision", { headers: { cookie: account.cookie, origin: server.url }, body: { user_code: other.user_code, approve: false } });
    expect(byOrigin.body).toEqual({ status: "denied" });
  });
});

describe("the device form", () => {
  test("a code that is not well-formed text (a lone surrogate) reads as no code: signed out, a redirect to sign in, never a 500", async () => {
    const response = await fetch(`${server.url}/oauth/device`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/json" },
      body: '{"user_code":"\\ud800","decision":"approve"}',
    });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/console?next=${encodeURIComponent("/oauth/device?user_code=")}`);
  });

  test("a POST without the form's token or from a foreign Origin is a 403 page and decides nothing; another account's namespace is a 404", async () => {
    const account = await signedIn();
    const stranger = await createAccountWithPassword(server, PASSWORD);
    const device = await startDevice(server);
    const page = await (await get(`/oauth/device?user_code=${device.user_code}`, account.cookie)).text();
    const csrf = hidden(page, "/oauth/device", "csrf_token")!;
    const fields = { user_code: device.user_code, namespace_id: account.namespaceId, decision: "approve" };
    const withoutToken = await postForm("/oauth/device", account.cookie, fields);
    expect(withoutToken.status).toBe(403);
    expect(await withoutToken.text()).toContain("Request refused");
    expect((await postForm("/oauth/device", account.cookie, { ...fields, csrf_token: csrf }, { origin: "https://evil.example" })).status).toBe(403);
    expect((await postForm("/oauth/device", account.cookie, { ...fields, csrf_token: csrf, namespace_id: stranger.namespaceId })).status).toBe(404);
    expect((await pollDevice(server, device.device_code)).body.error).toBe("authorization_pending");
    const approved = await postForm("/oauth/device", account.cookie, { ...fields, csrf_token: csrf });
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain("You can return to your terminal");
    // The same code a second time is a readable error.
    const again = await postForm("/oauth/device", account.cookie, { ...fields, csrf_token: csrf });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("That code is not valid");
  });

  test("after 10 unknown codes from one address the page answers 429 with a readable page, even for a real code", async () => {
    const account = await signedIn();
    for (let i = 0; i < 10; i++) expect((await get("/oauth/device?user_code=BCDF-GHJK", account.cookie)).status).toBe(400);
    const device = await startDevice(server);
    const locked = await get(`/oauth/device?user_code=${device.user_code}`, account.cookie);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await locked.text()).toContain("Too many failed attempts");
  });

  test("without a session the page and the form send the visitor to sign in and back", async () => {
    const page = await fetch(`${server.url}/oauth/device?user_code=BCDF-GHJK`, { redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe(`/console?next=${encodeURIComponent("/oauth/device?user_code=BCDF-GHJK")}`);
    const form = await postForm("/oauth/device", "", { user_code: "BCDF-GHJK", decision: "approve" });
    expect(form.status).toBe(303);
    expect(form.headers.get("location")).toBe(`/console?next=${encodeURIComponent("/oauth/device?user_code=BCDF-GHJK")}`);
  });
});

describe("the consent form", () => {
  async function setUp() {
    const account = await signedIn();
    const redirectUri = "http://127.0.0.1:9/callback";
    const created = await server.api("POST", "/v1/oauth/clients", {
      token: account.apiKey,
      body: { client_name: "Notes", client_type: "public", redirect_uris: [redirectUri], allowed_scopes: ["usage:read"], allowed_grant_types: ["authorization_code"] },
    });
    expect(created.status).toBe(200);
    const pkce = pkcePair();
    const query = new URLSearchParams({ response_type: "code", client_id: created.body.client_id, redirect_uri: redirectUri, state: "s1", code_challenge: pkce.challenge, code_challenge_method: "S256" });
    return { account, redirectUri, clientId: created.body.client_id as string, query };
  }

  test("the consent page lets its form answer reach the client's redirect origin, and nothing else", async () => {
    const { account, query } = await setUp();
    const response = await get(`/oauth/authorize?${query}`, account.cookie);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toContain("form-action 'self' http://127.0.0.1:9;");
  });

  test("a redirect URI changed in the form is checked again and refused with a page, never followed", async () => {
    const { account, query } = await setUp();
    const page = await (await get(`/oauth/authorize?${query}`, account.cookie)).text();
    const csrf = hidden(page, "/oauth/authorize", "csrf_token")!;
    expect(hidden(page, "/oauth/authorize", "authorize_query")).toBe(query.toString());
    const tampered = new URLSearchParams(query);
    tampered.set("redirect_uri", "https://evil.example/steal");
    const response = await postForm("/oauth/authorize", account.cookie, { csrf_token: csrf, authorize_query: tampered.toString(), namespace_id: account.namespaceId, decision: "allow" });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(await response.text()).toContain("redirect_uri is not registered");
    const [row] = await server.server.services.db.sql<{ count: number }[]>`select count(*)::int as count from oauth_authorization_codes where account_id = ${account.accountId}`;
    expect(row!.count).toBe(0);
  });

  test("a consent POST without the token is a 403 page; with it, a 303 to the redirect URI with code and state", async () => {
    const { account, query, redirectUri } = await setUp();
    const page = await (await get(`/oauth/authorize?${query}`, account.cookie)).text();
    const fields = { authorize_query: query.toString(), namespace_id: account.namespaceId, decision: "allow" };
    expect((await postForm("/oauth/authorize", account.cookie, fields)).status).toBe(403);
    expect((await postForm("/oauth/authorize", account.cookie, { ...fields, csrf_token: hidden(page, "/oauth/authorize", "csrf_token")! }, { origin: "https://evil.example" })).status).toBe(403);
    const allowed = await postForm("/oauth/authorize", account.cookie, { ...fields, csrf_token: hidden(page, "/oauth/authorize", "csrf_token")! });
    expect(allowed.status).toBe(303);
    const location = new URL(allowed.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(redirectUri);
    expect(location.searchParams.get("state")).toBe("s1");
    expect(location.searchParams.get("code")).not.toBeNull();
  });

  test("errors the client should hear go back to it (302); a repeated parameter or an unknown client is a page", async () => {
    const { account, query, redirectUri } = await setUp();
    const wrongType = new URLSearchParams(query);
    wrongType.set("response_type", "token");
    const redirected = await fetch(`${server.url}/oauth/authorize?${wrongType}`, { redirect: "manual" });
    expect(redirected.status).toBe(302);
    const location = new URL(redirected.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(redirectUri);
    expect(location.searchParams.get("error")).toBe("unsupported_response_type");
    expect(location.searchParams.get("state")).toBe("s1");
    const repeated = await get(`/oauth/authorize?${query}&redirect_uri=${encodeURIComponent("https://evil.example/")}`, account.cookie);
    expect(repeated.status).toBe(400);
    expect(await repeated.text()).toContain("the parameter redirect_uri is repeated");
    const unknown = await get(`/oauth/authorize?client_id=brc_nope&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code`, account.cookie);
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("location")).toBeNull();
  });

  test("signed out, the whole authorization request survives the sign-in round trip", async () => {
    const { account, query } = await setUp();
    const first = await fetch(`${server.url}/oauth/authorize?${query}`, { redirect: "manual" });
    expect(first.status).toBe(303);
    const next = new URL(first.headers.get("location")!, server.url).searchParams.get("next")!;
    expect(next).toBe(`/oauth/authorize?${query}`);
    const { response } = await signInOverHttp(server, account.email, PASSWORD, { next });
    expect(response.headers.get("location")).toBe(`/oauth/authorize?${query}`);
  });
});

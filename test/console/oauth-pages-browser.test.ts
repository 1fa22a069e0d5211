import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser } from "../support/browser";
import { startTestServer, type TestServer } from "../support/test-server";
import { createAccountWithPassword } from "../support/console-http";
import { pkcePair, pollDevice, postForm, startDevice } from "../oauth/oauth-support";

const PASSWORD = "correct horse battery staple";

let browser: Browser;
let server: TestServer;
/** A loopback page standing in for a third-party app's redirect URI; it records what it was sent. */
let callback: ReturnType<typeof Bun.serve>;
let callbackHits: URL[] = [];
beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startTestServer()]);
  callback = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const hit = new URL(request.url);
      // Only the redirect itself: the browser may also ask this origin for a favicon.
      if (hit.pathname === "/favicon.ico") return new Response(null, { status: 404 });
      callbackHits.push(hit);
      return new Response("<!doctype html><title>Back in the app</title><p>done</p>", { headers: { "content-type": "text/html" } });
    },
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  callback?.stop(true);
  await server?.close();
});
beforeEach(async () => {
  callbackHits = [];
  await server.server.services.db.sql`delete from auth_throttle`;
});

const url = (path: string) => server.url + path;

async function withPage<T>(run: (page: Page, context: BrowserContext) => Promise<T>): Promise<T> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  try {
    return await run(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

/** Fills the sign-in form the browser was sent to, and submits it. */
async function signInHere(page: Page, email: string): Promise<void> {
  expect(await page.textContent("h1")).toBe("Sign in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Sign in" }).click()]);
  await page.waitForSelector("h1");
}

async function accountWithTwoNamespaces() {
  const account = await createAccountWithPassword(server, PASSWORD, 1_000_000);
  const second = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "second" } });
  expect(second.status).toBe(200);
  return { ...account, secondNamespaceId: second.body.id as string };
}

describe("the device verification page", () => {
  test("signed out: sign in, come back to the code, approve into the picked namespace; the device gets a bra_ token bound to it", async () => {
    const account = await accountWithTwoNamespaces();
    const device = await startDevice(server);
    expect((await pollDevice(server, device.device_code)).body.error).toBe("authorization_pending");
    await withPage(async (page) => {
      await page.goto(url(`/oauth/device?user_code=${device.user_code}`));
      await signInHere(page, account.email);
      expect(page.url()).toBe(url(`/oauth/device?user_code=${device.user_code}`));
      expect(await page.textContent("h1")).toBe("Connect Switchyard CLI?");
      expect(await page.textContent("#device-user-code")).toBe(device.user_code);
      const scopes = await page.textContent(".scopes");
      expect(scopes).toContain("Send requests to models, paid from your wallet");
      expect(scopes).toContain("(usage:read)");
      expect(scopes).not.toContain("namespace:write");
      await page.getByLabel("Namespace it may use").selectOption(account.secondNamespaceId);
      await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Approve" }).click()]);
      expect(await page.textContent("#device-result")).toContain("You can return to your terminal");
    });
    const tokens = await pollDevice(server, device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body.access_token.startsWith("bra_")).toBe(true);
    expect(tokens.body.namespace_id).toBe(account.secondNamespaceId);
    const usage = await server.api("GET", `/v1/namespaces/${account.secondNamespaceId}/usage`, { token: tokens.body.access_token });
    expect(usage.status).toBe(200);
    expect((await server.api("GET", `/v1/namespaces/${account.namespaceId}/usage`, { token: tokens.body.access_token })).status).toBe(404);
  }, 60_000);

  test("typing the code by hand, then Deny: the device hears access_denied", async () => {
    const account = await accountWithTwoNamespaces();
    const device = await startDevice(server);
    await withPage(async (page) => {
      await page.goto(url("/console"));
      await signInHere(page, account.email);
      await page.goto(url("/oauth/device"));
      await page.getByLabel("Code shown on your device").fill(device.user_code.toLowerCase().replace("-", ""));
      await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Continue" }).click()]);
      expect(await page.textContent("#device-user-code")).toBe(device.user_code);
      await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Deny" }).click()]);
      expect(await page.textContent("#device-result")).toContain("Denied");
    });
    const answer = await pollDevice(server, device.device_code);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("access_denied");
  }, 60_000);

  test("an unknown code is a readable error, and counts against the address", async () => {
    const account = await accountWithTwoNamespaces();
    await withPage(async (page) => {
      await page.goto(url("/console"));
      await signInHere(page, account.email);
      const response = await page.goto(url("/oauth/device?user_code=BCDF-GHJK"));
      expect(response!.status()).toBe(400);
      expect(await page.textContent("#device-error")).toContain("That code is not valid");
      expect(await page.inputValue("#user_code")).toBe("BCDF-GHJK");
    });
    const [row] = await server.server.services.db.sql<{ failures: number }[]>`select failures from auth_throttle where key like 'user-code:address:%'`;
    expect(row!.failures).toBe(1);
  }, 60_000);
});

describe("the consent page", () => {
  async function registerClient(token: string, name: string) {
    const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
    const created = await server.api("POST", "/v1/oauth/clients", {
      token,
      body: { client_name: name, client_type: "public", redirect_uris: [redirectUri], allowed_scopes: ["usage:read", "inference:invoke"], allowed_grant_types: ["authorization_code", "refresh_token"] },
    });
    expect(created.status).toBe(200);
    return { clientId: created.body.client_id as string, redirectUri };
  }

  function authorizeUrl(clientId: string, redirectUri: string, challenge: string, state: string) {
    const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "usage:read", state, code_challenge: challenge, code_challenge_method: "S256" });
    return url(`/oauth/authorize?${query}`);
  }

  test("signed out: sign in, consent for the picked namespace, land on the redirect URI with code and state; the code buys a working token", async () => {
    const account = await accountWithTwoNamespaces();
    const client = await registerClient(account.apiKey, `Notes <script>document.title="owned"</script>`);
    const pkce = pkcePair();
    const state = "st-" + crypto.randomUUID();
    await withPage(async (page) => {
      await page.goto(authorizeUrl(client.clientId, client.redirectUri, pkce.challenge, state));
      await signInHere(page, account.email);
      expect(await page.textContent("h1")).toBe(`Allow Notes <script>document.title="owned"</script> to use your account?`);
      expect(await page.title()).toBe("Allow access · Switchyard");
      expect(await page.textContent(".scopes")).toContain("See usage and the request history");
      await page.getByLabel("Namespace it may use").selectOption(account.secondNamespaceId);
      await Promise.all([page.waitForURL(/\/callback/), page.getByRole("button", { name: "Allow" }).click()]);
    });
    expect(callbackHits.length).toBe(1);
    const landed = callbackHits[0]!;
    expect(landed.searchParams.get("state")).toBe(state);
    const code = landed.searchParams.get("code")!;
    expect(code.length).toBeGreaterThan(20);
    const tokens = await postForm(server, "/oauth/token", { grant_type: "authorization_code", code, redirect_uri: client.redirectUri, client_id: client.clientId, code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
    expect(tokens.body.namespace_id).toBe(account.secondNamespaceId);
    expect(tokens.body.scope).toBe("usage:read");
    const usage = await server.api("GET", `/v1/namespaces/${account.secondNamespaceId}/usage`, { token: tokens.body.access_token });
    expect(usage.status).toBe(200);
  }, 60_000);

  test("Deny sends the browser back with access_denied and the state", async () => {
    const account = await accountWithTwoNamespaces();
    const client = await registerClient(account.apiKey, "Notes");
    const pkce = pkcePair();
    await withPage(async (page) => {
      await page.goto(url("/console"));
      await signInHere(page, account.email);
      await page.goto(authorizeUrl(client.clientId, client.redirectUri, pkce.challenge, "s1"));
      await Promise.all([page.waitForURL(/\/callback/), page.getByRole("button", { name: "Deny" }).click()]);
    });
    expect(callbackHits[0]!.searchParams.get("error")).toBe("access_denied");
    expect(callbackHits[0]!.searchParams.get("state")).toBe("s1");
    expect(callbackHits[0]!.searchParams.get("code")).toBeNull();
  }, 60_000);

  test("an unregistered redirect URI is shown as an error and never followed, signed in or not", async () => {
    const account = await accountWithTwoNamespaces();
    const client = await registerClient(account.apiKey, "Notes");
    const pkce = pkcePair();
    const elsewhere = `http://127.0.0.1:${callback.port}/elsewhere`;
    await withPage(async (page) => {
      const response = await page.goto(authorizeUrl(client.clientId, elsewhere, pkce.challenge, "s"));
      expect(response!.status()).toBe(400);
      expect(await page.textContent("h1")).toBe("This app's request cannot continue");
    });
    expect(callbackHits.length).toBe(0);
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { checkAuthorizeRequest, issueAuthorizationCode } from "../../src/oauth/authorization-request";
import { oauthDeps } from "../../src/oauth/oauth-deps";
import { launchBrowser } from "../support/browser";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { pkcePair } from "./oauth-support";

/**
 * A single-page app on another origin runs the authorization code flow from the browser:
 * discovery, the code exchange and revocation must be reachable cross-origin (CORS), and
 * nothing a session cookie authenticates may be.
 */
let server: TestServer;
let account: TestAccount;
let browser: Browser;
let app: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  account = await server.createAccount();
  // The third-party app's own origin: a blank page on another loopback port.
  app = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<!doctype html><title>app</title>", { headers: { "content-type": "text/html" } }) });
}, 60_000);
afterAll(async () => {
  await browser.close();
  app.stop(true);
  await server.close();
});

describe("CORS on the public OAuth endpoints", () => {
  test("preflights and answers carry Access-Control-Allow-Origin: *; the decision API has none", async () => {
    const preflight = await fetch(`${server.url}/oauth/token`, {
      method: "OPTIONS",
      headers: { origin: "https://spa.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("content-type");
    const refused = await fetch(`${server.url}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://spa.example" }, body: "grant_type=nope" });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    const metadata = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    expect(metadata.headers.get("access-control-allow-origin")).toBe("*");
    expect(((await metadata.json()) as { token_endpoint: unknown }).token_endpoint).toBeString();
    const decision = await fetch(`${server.url}/oauth/device/decision`, { method: "OPTIONS", headers: { origin: "https://spa.example", "access-control-request-method": "POST" } });
    expect(decision.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("a page on another origin exchanges its code, uses the token's scopes and revokes it, from the browser", async () => {
    const redirectUri = `http://127.0.0.1:${app.port}/callback`;
    const created = await server.api("POST", "/v1/oauth/clients", {
      token: account.apiKey,
      body: { client_name: "SPA", client_type: "public", redirect_uris: [redirectUri], allowed_grant_types: ["authorization_code", "refresh_token"], allowed_scopes: ["usage:read"] },
    });
    expect(created.status).toBe(200);
    const pkce = pkcePair();
    const deps = oauthDeps(server.server.services);
    const check = await checkAuthorizeRequest(deps, { client_id: created.body.client_id, redirect_uri: redirectUri, response_type: "code", state: "s1", code_challenge: pkce.challenge, code_challenge_method: "S256", scope: "usage:read" });
    if (check.kind !== "ok") throw new Error(JSON.stringify(check));
    const code = new URL(await issueAuthorizationCode(deps, check.request, { accountId: account.accountId, scopes: [...ALL_SCOPES] }, account.namespaceId)).searchParams.get("code")!;

    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${app.port}/`);
    // The app's own script, as a browser runs it: everything below is cross-origin fetches.
    const outcome = await page.evaluate(
      `(async ({ base, clientId, code, verifier, redirectUri }) => {
        const metadata = await (await fetch(base + "/.well-known/oauth-authorization-server")).json();
        const tokenUrl = new URL(new URL(metadata.token_endpoint).pathname, base).href;
        const revokeUrl = new URL(new URL(metadata.revocation_endpoint).pathname, base).href;
        const form = (fields) => ({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
        const tokens = await (await fetch(tokenUrl, form({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId }))).json();
        const revoked = await fetch(revokeUrl, form({ token: tokens.refresh_token, client_id: clientId }));
        let decision = "readable";
        try { await fetch(base + "/oauth/device/decision", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }); } catch { decision = "blocked"; }
        return { scope: tokens.scope, access: tokens.access_token, revoked: revoked.status, decision };
      })(${JSON.stringify({ base: server.url, clientId: created.body.client_id, code, verifier: pkce.verifier, redirectUri })})`,
    );
    await page.close();
    const result = outcome as { scope: string; access: string; revoked: number; decision: string };
    expect(result.scope).toBe("usage:read");
    expect(result.access).toStartWith("bra_");
    expect(result.revoked).toBe(200);
    // The cookie-authenticated decision API stays closed to other origins.
    expect(result.decision).toBe("blocked");
    // Revoked from the browser: the token no longer works.
    expect((await server.api("GET", "/v1/usage", { token: result.access })).status).toBe(401);
  });
});

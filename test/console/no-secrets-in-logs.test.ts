import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call } from "../support/api-client";
import { createAccountWithPassword, signInOverHttp } from "../support/console-http";
import { spawnServer, type SpawnedServer } from "../support/spawn-server";
import { createTestDatabase } from "../support/test-database";
import { TEST_ADMIN_TOKEN, TEST_BYOK_MASTER_KEY } from "../support/test-server";
import { pkcePair } from "../oauth/oauth-support";

const PASSWORD = "a password nobody should log";
const WRONG_PASSWORD = "a wrong password nobody should log";

let database: { url: string; drop(): Promise<void> };
let server: SpawnedServer;
beforeAll(async () => {
  database = await createTestDatabase();
  server = await spawnServer({
    DATABASE_URL: database.url,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    BYOK_MASTER_KEY: TEST_BYOK_MASTER_KEY,
    DATA_DIR: mkdtempSync(join(tmpdir(), "switchyard-logs-")),
    LOG_LEVEL: "debug",
  });
}, 60_000);
afterAll(async () => {
  server?.process.kill();
  await server?.exited;
  await database?.drop();
});

/** A JSON answer's fields (the test reads a few strings from each). */
type Json = Record<string, string>;
const json = async (response: Promise<Response>): Promise<Json> => (await (await response).json()) as Json;

const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(server.url + path, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(fields) });

/** A hidden field of the form posting to `action`. */
function hidden(page: string, action: string, name: string): string {
  const rest = page.slice(page.indexOf(`action="${action}"`));
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(rest)![1]!.replace(/&amp;/g, "&");
}

test("at LOG_LEVEL=debug, sign-in, device approval, consent and token exchanges log no password, session, token or code", async () => {
  const api = { api: (method: string, path: string, options?: Parameters<typeof call>[3]) => call(server.url, method, path, options) };
  const account = await createAccountWithPassword(api, PASSWORD);
  const secrets: string[] = [PASSWORD, WRONG_PASSWORD, account.apiKey];

  expect((await signInOverHttp(server, account.email, WRONG_PASSWORD)).response.status).toBe(401);
  const { session } = await signInOverHttp(server, account.email, PASSWORD);
  expect(session).toBeDefined();
  const cookie = session!;
  secrets.push(cookie.split("=")[1]!);

  // The device flow, approved in the console.
  const started = await json(form("/oauth/device_authorization", { client_id: "switchyard-cli" }));
  secrets.push(started.device_code!);
  const devicePage = await (await fetch(`${server.url}/oauth/device?user_code=${started.user_code}`, { headers: { cookie } })).text();
  const csrf = hidden(devicePage, "/oauth/device", "csrf_token");
  secrets.push(csrf);
  const approved = await form("/oauth/device", { csrf_token: csrf, user_code: started.user_code!, namespace_id: account.namespaceId, decision: "approve" }, { cookie });
  expect(approved.status).toBe(200);
  const tokens = await json(form("/oauth/token", { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: started.device_code!, client_id: "switchyard-cli" }));
  expect(tokens.access_token).toStartWith("bra_");
  secrets.push(tokens.access_token!, tokens.refresh_token!);
  expect((await call(server.url, "GET", `/v1/namespaces/${account.namespaceId}/usage`, { token: tokens.access_token! })).status).toBe(200);
  const refreshed = await json(form("/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token!, client_id: "switchyard-cli" }));
  secrets.push(refreshed.access_token!, refreshed.refresh_token!);

  // Authorization code with PKCE, consented in the console.
  const redirectUri = "http://127.0.0.1:9/callback";
  const client = await call(server.url, "POST", "/v1/oauth/clients", {
    token: account.apiKey,
    body: { client_name: "Notes", client_type: "public", redirect_uris: [redirectUri], allowed_scopes: ["usage:read"], allowed_grant_types: ["authorization_code"] },
  });
  expect(client.status).toBe(200);
  const pkce = pkcePair();
  secrets.push(pkce.verifier);
  const query = new URLSearchParams({ response_type: "code", client_id: client.body.client_id, redirect_uri: redirectUri, state: "s", code_challenge: pkce.challenge, code_challenge_method: "S256" });
  const consentPage = await (await fetch(`${server.url}/oauth/authorize?${query}`, { headers: { cookie } })).text();
  const consented = await form("/oauth/authorize", { csrf_token: hidden(consentPage, "/oauth/authorize", "csrf_token"), authorize_query: query.toString(), namespace_id: account.namespaceId, decision: "allow" }, { cookie });
  const code = new URL(consented.headers.get("location")!).searchParams.get("code")!;
  secrets.push(code);
  const exchanged = await json(form("/oauth/token", { grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: client.body.client_id, code_verifier: pkce.verifier }));
  expect(exchanged.access_token).toStartWith("bra_");
  secrets.push(exchanged.access_token!);

  // Signing out, then letting the output settle.
  const overview = await (await fetch(`${server.url}/console`, { headers: { cookie } })).text();
  expect((await form("/console/sign-out", { csrf_token: hidden(overview, "/console/sign-out", "csrf_token") }, { cookie })).status).toBe(303);
  // The log did record these events, so the check below looks at real lines: waited for
  // (the server's output reaches this process through a pipe; a loaded machine is slower).
  const events = ['"console sign-in refused"', '"console sign-in"', '"device code decided in the console"', '"authorization consent"'];
  for (let polls = 0; polls < 200 && !events.every((event) => server.output().includes(event)); polls++) await Bun.sleep(50);
  await Bun.sleep(200);

  const output = server.output();
  expect(output).toContain('"console sign-in refused"');
  expect(output).toContain('"console sign-in"');
  expect(output).toContain('"device code decided in the console"');
  expect(output).toContain('"authorization consent"');
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThan(8);
    expect(output).not.toContain(secret);
  }
}, 60_000);

import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../support/test-server";
import { signedInAccount } from "../support/console-http";
import { pkcePair, startDevice } from "../oauth/oauth-support";

/**
 * Only the built-in client is marked first-party on the device and consent pages; a
 * registered client shows the email of the account that registered it, and no name that
 * imitates the built-in client's can be registered at all.
 */
const PASSWORD = "correct horse battery staple";
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
beforeEach(async () => {
  await server.server.services.db.sql`delete from auth_throttle`;
});

const signedIn = () => signedInAccount(server, PASSWORD);
const get = async (path: string, cookie: string) => (await fetch(server.url + path, { headers: { cookie } })).text();
const deviceClient = (name: string) => ({ client_name: name, client_type: "public", allowed_grant_types: [DEVICE_GRANT] });

describe("names imitating the built-in client", () => {
  const imitations = [
    "Switchyard CLI",
    "switchyard",
    "My SWITCHYARD helper",
    "Ｓｗｉｔｃｈｙａｒｄ CLI", // full-width
    "Sw\u0456tchyard CLI", // Cyrillic i
    "\u0405witchyard", // Cyrillic S
    "S w i t c h y a r d",
    "Switch\u200Byard CLI", // zero-width space
    "Switch-yard",
    "Sw\u00edtchyard", // accented i
    "Sw1tchy4rd",
    "𝐒𝐰𝐢𝐭𝐜𝐡𝐲𝐚𝐫𝐝", // mathematical bold
  ];

  test("are refused at registration with a 400 naming client_name", async () => {
    const account = await signedIn();
    for (const name of imitations) {
      const response = await server.api("POST", "/v1/oauth/clients", { token: account.apiKey, body: deviceClient(name) });
      expect({ name, status: response.status }).toEqual({ name, status: 400 });
      expect(response.body.error).toBe("bad_request");
      expect(response.body.error_description).toContain("client_name");
    }
    for (const name of ["Acme CLI", "Switch panel", "Yard tools"]) {
      expect((await server.api("POST", "/v1/oauth/clients", { token: account.apiKey, body: deviceClient(name) })).status).toBe(200);
    }
  });

  test("are refused when renaming, and the name stays", async () => {
    const account = await signedIn();
    const created = await server.api("POST", "/v1/oauth/clients", { token: account.apiKey, body: deviceClient("Acme CLI") });
    expect(created.status).toBe(200);
    const renamed = await server.api("PUT", `/v1/oauth/clients/${created.body.id}`, { token: account.apiKey, body: { client_name: "Switchyard  CLI" } });
    expect(renamed.status).toBe(400);
    expect(renamed.body.error_description).toContain("client_name");
    expect((await server.api("GET", `/v1/oauth/clients/${created.body.id}`, { token: account.apiKey })).body.client_name).toBe("Acme CLI");
  });
});

describe("the device and consent pages", () => {
  test("mark the built-in CLI first-party", async () => {
    const account = await signedIn();
    const device = await startDevice(server);
    const page = await get(`/oauth/device?user_code=${device.user_code}`, account.cookie);
    expect(page).toContain("<h1>Connect Switchyard CLI?</h1>");
    expect(page).toContain('id="client-publisher">First-party (Switchyard)');
    expect(page).not.toContain("Third-party");
  });

  test("show a registered device client as third-party, by the registering account's email", async () => {
    const owner = await signedIn();
    const viewer = await signedIn();
    const created = await server.api("POST", "/v1/oauth/clients", { token: owner.apiKey, body: deviceClient("Acme CLI") });
    const device = await startDevice(server, { client_id: created.body.client_id });
    const page = await get(`/oauth/device?user_code=${device.user_code}`, viewer.cookie);
    expect(page).toContain("<h1>Connect Acme CLI?</h1>");
    expect(page).toContain(`Third-party client by <strong>${owner.email}</strong>`);
    expect(page).not.toContain("First-party");
  });

  test("show a client asking for consent as third-party, by the registering account's email", async () => {
    const owner = await signedIn();
    const viewer = await signedIn();
    const redirectUri = "http://127.0.0.1:9/callback";
    const created = await server.api("POST", "/v1/oauth/clients", {
      token: owner.apiKey,
      body: { client_name: "Notes", client_type: "public", redirect_uris: [redirectUri], allowed_scopes: ["usage:read"], allowed_grant_types: ["authorization_code"] },
    });
    const pkce = pkcePair();
    const query = new URLSearchParams({ response_type: "code", client_id: created.body.client_id, redirect_uri: redirectUri, state: "s1", code_challenge: pkce.challenge, code_challenge_method: "S256" });
    const page = await get(`/oauth/authorize?${query}`, viewer.cookie);
    expect(page).toContain("<h1>Allow Notes to use your account?</h1>");
    expect(page).toContain(`Third-party client by <strong>${owner.email}</strong>`);
    expect(page).not.toContain("First-party");
  });
});

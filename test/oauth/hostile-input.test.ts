import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { CLI, DEVICE_GRANT, postForm, startDevice } from "./oauth-support";

/**
 * Garbage at every OAuth endpoint: a clear JSON error, never a 500, never a hang. The form
 * endpoints answer in RFC 6749 §5.2's shape, the decision API in `invalid_request`.
 */
let server: TestServer;
let account: TestAccount;
beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
});
afterAll(() => server.close());

const FORM_PATHS = ["/oauth/device_authorization", "/oauth/token", "/oauth/revoke"];

async function send(path: string, body: string | Uint8Array, headers: Record<string, string>) {
  const response = await fetch(server.url + path, { method: "POST", headers, body });
  const text = await response.text();
  return { status: response.status, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
}

const FORM = { "content-type": "application/x-www-form-urlencoded" };
const GARBAGE: Array<[string, string | Uint8Array, Record<string, string>]> = [
  ["no body", "", FORM],
  ["plain text", "hello there", { "content-type": "text/plain" }],
  ["no content type", "grant_type=refresh_token", {}],
  ["invalid JSON", "{not json", { "content-type": "application/json" }],
  ["a JSON array", "[1,2,3]", { "content-type": "application/json" }],
  ["JSON with a number", '{"client_id": 5}', { "content-type": "application/json" }],
  ["JSON with an object", '{"client_id": {"$ne": null}}', { "content-type": "application/json" }],
  ["a repeated parameter", `client_id=${CLI}&client_id=${CLI}&grant_type=${DEVICE_GRANT}&device_code=x`, FORM],
  ["a NUL in a value", `client_id=${CLI}%00&grant_type=refresh_token&refresh_token=a%00b&token=%00`, FORM],
  ["invalid UTF-8 and bad escapes", "client_id=%ED%A0%80%FF&scope=%&grant_type=%zz", FORM],
  ["a 200 KiB value", `client_id=${CLI}&grant_type=refresh_token&refresh_token=${"a".repeat(200 * 1024)}&token=x`, FORM],
  ["a 4 KiB client id", `client_id=${"c".repeat(4000)}&grant_type=refresh_token&refresh_token=x&token=x`, FORM],
  ["binary bytes", new Uint8Array(Array.from({ length: 512 }, (_, i) => (i * 37) % 256)), FORM],
  ["a garbage Basic header", `grant_type=refresh_token&refresh_token=x&token=x`, { ...FORM, authorization: "Basic %%%not-base64" }],
  ["Basic without a colon", `grant_type=refresh_token&refresh_token=x&token=x`, { ...FORM, authorization: `Basic ${btoa("justanid")}` }],
  ["Basic with bad escapes", `grant_type=refresh_token&refresh_token=x&token=x`, { ...FORM, authorization: `Basic ${btoa("%E0%A4%A:%zz")}` }],
  ["an unknown grant type", `client_id=${CLI}&grant_type=password&username=a&password=b&token=x`, FORM],
  ["scope of spaces and junk", `client_id=${CLI}&scope=${encodeURIComponent("   \t policy:* ;DROP TABLE")}&grant_type=refresh_token&refresh_token=x&token=x`, FORM],
];

describe("form endpoints", () => {
  for (const path of FORM_PATHS) {
    for (const [name, body, headers] of GARBAGE) {
      test(`${path}: ${name} is a 4xx OAuth error`, async () => {
        const response = await send(path, body, headers);
        expect(response.status).toBeGreaterThanOrEqual(200);
        expect(response.status).toBeLessThan(500);
        if (response.status !== 200) {
          expect(typeof response.json?.error).toBe("string");
          expect(typeof response.json?.error_description).toBe("string");
        }
      });
    }
  }

  test("a repeated parameter is named; a body past the limit is a 413", async () => {
    const repeated = await send("/oauth/token", `client_id=${CLI}&client_id=other&grant_type=${DEVICE_GRANT}`, FORM);
    expect(repeated.status).toBe(400);
    expect(repeated.json).toEqual({ error: "invalid_request", error_description: "parameter client_id is repeated" });
    const huge = await send("/oauth/token", `client_id=${CLI}&x=${"a".repeat(300 * 1024)}`, FORM);
    expect(huge.status).toBe(413);
  });

  test("JSON bodies work as well as forms", async () => {
    const response = await send("/oauth/device_authorization", JSON.stringify({ client_id: CLI }), { "content-type": "application/json" });
    expect(response.status).toBe(200);
    expect(response.json.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
  });

  test("the token endpoint's errors are the pinned ones", async () => {
    expect((await postForm(server, "/oauth/token", { client_id: CLI, grant_type: "password" })).body.error).toBe("unsupported_grant_type");
    expect((await postForm(server, "/oauth/token", { client_id: CLI })).body.error).toBe("invalid_request");
    expect((await postForm(server, "/oauth/token", { client_id: CLI, grant_type: DEVICE_GRANT })).body.error).toBe("invalid_request");
    expect((await postForm(server, "/oauth/token", { client_id: CLI, grant_type: "refresh_token", refresh_token: "nope" })).body.error).toBe("invalid_grant");
    expect((await postForm(server, "/oauth/token", { client_id: "nobody", grant_type: "refresh_token", refresh_token: "nope" })).body.error).toBe("invalid_client");
    // The built-in client may not use the authorization code grant.
    expect((await postForm(server, "/oauth/token", { client_id: CLI, grant_type: "authorization_code", code: "x", redirect_uri: "https://a.test/cb" })).body.error).toBe("unauthorized_client");
  });
});

describe("the decision API", () => {
  const bodies: Array<[string, string]> = [
    ["invalid JSON", "{nope"],
    ["an array", "[]"],
    ["a missing approve", '{"user_code":"BBBB-BBBB"}'],
    ["approve as a string", '{"user_code":"BBBB-BBBB","approve":"yes"}'],
    ["an unknown field", '{"user_code":"BBBB-BBBB","approve":true,"admin":true}'],
    ["a NUL in the code", '{"user_code":"BB\\u0000BB-BBBB","approve":true}'],
    ["a huge code", JSON.stringify({ user_code: "B".repeat(10_000), approve: true })],
    ["a namespace of junk", JSON.stringify({ user_code: "BBBB-BBBB", namespace_id: "'; drop table x; --", approve: true })],
  ];
  for (const [name, body] of bodies) {
    test(`${name} is a 4xx with a JSON error`, async () => {
      const response = await send("/oauth/device/decision", body, { "content-type": "application/json", authorization: `Bearer ${account.apiKey}` });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(typeof response.json?.error).toBe("string");
    });
  }

  test("a pending code with a junk namespace id is a 404 namespace, and stays pending", async () => {
    const device = await startDevice(server);
    const response = await server.api("POST", "/oauth/device/decision", { token: account.apiKey, body: { user_code: device.user_code, namespace_id: "ns_\u00e9\u{1F600}", approve: true } });
    expect(response.status).toBe(404);
    expect(response.body.error_description).toBe("namespace not found");
  });
});

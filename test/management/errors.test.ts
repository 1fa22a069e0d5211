import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";

let server: TestServer;
let account: TestAccount;
beforeAll(async () => {
  server = await startTestServer({ maxManagementBodyBytes: 4096 });
  account = await server.createAccount();
});
afterAll(() => server.close());

function expectEnvelope(response: { status: number; body: any; headers: Headers }, status: number, error: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  expect(Object.keys(response.body).sort()).toEqual(["error", "error_description"]);
  expect(response.body.error).toBe(error);
  expect(typeof response.body.error_description).toBe("string");
}

describe("the management error envelope", () => {
  test("malformed JSON is 400 bad_request", async () => {
    expectEnvelope(await server.api("POST", "/v1/namespaces", { token: account.apiKey, rawBody: '{"name": "x"' }), 400, "bad_request");
  });

  test("a JSON body that is not an object is 400", async () => {
    for (const rawBody of ["[]", '"x"', "42", "null"]) {
      expectEnvelope(await server.api("POST", "/v1/keys", { token: account.apiKey, rawBody }), 400, "bad_request");
    }
  });

  test("wrong types are 400 and name the field", async () => {
    const response = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: 7, scopes: ["keys:read"] } });
    expectEnvelope(response, 400, "bad_request");
    expect(response.body.error_description).toContain("display_name");
  });

  test("unknown fields are 400, never silently dropped", async () => {
    const response = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "x", label: "y" } });
    expectEnvelope(response, 400, "bad_request");
    expect(response.body.error_description).toBe("unknown field: label");
  });

  test("an oversized body is 413 payload_too_large before it is parsed", async () => {
    const response = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "x".repeat(10_000) } });
    expectEnvelope(response, 413, "payload_too_large");
  });

  test("an oversized body without Content-Length is refused, never a 500", async () => {
    const big = "x".repeat(64 * 1024 * 1024);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"name":"${big}"}`));
        controller.close();
      },
    });
    const response = await fetch(`${server.url}/v1/namespaces`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" },
      body: stream,
    }).catch(() => undefined);
    // Bun's own cap may close the connection instead of answering; either way not a 5xx.
    if (response) expect(response.status).toBeLessThan(500);
  });

  test("an unknown route is a JSON 404", async () => {
    expectEnvelope(await server.api("GET", "/v1/nothing-here", { token: account.apiKey }), 404, "not_found");
  });

  test("every 2xx management answer has a JSON body", async () => {
    const created = await server.api("POST", "/v1/keys", { token: account.apiKey, body: { display_name: "x", scopes: ["keys:read"] } });
    const calls = [
      await server.api("GET", "/v1/namespaces", { token: account.apiKey }),
      await server.api("GET", "/v1/keys", { token: account.apiKey }),
      created,
      await server.api("DELETE", `/v1/keys/${created.body.id}`, { token: account.apiKey }),
    ];
    for (const response of calls) {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(typeof response.body).toBe("object");
    }
  });
});

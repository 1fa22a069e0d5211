import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { TEST_ADMIN_TOKEN } from "../support/test-server";
import { chunkedBody, rawHttp } from "../support/raw-http";

/**
 * Management and routing inputs that used to reach SQL or a handler unchecked: NUL in
 * ids and names ("invalid byte sequence" 500s), dot segments sent as is (a TypeError),
 * chunked bodies that skipped the 256 KiB limit.
 */

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(() => harness.close());

const MANAGEMENT_LIMIT = 256 * 1024;
const host = () => `Host: ${new URL(harness.server.url).host}`;

function expectManagementError(response: { status: number; body: any }, status: number, code: string, descriptionPart?: string) {
  expect(response.status).toBe(status);
  expect(response.body.error).toBe(code);
  expect(typeof response.body.error_description).toBe("string");
  if (descriptionPart) expect(response.body.error_description).toContain(descriptionPart);
}

describe("ids that cannot exist are 404 before SQL; text PostgreSQL cannot store is a 400 naming the field", () => {
  test("NUL and junk in namespace, key, account and request ids are the 404 of a missing one", async () => {
    const token = harness.account.apiKey;
    const api = harness.server.api;
    expectManagementError(await api("GET", "/v1/namespaces/me%00/usage", { token }), 404, "not_found", "namespace");
    expectManagementError(await api("GET", "/v1/namespaces/ns_%00abc/requests", { token }), 404, "not_found", "namespace");
    expectManagementError(await api("GET", "/v1/namespaces/%00/keys", { token }), 404, "not_found", "namespace");
    expectManagementError(await api("DELETE", "/v1/namespaces/ns_x%00", { token }), 404, "not_found", "namespace");
    expectManagementError(await api("DELETE", "/v1/keys/x%00", { token }), 404, "not_found", "key");
    expectManagementError(await api("DELETE", "/v1/keys/k_%00", { token }), 404, "not_found", "key");
    expectManagementError(await api("DELETE", `/v1/keys/k_${"a".repeat(5000)}`, { token }), 404, "not_found", "key");
    expectManagementError(await api("GET", "/v1/requests/abc%00/settlement", { token }), 404, "not_found", "request");
    expectManagementError(await api("GET", "/v1/requests/%F0%9F%98%80/settlement", { token }), 404, "not_found", "request");
    const admin = { token: TEST_ADMIN_TOKEN, body: { amount_micro_usd: 5 } };
    expectManagementError(await api("POST", "/admin/accounts/%00/credits", admin), 404, "not_found", "account");
    expectManagementError(await api("POST", "/admin/accounts/acct_%00x/credits", admin), 404, "not_found", "account");
  });

  test("a policy, budget, preset, binding or principal id that cannot exist is the 404 its route gives a missing one", async () => {
    const token = harness.account.apiKey;
    const api = harness.server.api;
    for (const [path, what] of [
      ["/v1/policies/pol_%00", "policy"],
      ["/v1/policies/x%00y", "policy"],
      ["/v1/budgets/pol_%00", "budget"],
      ["/v1/presets/%F0%9F%98%80", "preset"],
      ["/v1/namespaces/me/policies/pol_a%00/bindings", "policy"],
      ["/v1/principals/api_key/k_%00/policies", "principal"],
      ["/v1/policies/effective?principal_type=api_key&principal_id=k_%00", "principal"],
    ] as const) {
      const malformed = await api("GET", path, { token });
      expectManagementError(malformed, 404, "not_found", what);
      // Exactly the body a well-formed id that does not exist gets.
      const missing = await api("GET", path.replace(/%00|x%00y|%F0%9F%98%80/, "pol_missing").replace("pol_pol_missing", "pol_missing").replace("k_pol_missing", "k_missing"), { token });
      expect(missing.status).toBe(404);
      expect(malformed.body).toEqual(missing.body);
    }
    expectManagementError(await api("DELETE", "/v1/policies/pol_abc/bind/pb_%00", { token }), 404, "not_found");
  });

  test("authentication still comes first: a stranger gets 401 for an impossible id", async () => {
    expectManagementError(await harness.server.api("DELETE", "/v1/keys/x%00"), 401, "unauthorized");
    expectManagementError(await harness.server.api("POST", "/admin/accounts/%00/credits", { body: { amount_micro_usd: 5 } }), 401, "unauthorized");
  });

  test("a NUL or an unpaired surrogate in display_name, name or email is a 400 naming the field", async () => {
    const token = harness.account.apiKey;
    const api = harness.server.api;
    expectManagementError(await api("POST", "/v1/keys", { token, rawBody: '{"display_name":"a\\u0000b","scopes":["keys:read"]}' }), 400, "bad_request", "display_name");
    expectManagementError(await api("POST", "/v1/namespaces", { token, rawBody: '{"name":"a\\u0000b"}' }), 400, "bad_request", "name");
    expectManagementError(await api("POST", "/v1/namespaces", { token, rawBody: '{"name":"a\\ud800b"}' }), 400, "bad_request", "name");
    expectManagementError(await api("POST", "/v1/keys", { token, rawBody: '{"display_name":"k","scopes":["keys:read\\u0000"]}' }), 400, "bad_request", "scopes.0");
    expectManagementError(await api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, rawBody: '{"email":"a\\u0000b@example.test"}' }), 400, "bad_request", "email");
  });

  test("a name with ordinary Unicode is still accepted", async () => {
    const response = await harness.server.api("POST", "/v1/namespaces", { token: harness.account.apiKey, body: { name: `tëst-😀-${Date.now()}` } });
    expect(response.status).toBe(200);
  });
});

describe("numbers that reach bigint columns", () => {
  test("credits that would take a balance past 2^53 - 1 are a 409, the balance unchanged", async () => {
    const account = await harness.server.createAccount(undefined, 0);
    const credit = (amount: number) => harness.server.api("POST", `/admin/accounts/${account.accountId}/credits`, { token: TEST_ADMIN_TOKEN, body: { amount_micro_usd: amount } });
    let balance = 0;
    for (let i = 0; i < 9; i++) {
      const response = await credit(1_000_000_000_000_000);
      expect(response.status).toBe(200);
      balance = response.body.balance_micro_usd;
    }
    expect(balance).toBe(9_000_000_000_000_000);
    expectManagementError(await credit(1_000_000_000_000_000), 409, "conflict", String(Number.MAX_SAFE_INTEGER));
    expect((await credit(7_199_254_740_991)).body.balance_micro_usd).toBe(Number.MAX_SAFE_INTEGER);
    expectManagementError(await credit(1), 409, "conflict");
    expectManagementError(await harness.server.api("POST", "/admin/accounts/acct_doesnotexist0000/credits", { token: TEST_ADMIN_TOKEN, body: { amount_micro_usd: 1 } }), 404, "not_found");
    expectManagementError(await harness.server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email: `big-${Date.now()}@example.test`, credit_micro_usd: 1e20 } }), 400, "bad_request", "credit_micro_usd");
  });
});

describe("dot segments sent as is", () => {
  const body = JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  const send = (method: string, target: string) =>
    rawHttp(harness.server.url, `${method} ${target} HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}`, body);

  test("POST /v1/foo/../chat/completions is served as the normalized path, never a TypeError", async () => {
    const response = await send("POST", "/v1/foo/../chat/completions");
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).object).toBe("chat.completion");
  });

  test("an inference path Elysia matches loosely (a trailing slash) is served, its body read once", async () => {
    for (const target of ["/v1/chat/completions/", "/v1/messages/"]) {
      const messages = JSON.stringify({ model: "mock-openai/gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
      const response = await rawHttp(harness.server.url, `POST ${target} HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${messages.length}`, messages);
      expect(response.status, target).toBe(200);
    }
  });

  test("every inference path with dot segments or their encoded forms answers without a 5xx", async () => {
    const targets = [
      "/v1/./chat/completions",
      "/v1/%2e%2e/v1/chat/completions",
      "/v1/foo/%2E%2E/messages",
      "/v1/x/../responses",
      "/v1/foo/../messages/count_tokens",
      "/v1beta/models/../../v1/chat/completions",
      "/v1beta/models/x/../mock-openai/gpt-4o-mini:generateContent",
      "/v1/models/../../v1beta/models/mock-openai/gpt-4o-mini:generateContent",
      "/v1/chat/completions/..",
      "/admin/../v1/keys",
      "/v1/namespaces/../namespaces",
    ];
    for (const target of targets) {
      const response = await send("POST", target);
      expect(response.status, target).toBeLessThan(500);
      expect(() => JSON.parse(response.body), target).not.toThrow();
    }
  });
});

describe("odd Host headers", () => {
  test("Host: api, x or a:1 still reaches the management routes (Elysia reads the path from a fixed offset)", async () => {
    for (const shortHost of ["api", "x", "a:1"]) {
      const named = JSON.stringify({ name: `short-host-${shortHost.replace(":", "")}-${Date.now()}` });
      const response = await rawHttp(harness.server.url, `POST /v1/namespaces HTTP/1.1\r\nHost: ${shortHost}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${named.length}`, named);
      expect(response.status, shortHost).toBe(200);
    }
    const listed = await rawHttp(harness.server.url, `GET /v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${harness.account.apiKey}`);
    expect(listed.status).toBe(200);
  });

  test("an empty Host or one with a port past 65535 (Bun then passes a URL new URL() refuses) is served, not a 500 or a 404", async () => {
    const chat = JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    for (const oddHost of ["", "example.test:99999", "a b"]) {
      const models = await rawHttp(harness.server.url, `GET /v1/models?provider=mock-openai HTTP/1.1\r\nHost: ${oddHost}`);
      expect(models.status, `models, Host: ${oddHost}`).toBe(200);
      const served = await rawHttp(harness.server.url, `POST /v1/chat/completions HTTP/1.1\r\nHost: ${oddHost}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${chat.length}`, chat);
      expect(served.status, `chat, Host: ${oddHost}`).toBe(200);
      const missing = await rawHttp(harness.server.url, `GET /v1/nothing HTTP/1.1\r\nHost: ${oddHost}`);
      expect(JSON.parse(missing.body)).toEqual({ error: "not_found", error_description: "route not found" });
    }
  });
});

describe("the 256 KiB management body limit holds for chunked bodies", () => {
  const big = (field: string) => JSON.stringify({ [field]: "x".repeat(2 * 1024 * 1024) });
  const cases: Array<[string, string, string]> = [
    ["/v1/namespaces", "name", "api"],
    ["/v1/keys", "display_name", "api"],
    ["/admin/accounts", "email", "admin"],
  ];
  for (const [path, field, who] of cases) {
    test(`a 2 MiB chunked body to ${path} is a 413`, async () => {
      const token = who === "admin" ? TEST_ADMIN_TOKEN : harness.account.apiKey;
      const text = new TextEncoder().encode(big(field));
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < text.length; at += 64 * 1024) controller.enqueue(text.subarray(at, at + 64 * 1024));
          controller.close();
        },
      });
      const response = await fetch(harness.server.url + path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: stream });
      expectManagementError({ status: response.status, body: await response.json() }, 413, "payload_too_large", `exceeds ${MANAGEMENT_LIMIT} bytes`);
    });
  }

  test("raw chunked framing just past the limit is a 413; within it the body is parsed", async () => {
    const head = `POST /v1/namespaces HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`;
    const over = await rawHttp(harness.server.url, head, chunkedBody(JSON.stringify({ name: "x".repeat(MANAGEMENT_LIMIT) })));
    expectManagementError({ status: over.status, body: JSON.parse(over.body) }, 413, "payload_too_large");
    const within = await rawHttp(harness.server.url, head, chunkedBody(JSON.stringify({ name: `chunked-${Date.now()}` })));
    expect(within.status).toBe(200);
  });

  test("a Content-Length past the limit is a 413 in the management shape", async () => {
    const head = `POST /v1/namespaces HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${harness.account.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${MANAGEMENT_LIMIT + 1}`;
    const response = await rawHttp(harness.server.url, head, "{");
    expectManagementError({ status: response.status, body: JSON.parse(response.body) }, 413, "payload_too_large");
  });
});

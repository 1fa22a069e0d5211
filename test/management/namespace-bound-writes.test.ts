import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";

/**
 * A credential bound to one namespace changes nothing that another namespace's requests,
 * or an account-wide credential's, depend on. It holds every scope it can be given (the
 * control-plane ones are refused at minting), and each write aimed outside its namespace
 * is refused: 403 for what only an account-wide credential may do, the 404 of a missing
 * resource for another namespace's. BYOK keys: test/byok/byok-namespaces.test.ts.
 */
let server: TestServer;
let account: TestAccount;
let ns2: string;
let bound: string;
beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
  const created = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "second" } });
  expect(created.status).toBe(200);
  ns2 = created.body.id;
  const scopes = ["inference:invoke", "usage:read", "keys:read", "keys:write", "policy:read", "policy:write", "byok:read", "byok:write", "namespace:read", "routing_preset:read", "routing_preset:write", "user:read"];
  bound = await server.mintKey(account.apiKey, scopes, ns2);
});
afterAll(() => server.close());

const NOT_FOUND = (what: string) => ({ error: "not_found", error_description: `${what} not found` });

describe("a namespace-bound credential", () => {
  test("cannot be given the account's control-plane scopes", async () => {
    for (const scope of ["user:write", "clients:write", "namespace:write", "user:*", "namespace:*"]) {
      const minted = await server.api("POST", `/v1/namespaces/${ns2}/keys`, { token: account.apiKey, body: { display_name: "cp", scopes: [scope] } });
      expect({ scope, status: minted.status }).toEqual({ scope, status: 400 });
      expect(minted.body.error).toBe("bad_request");
    }
  });

  test("cannot change the account, its namespaces or its OAuth clients", async () => {
    const attempts: Array<[string, string, unknown]> = [
      ["PATCH", "/v1/account", { display_name: "taken over" }],
      ["DELETE", "/v1/account", undefined],
      ["POST", "/v1/namespaces", { name: "third" }],
      ["DELETE", `/v1/namespaces/${account.namespaceId}`, undefined],
      ["POST", "/v1/oauth/clients", { client_name: "x", redirect_uris: ["https://app.example.test/cb"] }],
    ];
    for (const [method, path, body] of attempts) {
      const response = await server.api(method, path, { token: bound, ...(body === undefined ? {} : { body }) });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 403 });
      expect(["forbidden", "permission_denied", "insufficient_scope"]).toContain(response.body.error);
    }
    expect((await server.api("GET", "/v1/namespaces", { token: account.apiKey })).body.data).toHaveLength(2);
    expect((await server.api("GET", "/v1/account", { token: account.apiKey })).body.display_name ?? null).toBeNull();
  });

  test("cannot write routing presets, policies or keys in another namespace, nor bind its policies to one", async () => {
    const other = `/v1/namespaces/${account.namespaceId}`;
    const preset = await server.api("POST", `${other}/routing-presets`, { token: bound, body: { name: "hijack", model: "openai/gpt-4.1" } });
    expect(preset.status).toBe(404);
    expect(preset.body).toEqual(NOT_FOUND("namespace"));
    const policy = await server.api("POST", `${other}/policies`, { token: bound, body: { name: "deny", kind: "guardrail", spec: { model_deny: ["openai/gpt-4.1"] } } });
    expect(policy.status).toBe(404);
    expect(policy.body).toEqual(NOT_FOUND("namespace"));
    const key = await server.api("POST", `${other}/keys`, { token: bound, body: { display_name: "k", scopes: ["inference:invoke"] } });
    expect(key.status).toBe(404);
    expect(key.body).toEqual(NOT_FOUND("namespace"));

    // Its own policy, bound to the default namespace or to a key there: the principal is out of reach.
    const own = await server.api("POST", `/v1/namespaces/${ns2}/policies`, { token: bound, body: { name: "cap", kind: "budget", spec: { window: "day", limit_micro_usd: 1 } } });
    expect(own.status).toBe(200);
    const defaultKey = await server.api("POST", `${other}/keys`, { token: account.apiKey, body: { display_name: "d", scopes: ["inference:invoke"] } });
    for (const [principal_type, principal_id] of [["namespace", account.namespaceId], ["api_key", defaultKey.body.id]]) {
      const bind = await server.api("POST", `/v1/namespaces/${ns2}/policies/${own.body.id}/bind`, { token: bound, body: { principal_type, principal_id } });
      expect({ principal_type, status: bind.status }).toEqual({ principal_type, status: 404 });
      expect(bind.body).toEqual(NOT_FOUND("principal"));
    }
    // Nothing landed in the default namespace.
    for (const path of ["routing-presets", "policies"]) {
      expect((await server.api("GET", `${other}/${path}`, { token: account.apiKey })).body.data).toEqual([]);
    }
  });
});

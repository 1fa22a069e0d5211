import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";

/**
 * Every namespace-scoped route, driven from the OpenAPI document so a new route
 * cannot slip past this matrix: another tenant's nsid, an archived nsid and a
 * namespace-baked credential's foreign nsid must all be the 404 of a missing one.
 * A valid body per route keeps validation from answering first.
 */
const VALID_BODIES: Record<string, unknown> = {
  "POST /v1/namespaces/{nsid}/keys": { display_name: "x", scopes: ["keys:read"] },
  "DELETE /v1/namespaces/{nsid}/keys/{id}": undefined,
  "GET /v1/namespaces/{nsid}/keys": undefined,
  "DELETE /v1/namespaces/{nsid}": undefined,
  "GET /v1/namespaces/{nsid}/requests": undefined,
  "GET /v1/namespaces/{nsid}/requests/{id}": undefined,
  "GET /v1/namespaces/{nsid}/usage": undefined,
  "GET /v1/namespaces/{nsid}/usage/daily": undefined,
  "GET /v1/namespaces/{nsid}/policies": undefined,
  "POST /v1/namespaces/{nsid}/policies": { name: "x", kind: "budget", spec: { window: "day", limit_micro_usd: 1 } },
  "GET /v1/namespaces/{nsid}/policies/effective": undefined,
  "GET /v1/namespaces/{nsid}/policies/{id}": undefined,
  "PUT /v1/namespaces/{nsid}/policies/{id}": { name: "x" },
  "DELETE /v1/namespaces/{nsid}/policies/{id}": undefined,
  "POST /v1/namespaces/{nsid}/policies/{id}/bind": { principal_type: "namespace", principal_id: "ns_x" },
  "DELETE /v1/namespaces/{nsid}/policies/{id}/bind/{binding_id}": undefined,
  "GET /v1/namespaces/{nsid}/policies/{id}/bindings": undefined,
  "GET /v1/namespaces/{nsid}/policies/{id}/status": undefined,
  "POST /v1/namespaces/{nsid}/policies/{id}/disable": undefined,
  "POST /v1/namespaces/{nsid}/policies/{id}/enable": undefined,
  "GET /v1/namespaces/{nsid}/principals/{principal_type}/{principal_id}/policies": undefined,
  "GET /v1/namespaces/{nsid}/budgets": undefined,
  "POST /v1/namespaces/{nsid}/budgets": { name: "x", window: "day", limit_micro_usd: 1 },
  "GET /v1/namespaces/{nsid}/budgets/{id}": undefined,
  "PUT /v1/namespaces/{nsid}/budgets/{id}": { name: "x" },
  "DELETE /v1/namespaces/{nsid}/budgets/{id}": undefined,
  "GET /v1/namespaces/{nsid}/presets": undefined,
  "POST /v1/namespaces/{nsid}/presets": { name: "x" },
  "GET /v1/namespaces/{nsid}/presets/{id}": undefined,
  "PUT /v1/namespaces/{nsid}/presets/{id}": { name: "x" },
  "DELETE /v1/namespaces/{nsid}/presets/{id}": undefined,
  "GET /v1/namespaces/{nsid}/routing-presets": undefined,
  "POST /v1/namespaces/{nsid}/routing-presets": { name: "x" },
  "GET /v1/namespaces/{nsid}/routing-presets/{id}": undefined,
  "PUT /v1/namespaces/{nsid}/routing-presets/{id}": {},
  "DELETE /v1/namespaces/{nsid}/routing-presets/{id}": undefined,
  "POST /v1/namespaces/{nsid}/routing-presets/{id}/disable": undefined,
  "POST /v1/namespaces/{nsid}/routing-presets/{id}/enable": undefined,
  "GET /v1/namespaces/{nsid}/oauth/clients": undefined,
  "POST /v1/namespaces/{nsid}/oauth/clients": { client_name: "x", client_type: "public", allowed_grant_types: ["urn:ietf:params:oauth:grant-type:device_code"] },
  "GET /v1/namespaces/{nsid}/oauth/clients/{id}": undefined,
  "PUT /v1/namespaces/{nsid}/oauth/clients/{id}": { client_name: "x" },
  "DELETE /v1/namespaces/{nsid}/oauth/clients/{id}": undefined,
  "GET /v1/namespaces/{nsid}/oauth/tokens": undefined,
  "DELETE /v1/namespaces/{nsid}/oauth/tokens/{id}": undefined,
};

let server: TestServer;
let alice: TestAccount;
let bob: TestAccount;
let routes: Array<{ method: string; path: string }>;

beforeAll(async () => {
  server = await startTestServer();
  alice = await server.createAccount();
  bob = await server.createAccount();
  // Bob needs a second namespace so a delete of his first would otherwise be allowed.
  await server.api("POST", "/v1/namespaces", { token: bob.apiKey, body: { name: "spare" } });
  const spec = await server.api("GET", "/openapi/json");
  routes = Object.entries(spec.body.paths as Record<string, Record<string, unknown>>)
    .filter(([path]) => path.includes("{nsid}"))
    .flatMap(([path, item]) => Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })));
});
afterAll(() => server.close());

async function attempt(route: { method: string; path: string }, nsid: string, token: string) {
  const key = `${route.method} ${route.path}`;
  const path = route.path.replace("{nsid}", nsid).replace(/\{[a-z_]+\}/g, "k_someid");
  return server.api(route.method, path, { token, body: VALID_BODIES[key] });
}

describe("cross-tenant isolation", () => {
  test("the matrix covers every namespace-scoped route in the OpenAPI document", () => {
    expect(routes.length).toBeGreaterThanOrEqual(4);
    for (const route of routes) expect(Object.keys(VALID_BODIES)).toContain(`${route.method} ${route.path}`);
  });

  test("another tenant's nsid answers exactly like a missing one: 404 not_found", async () => {
    for (const route of routes) {
      const foreign = await attempt(route, bob.namespaceId, alice.apiKey);
      const missing = await attempt(route, "ns_doesnotexist00", alice.apiKey);
      expect({ route, status: foreign.status, body: foreign.body }).toEqual({ route, status: 404, body: missing.body });
      expect(missing.status).toBe(404);
    }
    // And nothing of Bob's was touched.
    const bobs = await server.api("GET", "/v1/namespaces", { token: bob.apiKey });
    expect(bobs.body.data).toHaveLength(2);
  });

  test("a namespace-baked credential gets 404 for its own account's other namespaces", async () => {
    const other = await server.api("POST", "/v1/namespaces", { token: alice.apiKey, body: { name: "other" } });
    const bound = await server.mintKey(alice.apiKey, ["keys:read", "keys:write", "namespace:read", "usage:read", "policy:read", "policy:write", "routing_preset:read", "routing_preset:write", "clients:read"], alice.namespaceId);
    // Deleting a namespace and writing OAuth clients take control-plane scopes, which a
    // namespace-baked key never holds (403 before any namespace is looked at).
    const controlPlane = (r: { method: string; path: string }) => r.path.endsWith("/v1/namespaces/{nsid}") || (r.method !== "GET" && r.path.includes("/oauth/clients"));
    for (const route of routes.filter((r) => !controlPlane(r))) {
      expect({ route, status: (await attempt(route, other.body.id, bound)).status }).toEqual({ route, status: 404 });
    }
    // ...while its own namespace, by id and as `me`, works.
    expect((await server.api("GET", `/v1/namespaces/${alice.namespaceId}/keys`, { token: bound })).status).toBe(200);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: bound })).status).toBe(200);
  });

  test("an archived namespace is 404 on every route", async () => {
    const gone = await server.api("POST", "/v1/namespaces", { token: alice.apiKey, body: { name: "gone" } });
    expect((await server.api("DELETE", `/v1/namespaces/${gone.body.id}`, { token: alice.apiKey })).status).toBe(200);
    for (const route of routes) expect({ route, status: (await attempt(route, gone.body.id, alice.apiKey)).status }).toEqual({ route, status: 404 });
  });

  test("another tenant's key id is 404 under the caller's own namespace", async () => {
    const bobKey = await server.api("POST", "/v1/keys", { token: bob.apiKey, body: { display_name: "b", scopes: ["keys:read"] } });
    const response = await server.api("DELETE", `/v1/namespaces/${alice.namespaceId}/keys/${bobKey.body.id}`, { token: alice.apiKey });
    expect(response.status).toBe(404);
    expect((await server.api("GET", "/v1/keys", { token: bobKey.body.token })).status).toBe(200);
  });
});

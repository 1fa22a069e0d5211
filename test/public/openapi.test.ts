import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../support/test-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Routes anyone may call: no credential, so no scope. */
const PUBLIC = new Set(["/v1/models", "/v1/providers", "/v1/stats/usage", "/v1/byok/encryption-pubkey"]);

test("every credentialed /v1 route in the OpenAPI document names its scope in x-scope, the identity routes included", async () => {
  const spec = await server.api("GET", "/openapi/json");
  const paths = spec.body.paths as Record<string, Record<string, { "x-scope"?: string }>>;
  const missing: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith("/v1/") || PUBLIC.has(path) || path.startsWith("/v1/models/")) continue;
    for (const [method, operation] of Object.entries(item)) if (!operation["x-scope"]) missing.push(`${method.toUpperCase()} ${path}`);
  }
  expect(missing).toEqual([]);
  for (const [path, method, scope] of [
    ["/v1/account", "get", "user:read"],
    ["/v1/account", "patch", "user:write"],
    ["/v1/account", "delete", "user:write"],
    ["/v1/oauth/clients", "post", "clients:write"],
    ["/v1/namespaces/{nsid}/oauth/clients/{id}", "put", "clients:write"],
    ["/v1/namespaces/{nsid}/oauth/tokens", "get", "keys:read"],
  ] as const) {
    expect({ path, method, scope: paths[path]?.[method]?.["x-scope"] }).toEqual({ path, method, scope });
  }
  for (const path of ["/.well-known/oauth-authorization-server", "/oauth/device_authorization", "/oauth/token", "/oauth/revoke", "/oauth/device/decision"]) {
    expect(Object.keys(paths)).toContain(path);
  }
});

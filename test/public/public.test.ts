import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestDatabase } from "../support/test-database";
import { startTestServer, type TestServer } from "../support/test-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("public endpoints", () => {
  test("GET /ping is 200 with an empty body and needs no credential", async () => {
    const response = await server.api("GET", "/ping");
    expect(response.status).toBe(200);
    expect(response.text).toBe("");
  });

  test("GET /health reports ok with a reachable database", async () => {
    const response = await server.api("GET", "/health");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: "ok", database: "ok" });
  });

  test("GET /health is 503 when the database is gone", async () => {
    const database = await createTestDatabase();
    const doomed = await startTestServer({}, database);
    await database.drop(); // `with (force)` terminates the server's connections
    const response = await doomed.api("GET", "/health");
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ status: "degraded", database: "unreachable" });
    await doomed.server.shutdown().catch(() => {});
  });

  test("GET /metrics exposes request counts by route and status, latency histograms and in-flight", async () => {
    await server.api("GET", "/v1/namespaces");
    await server.api("GET", "/ping");
    const response = await server.api("GET", "/metrics");
    expect(response.headers.get("content-type")).toContain("text/plain");
    expect(response.text).toContain('switchyard_http_requests_total{route="/v1/namespaces",method="GET",status="401"} 1');
    expect(response.text).toMatch(/switchyard_http_request_duration_seconds_bucket\{route="\/ping",method="GET",le="\+Inf"\} \d+/);
    expect(response.text).toContain("# TYPE switchyard_http_requests_in_flight gauge");
    // Every non-comment line is `name{labels} number`.
    for (const line of response.text.split("\n").filter((l) => l && !l.startsWith("#"))) {
      expect(line).toMatch(/^[a-z_]+(\{.*\})? -?[0-9.e+]+$/);
    }
  });

  test("GET /metrics counts the status actually sent: an unknown path's 404, a handler's own error answer, a body refused before routing, a thrown error", async () => {
    expect((await server.api("GET", "/no/such/path")).status).toBe(404);
    expect((await server.api("GET", "/docs/assets/not-an-asset.js")).status).toBe(404);
    const token = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=password",
    });
    expect(token.status).toBe(400);
    const tooLarge = await fetch(`${server.url}/v1/namespaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(server.server.services.config.maxManagementBodyBytes + 1),
    });
    expect(tooLarge.status).toBe(413);
    expect((await server.api("GET", "/v1/stats/usage?days=abc")).status).toBe(400);
    const metrics = (await server.api("GET", "/metrics")).text;
    const requests = metrics.split("\n").filter((line) => line.startsWith("switchyard_http_requests_total{"));
    expect(requests).toContain('switchyard_http_requests_total{route="unmatched",method="GET",status="404"} 1');
    expect(requests.filter((line) => line.includes('route="unmatched"') && line.includes('status="200"'))).toEqual([]);
    expect(metrics).toMatch(/switchyard_http_requests_total\{route="\/docs\/assets\/:file",method="GET",status="404"\} \d+/);
    expect(requests).toContain('switchyard_http_requests_total{route="/oauth/token",method="POST",status="400"} 1');
    expect(requests.filter((line) => line.includes('route="/oauth/token"') && line.includes('status="200"'))).toEqual([]);
    // Refused from its Content-Length before Elysia matched a route: counted, and no longer in flight.
    expect(requests).toContain('switchyard_http_requests_total{route="refused",method="POST",status="413"} 1');
    expect(metrics).toContain("switchyard_http_requests_in_flight 1\n"); // the /metrics request itself
    // An error thrown by a handler (here a 400 for a malformed query) keeps its status.
    expect(requests).toContain('switchyard_http_requests_total{route="/v1/stats/usage",method="GET",status="400"} 1');
  });

  test("inference paths (served by Bun's router, not Elysia) keep the metrics and the body limit; other methods on them reach Elysia", async () => {
    const unauthorized = await server.api("POST", "/v1/chat/completions", { body: { model: "x/y", messages: [] } });
    expect(unauthorized.status).toBe(401);
    const google = await server.api("POST", "/v1beta/models/x%2Fy:generateContent", { body: { contents: [] } });
    expect(google.status).toBe(401);
    expect(google.body.error.status).toBe("UNAUTHENTICATED");
    const tooLarge = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(server.server.services.config.maxInferenceBodyBytes + 1),
    });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ type: "error", error: { type: "request_too_large" } });
    const get = await server.api("GET", "/v1/chat/completions");
    expect(get.status).toBe(404);
    expect(get.body.error).toBe("not_found");
    const metrics = (await server.api("GET", "/metrics")).text;
    expect(metrics).toContain('switchyard_http_requests_total{route="/v1/chat/completions",method="POST",status="401"} 1');
    expect(metrics).toContain('switchyard_http_requests_total{route="/v1beta/models/*",method="POST",status="401"} 1');
    expect(metrics).toContain('switchyard_http_requests_total{route="/v1/messages",method="POST",status="413"} 1');
    expect(metrics).toMatch(/switchyard_http_request_duration_seconds_count\{route="\/v1\/chat\/completions",method="POST"\} 1\n/);
    expect(metrics).toContain("switchyard_http_requests_in_flight 1\n"); // the /metrics request itself
  });

  test("without METRICS_TOKEN, /metrics needs no credential and ignores one", async () => {
    expect((await server.api("GET", "/metrics")).status).toBe(200);
    expect((await server.api("GET", "/metrics", { token: "anything" })).status).toBe(200);
  });

  test("the OpenAPI 3.1 document lists every route, with its scope", async () => {
    const response = await server.api("GET", "/openapi/json");
    expect(response.status).toBe(200);
    expect(response.body.openapi).toMatch(/^3\.1/);
    const paths = response.body.paths as Record<string, Record<string, any>>;
    const listed = new Set(Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    for (const route of [
      "GET /ping", "GET /health", "GET /metrics", "GET /v1/namespaces", "POST /v1/namespaces", "DELETE /v1/namespaces/{nsid}",
      "GET /v1/namespaces/{nsid}/keys", "POST /v1/namespaces/{nsid}/keys", "DELETE /v1/namespaces/{nsid}/keys/{id}",
      "GET /v1/keys", "POST /v1/keys", "DELETE /v1/keys/{id}", "POST /admin/accounts", "POST /admin/accounts/{account_id}/credits",
    ]) expect(listed).toContain(route);
    expect(paths["/v1/namespaces/{nsid}/keys"]!.post["x-scope"]).toBe("keys:write");
    expect(paths["/v1/namespaces"]!.get["x-scope"]).toBe("namespace:read");
    expect(paths["/v1/keys"]!.post.requestBody.content["application/json"].schema.properties.scopes.type).toBe("array");
  });

  test("the documentation page and all its assets are served by Switchyard itself", async () => {
    const page = await server.api("GET", "/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      expect(asset.startsWith("/")).toBe(true); // no CDN, no other origin
      expect((await server.api("GET", asset)).status).toBe(200);
    }
    const script = await server.api("GET", "/docs/assets/docs.js");
    expect(script.text).not.toMatch(/https?:\/\//);
    expect((await server.api("GET", "/docs/assets/secret.env")).status).toBe(404);
  });

  test("a documentation asset named by an Object.prototype member is the 404 of a missing one", async () => {
    const missing = await server.api("GET", "/docs/assets/secret.env");
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf"]) {
      const response = await server.api("GET", `/docs/assets/${name}`);
      expect({ name, status: response.status, body: response.text }).toEqual({ name, status: 404, body: missing.text });
    }
  });
});

describe("METRICS_TOKEN", () => {
  const METRICS_TOKEN = "scrape-secret-0123456789";
  let guarded: TestServer;
  beforeAll(async () => {
    guarded = await startTestServer({ metricsToken: METRICS_TOKEN });
  });
  afterAll(() => guarded.close());

  async function scrape(headers: Record<string, string>) {
    const response = await fetch(`${guarded.url}/metrics`, { headers });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  test("/metrics answers Authorization: Bearer <METRICS_TOKEN> and nothing else, with the 401 of the other auth errors", async () => {
    const refusals: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token" },
      { authorization: `Bearer ${METRICS_TOKEN}x` },
      { authorization: `Bearer ${METRICS_TOKEN.slice(0, -1)}` },
      { authorization: METRICS_TOKEN }, // no scheme
      { authorization: `Basic ${METRICS_TOKEN}` },
      { "x-api-key": METRICS_TOKEN },
    ];
    for (const headers of refusals) {
      const response = await scrape(headers);
      expect({ headers, status: response.status }).toEqual({ headers, status: 401 });
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="switchyard"');
      const body = JSON.parse(response.text);
      expect(body.error).toBe("unauthorized");
      expect(body.error_description).toContain("METRICS_TOKEN");
      expect(response.text).not.toContain("switchyard_http_requests_total");
    }
    for (const authorization of [`Bearer ${METRICS_TOKEN}`, `bearer ${METRICS_TOKEN}`]) {
      const response = await scrape({ authorization });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/plain");
      expect(response.text).toContain('switchyard_http_requests_total{route="/metrics",method="GET",status="401"} 7');
    }
    // Everything else public stays public.
    expect((await guarded.api("GET", "/ping")).status).toBe(200);
  });
});

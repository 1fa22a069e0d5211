import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../../support/test-server";

let server: TestServer;
let alice: TestAccount;
let bob: TestAccount;
beforeAll(async () => {
  server = await startTestServer();
  alice = await server.createAccount();
  bob = await server.createAccount();
});
afterAll(() => server.close());

const ID = expect.stringMatching(/^rp_[a-z0-9]{16}$/);

async function create(account: TestAccount, body: Record<string, unknown>, base = `/v1/namespaces/${account.namespaceId}`) {
  const response = await server.api("POST", `${base}/routing-presets`, { token: account.apiKey, body });
  if (response.status !== 200) throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body as { id: string; name: string };
}

describe("routing presets: create, get, list, replace, delete", () => {
  test("create returns the exact envelope with defaults; get and list return the same", async () => {
    const ns = `/v1/namespaces/${alice.namespaceId}`;
    const created = await server.api("POST", `${ns}/routing-presets`, { token: alice.apiKey, body: { name: "support-bot" } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: ID, name: "support-bot", model: null, system_prompt: null, params: {}, routing: {}, disabled_at: null });
    const full = await server.api("POST", `${ns}/routing-presets`, {
      token: alice.apiKey,
      body: {
        name: "Full_1",
        model: "openai/gpt-4.1",
        system_prompt: "Be brief.",
        params: { temperature: 0.2, max_tokens: 300 },
        routing: { only: ["openai", "azure"], ignore: ["azure"], sort: "cost" },
      },
    });
    expect(full.body).toEqual({
      id: ID,
      name: "Full_1",
      model: "openai/gpt-4.1",
      system_prompt: "Be brief.",
      params: { temperature: 0.2, max_tokens: 300 },
      routing: { only: ["openai", "azure"], ignore: ["azure"], sort: "cost" },
      disabled_at: null,
    });
    expect((await server.api("GET", `${ns}/routing-presets/${full.body.id}`, { token: alice.apiKey })).body).toEqual(full.body);
    const listed = await server.api("GET", `${ns}/routing-presets`, { token: alice.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [created.body, full.body] });
  });

  test("PUT replaces the whole spec: omitted fields become null / empty, only an absent name is unchanged", async () => {
    const ns = `/v1/namespaces/${alice.namespaceId}`;
    const made = await create(alice, { name: "replace-me", model: "openai/gpt-4.1", system_prompt: "s", params: { top_p: 0.5 }, routing: { sort: "latency" } });
    const replaced = await server.api("PUT", `${ns}/routing-presets/${made.id}`, { token: alice.apiKey, body: { params: { seed: 7 } } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ id: made.id, name: "replace-me", model: null, system_prompt: null, params: { seed: 7 }, routing: {}, disabled_at: null });
    const renamed = await server.api("PUT", `${ns}/routing-presets/${made.id}`, { token: alice.apiKey, body: { name: "renamed", model: "anthropic/claude-sonnet-4.6" } });
    expect(renamed.body).toEqual({ id: made.id, name: "renamed", model: "anthropic/claude-sonnet-4.6", system_prompt: null, params: {}, routing: {}, disabled_at: null });
    const nullName = await server.api("PUT", `${ns}/routing-presets/${made.id}`, { token: alice.apiKey, body: { name: null } });
    expect(nullName.body.name).toBe("renamed");
    expect((await server.api("GET", `${ns}/routing-presets/${made.id}`, { token: alice.apiKey })).body).toEqual(nullName.body);
  });

  test("DELETE answers { deleted: true }, then the preset is a 404", async () => {
    const made = await create(alice, { name: "short-lived" });
    const path = `/v1/namespaces/${alice.namespaceId}/routing-presets/${made.id}`;
    expect(await server.api("DELETE", path, { token: alice.apiKey })).toMatchObject({ status: 200, body: { deleted: true } });
    for (const method of ["GET", "DELETE", "PUT"]) {
      const response = await server.api(method, path, { token: alice.apiKey, body: method === "PUT" ? {} : undefined });
      expect({ method, status: response.status, body: response.body }).toEqual({
        method,
        status: 404,
        body: { error: "not_found", error_description: "routing preset not found" },
      });
    }
  });

  test("disable and enable return the envelope, are idempotent, and the preset stays listed", async () => {
    const made = await create(alice, { name: "toggle", model: "openai/gpt-4.1" });
    const base = `/v1/namespaces/${alice.namespaceId}/routing-presets/${made.id}`;
    const disabled = await server.api("POST", `${base}/disable`, { token: alice.apiKey });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toEqual({ ...made, disabled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    const again = await server.api("POST", `${base}/disable`, { token: alice.apiKey });
    expect(again.body.disabled_at).toBe(disabled.body.disabled_at);
    const listed = await server.api("GET", `/v1/namespaces/${alice.namespaceId}/routing-presets`, { token: alice.apiKey });
    expect(listed.body.data).toContainEqual(disabled.body);
    const enabled = await server.api("POST", `${base}/enable`, { token: alice.apiKey });
    expect(enabled.body).toEqual({ ...made, disabled_at: null });
    expect((await server.api("POST", `${base}/enable`, { token: alice.apiKey })).body).toEqual(enabled.body);
  });
});

describe("routing presets: validation", () => {
  test("each bad field is a 400 naming it", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "has space" }, "name"],
      [{ name: "dot.ted" }, "name"],
      [{ name: "sla/sh" }, "name"],
      [{ name: "x".repeat(65) }, "name"],
      // A model "@__proto__" or "@-x" does not parse as a preset: such a name could never be used.
      [{ name: "__proto__" }, "name"],
      [{ name: "_x" }, "name"],
      [{ name: "-x" }, "name"],
      [{ name: 7 }, "name"],
      [{ name: "ok", model: "@other" }, "model"],
      [{ name: "ok", model: "openai/gpt-4.1:cost" }, "model"],
      [{ name: "ok", model: "openai//gpt" }, "model"],
      [{ name: "ok", model: 5 }, "model"],
      [{ name: "ok", system_prompt: 5 }, "system_prompt"],
      [{ name: "ok", params: [] }, "params"],
      [{ name: "ok", params: { model: "openai/gpt-4.1" } }, "params.model"],
      [{ name: "ok", params: { messages: [] } }, "params.messages"],
      [{ name: "ok", params: { stream: true } }, "params.stream"],
      [{ name: "ok", params: { temperature: "hot" } }, "params.temperature"],
      [{ name: "ok", params: { max_tokens: 0 } }, "params.max_tokens"],
      [{ name: "ok", params: { bogus: 1 } }, "params.bogus"],
      [{ name: "ok", routing: { only: [] } }, "routing.only"],
      [{ name: "ok", routing: { only: "openai" } }, "routing.only"],
      [{ name: "ok", routing: { ignore: [""] } }, "routing.ignore"],
      [{ name: "ok", routing: { sort: "fastest" } }, "routing.sort"],
      [{ name: "ok", routing: { prefer: ["openai"] } }, "routing.prefer"],
      [{ name: "ok", fallbacks: [] }, "fallbacks"],
    ];
    for (const [body, field] of cases) {
      const response = await server.api("POST", "/v1/routing-presets", { token: alice.apiKey, body });
      expect({ body, status: response.status, error: response.body.error }).toEqual({ body, status: 400, error: "bad_request" });
      expect({ body, description: response.body.error_description }).toEqual({ body, description: expect.stringContaining(field) });
    }
    const made = await create(alice, { name: "valid-put" });
    const badPut = await server.api("PUT", `/v1/routing-presets/${made.id}`, { token: alice.apiKey, body: { params: { stream: false } } });
    expect(badPut.status).toBe(400);
    expect(badPut.body.error_description).toContain("params.stream");
    const badName = await server.api("PUT", `/v1/routing-presets/${made.id}`, { token: alice.apiKey, body: { name: "no spaces" } });
    expect(badName.status).toBe(400);
    // Nothing was written by a refused request.
    expect((await server.api("GET", `/v1/routing-presets/${made.id}`, { token: alice.apiKey })).body).toEqual({ ...made, disabled_at: null });
  });

  test("params keys that name Object.prototype members are a 400 naming the key, on create and on replace", async () => {
    const made = await create(alice, { name: "prototype-keys" });
    for (const key of ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf"]) {
      // As text: an object literal with a __proto__ key would set the prototype instead of a property.
      const rawBody = `{"name":"proto-${key.replace(/_/g, "u")}","params":{${JSON.stringify(key)}:{"temperature":1}}}`;
      const created = await server.api("POST", "/v1/routing-presets", { token: alice.apiKey, rawBody });
      expect({ key, status: created.status, error: created.body?.error }).toEqual({ key, status: 400, error: "bad_request" });
      expect({ key, description: created.body.error_description }).toEqual({ key, description: expect.stringContaining(`params.${key} is not a generation parameter`) });
      const replaced = await server.api("PUT", `/v1/routing-presets/${made.id}`, { token: alice.apiKey, rawBody: `{"params":{${JSON.stringify(key)}:1}}` });
      expect({ key, status: replaced.status, error: replaced.body?.error }).toEqual({ key, status: 400, error: "bad_request" });
    }
    expect((await server.api("GET", `/v1/routing-presets/${made.id}`, { token: alice.apiKey })).body).toEqual({ ...made, disabled_at: null });
  });

  test("a duplicate name in the namespace is a 409, on create and on rename; another namespace may reuse it", async () => {
    await create(alice, { name: "dup" });
    const again = await server.api("POST", "/v1/routing-presets", { token: alice.apiKey, body: { name: "dup", model: "openai/gpt-4.1" } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "conflict", error_description: 'a routing preset named "dup" already exists in this namespace' });
    const other = await create(alice, { name: "other" });
    const rename = await server.api("PUT", `/v1/routing-presets/${other.id}`, { token: alice.apiKey, body: { name: "dup" } });
    expect(rename.status).toBe(409);
    // Bob's namespace is another namespace.
    await create(bob, { name: "dup" });
  });
});

describe("routing presets: scopes, isolation and the flat form", () => {
  test("read needs routing_preset:read, writes need routing_preset:write", async () => {
    const made = await create(alice, { name: "scoped" });
    const reader = await server.mintKey(alice.apiKey, ["routing_preset:read"]);
    const writer = await server.mintKey(alice.apiKey, ["routing_preset:write"]);
    const none = await server.mintKey(alice.apiKey, ["inference:invoke"]);
    const path = `/v1/routing-presets/${made.id}`;
    expect((await server.api("GET", "/v1/routing-presets", { token: reader })).status).toBe(200);
    expect((await server.api("GET", path, { token: reader })).status).toBe(200);
    for (const [method, target, body] of [
      ["POST", "/v1/routing-presets", { name: "nope" }],
      ["PUT", path, {}],
      ["DELETE", path, undefined],
      ["POST", `${path}/disable`, undefined],
      ["POST", `${path}/enable`, undefined],
    ] as const) {
      const refused = await server.api(method, target, { token: reader, body });
      expect({ method, target, status: refused.status, body: refused.body }).toEqual({
        method,
        target,
        status: 403,
        body: { error: "forbidden", error_description: "missing required scope: routing_preset:write" },
      });
    }
    for (const target of ["/v1/routing-presets", path]) {
      const refused = await server.api("GET", target, { token: none });
      expect(refused.body).toEqual({ error: "forbidden", error_description: "missing required scope: routing_preset:read" });
    }
    expect((await server.api("POST", `${path}/disable`, { token: writer })).status).toBe(200);
    expect((await server.api("GET", path, { token: writer })).status).toBe(403);
  });

  test("another tenant's preset is a 404, by id and in lists; nothing of theirs changes", async () => {
    const bobs = await create(bob, { name: "bobs", model: "openai/gpt-4.1" });
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["PUT", "", { name: "stolen" }],
      ["DELETE", "", undefined],
      ["POST", "/disable", undefined],
      ["POST", "/enable", undefined],
    ] as const) {
      for (const base of ["/v1", `/v1/namespaces/${alice.namespaceId}`]) {
        const response = await server.api(method, `${base}/routing-presets/${bobs.id}${suffix}`, { token: alice.apiKey, body });
        expect({ method, base, status: response.status, body: response.body }).toEqual({
          method,
          base,
          status: 404,
          body: { error: "not_found", error_description: "routing preset not found" },
        });
      }
    }
    const foreignNs = await server.api("GET", `/v1/namespaces/${bob.namespaceId}/routing-presets`, { token: alice.apiKey });
    expect(foreignNs.status).toBe(404);
    const alices = await server.api("GET", "/v1/routing-presets", { token: alice.apiKey });
    expect(alices.body.data.map((p: { id: string }) => p.id)).not.toContain(bobs.id);
    expect((await server.api("GET", `/v1/routing-presets/${bobs.id}`, { token: bob.apiKey })).body).toEqual({ ...bobs, disabled_at: null });
  });

  test("the flat form and /namespaces/me act in the credential's own namespace", async () => {
    const made = await create(alice, { name: "flat" }, "/v1");
    for (const base of ["/v1", "/v1/namespaces/me", `/v1/namespaces/${alice.namespaceId}`]) {
      const got = await server.api("GET", `${base}/routing-presets/${made.id}`, { token: alice.apiKey });
      expect({ base, body: got.body }).toEqual({ base, body: { ...made, disabled_at: null } });
    }
  });

  test("a malformed id is the 404 of a missing one", async () => {
    for (const id of ["pol_abc", "rp_", "%F0%9F%98%80", "x".repeat(300)]) {
      const response = await server.api("GET", `/v1/routing-presets/${id}`, { token: alice.apiKey });
      expect({ id, status: response.status, body: response.body }).toEqual({ id, status: 404, body: { error: "not_found", error_description: "routing preset not found" } });
    }
  });

  test("every routing-preset route is in /openapi/json with its x-scope, in both forms", async () => {
    const spec = await server.api("GET", "/openapi/json");
    const expected: Array<[string, string, string]> = [
      ["get", "/routing-presets", "routing_preset:read"],
      ["post", "/routing-presets", "routing_preset:write"],
      ["get", "/routing-presets/{id}", "routing_preset:read"],
      ["put", "/routing-presets/{id}", "routing_preset:write"],
      ["delete", "/routing-presets/{id}", "routing_preset:write"],
      ["post", "/routing-presets/{id}/disable", "routing_preset:write"],
      ["post", "/routing-presets/{id}/enable", "routing_preset:write"],
    ];
    for (const [method, path, scope] of expected) {
      for (const base of ["/v1", "/v1/namespaces/{nsid}"]) {
        expect({ route: `${method} ${base}${path}`, scope: spec.body.paths[`${base}${path}`]?.[method]?.["x-scope"] }).toEqual({ route: `${method} ${base}${path}`, scope });
      }
    }
  });
});

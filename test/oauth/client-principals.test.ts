import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import type { TestAccount } from "../support/test-server";
import { DEVICE_GRANT, decide, deviceTokens, pollDevice, postForm } from "./oauth-support";
import { callThroughSdk, CLIENTS } from "../policy-enforcement/enforcement-support";

/**
 * Registered clients through the authorization server: a client registered with
 * `POST …/oauth/clients` runs the device flow with its own client_id, its grants are
 * listed under `…/oauth/tokens` with its name, and policies bound to the client or to
 * one grant govern the inference requests made with its tokens.
 */
let harness: InferenceHarness;
let account: TestAccount;
beforeAll(async () => {
  harness = await startInferenceHarness();
  account = await harness.server.createAccount(undefined, 100_000_000);
});
afterAll(() => harness.close());

const api = (method: string, path: string, body?: unknown) => harness.server.api(method, path, { token: account.apiKey, body });

async function registerDeviceClient(name: string) {
  const response = await api("POST", "/v1/oauth/clients", { client_name: name, client_type: "public", allowed_grant_types: [DEVICE_GRANT, "refresh_token"], allowed_scopes: ["inference:invoke", "usage:read"] });
  expect(response.status).toBe(200);
  return response.body as { id: string; client_id: string };
}

async function tokenFor(clientId: string) {
  const started = await postForm(harness.server, "/oauth/device_authorization", { client_id: clientId, scope: "inference:invoke usage:read keys:read" });
  expect(started.status).toBe(200);
  expect((await decide(harness.server, account.apiKey, started.body.user_code, account.namespaceId)).status).toBe(200);
  const tokens = await pollDevice(harness.server, started.body.device_code, clientId);
  expect(tokens.status).toBe(200);
  return tokens.body as { access_token: string; scope: string };
}

async function chat(token: string): Promise<number> {
  const client = new OpenAI({ apiKey: token, baseURL: `${harness.server.url}/v1`, maxRetries: 0 });
  try {
    await client.chat.completions.create({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

async function bindRateLimit(principalType: string, principalId: string) {
  const policy = await api("POST", "/v1/policies", { name: `one per minute ${principalId}`, kind: "rate_limit", spec: { window_secs: 60, max_requests: 1 } });
  expect(policy.status).toBe(200);
  expect((await api("POST", `/v1/policies/${policy.body.id}/bind`, { principal_type: principalType, principal_id: principalId })).status).toBe(200);
}

describe("registered OAuth clients", () => {
  test("a registered client's token carries only the client's allowed scopes, and its grant is listed with the client's name", async () => {
    const client = await registerDeviceClient("Dashboard");
    const tokens = await tokenFor(client.client_id);
    expect(tokens.scope.split(" ").sort()).toEqual(["inference:invoke", "usage:read"]);
    const grants = await api("GET", "/v1/oauth/tokens");
    expect(grants.body.data).toContainEqual(expect.objectContaining({ client_id: client.client_id, client_name: "Dashboard", scopes: ["inference:invoke", "usage:read"] }));
  });

  test("a policy bound to the client governs every token issued to it, and no other credential", async () => {
    const client = await registerDeviceClient("Rate-limited app");
    const [first, second] = [await tokenFor(client.client_id), await tokenFor(client.client_id)];
    await bindRateLimit("oauth_client", client.id);
    expect(await chat(first.access_token)).toBe(200);
    // The second grant shares the client's limit.
    expect(await chat(second.access_token)).toBe(429);
    // The account's own key is not bound.
    expect(await chat(account.apiKey)).toBe(200);
  });

  test("a policy bound to one grant governs that grant only; revoking the grant ends its token at once", async () => {
    const client = await registerDeviceClient("Per-grant app");
    const [limited, free] = [await tokenFor(client.client_id), await tokenFor(client.client_id)];
    const grants = (await api("GET", "/v1/oauth/tokens")).body.data.filter((grant: { client_id: string }) => grant.client_id === client.client_id);
    expect(grants).toHaveLength(2);
    // Listed oldest first: the first grant is `limited`'s.
    const limitedGrant = grants[0].id;
    await bindRateLimit("oauth_token", limitedGrant);
    expect([await chat(limited.access_token), await chat(limited.access_token), await chat(free.access_token), await chat(free.access_token)]).toEqual([200, 429, 200, 200]);
    expect((await api("DELETE", `/v1/oauth/tokens/${limitedGrant}`)).body).toEqual({ revoked: true });
    expect(await chat(limited.access_token)).toBe(401);
    expect(await chat(free.access_token)).toBe(200);
  });

  test("deleting the client revokes its tokens at once", async () => {
    const client = await registerDeviceClient("Short-lived app");
    const tokens = await tokenFor(client.client_id);
    expect(await chat(tokens.access_token)).toBe(200);
    expect((await api("DELETE", `/v1/oauth/clients/${client.id}`)).body).toEqual({ deleted: true });
    expect(await chat(tokens.access_token)).toBe(401);
    const refreshed = await postForm(harness.server, "/oauth/token", { grant_type: "refresh_token", refresh_token: "x", client_id: client.client_id });
    expect({ status: refreshed.status, error: refreshed.body.error }).toEqual({ status: 400, error: "invalid_client" });
  });
});

describe("a token and the policies that bind it", () => {
  test("a token with policy:write cannot disable, change or delete a policy bound to its grant or its client", async () => {
    const created = await api("POST", "/v1/oauth/clients", {
      client_name: "Policy tool",
      client_type: "public",
      allowed_grant_types: [DEVICE_GRANT, "refresh_token"],
      allowed_scopes: ["inference:invoke", "policy:read", "policy:write"],
    });
    expect(created.status).toBe(200);
    const started = await postForm(harness.server, "/oauth/device_authorization", { client_id: created.body.client_id, scope: "inference:invoke policy:read policy:write" });
    expect((await decide(harness.server, account.apiKey, started.body.user_code, account.namespaceId)).status).toBe(200);
    const tokens = await pollDevice(harness.server, started.body.device_code, created.body.client_id);
    const token = tokens.body.access_token as string;
    const grantId = (await harness.server.server.services.credentials.resolve(token))!.id;

    for (const [principalType, principalId] of [["oauth_client", created.body.id], ["oauth_token", grantId]] as const) {
      const policy = await api("POST", "/v1/policies", { name: `bound to ${principalType}`, kind: "budget", spec: { window: "day", limit_micro_usd: 1_000_000 } });
      expect((await api("POST", `/v1/policies/${policy.body.id}/bind`, { principal_type: principalType, principal_id: principalId })).status).toBe(200);
      const as = (method: string, path: string, body?: unknown) => harness.server.api(method, path, { token, body });
      expect((await as("POST", `/v1/policies/${policy.body.id}/disable`)).status).toBe(403);
      expect((await as("PUT", `/v1/policies/${policy.body.id}`, { spec: { window: "day", limit_micro_usd: 9_000_000 } })).status).toBe(403);
      expect((await as("DELETE", `/v1/policies/${policy.body.id}`)).status).toBe(403);
      expect((await api("GET", `/v1/policies/${policy.body.id}`)).body).toMatchObject({ disabled_at: null, spec: { limit_micro_usd: 1_000_000 } });
    }
    // A policy that binds neither stays the token's to manage.
    const free = await api("POST", "/v1/policies", { name: "unbound", kind: "budget", spec: { window: "day", limit_micro_usd: 1_000_000 } });
    expect((await harness.server.api("POST", `/v1/policies/${free.body.id}/disable`, { token })).status).toBe(200);
  });
});

describe("keys minted with a client's token", () => {
  test("answer to the policies bound to the client and to the grant", async () => {
    const created = await api("POST", "/v1/oauth/clients", {
      client_name: "Key minter",
      client_type: "public",
      allowed_grant_types: [DEVICE_GRANT, "refresh_token"],
      allowed_scopes: ["inference:invoke", "keys:write"],
    });
    const started = await postForm(harness.server, "/oauth/device_authorization", { client_id: created.body.client_id, scope: "inference:invoke keys:write" });
    expect((await decide(harness.server, account.apiKey, started.body.user_code, account.namespaceId)).status).toBe(200);
    const tokens = await pollDevice(harness.server, started.body.device_code, created.body.client_id);
    const token = tokens.body.access_token as string;
    const mint = () => harness.server.api("POST", "/v1/keys", { token, body: { display_name: "minted", scopes: ["inference:invoke"] } });

    await bindRateLimit("oauth_client", created.body.id);
    const viaClient = await mint();
    expect(viaClient.status).toBe(200);
    expect(await chat(viaClient.body.token)).toBe(200);
    expect(await chat(viaClient.body.token)).toBe(429);

    const grantId = (await harness.server.server.services.credentials.resolve(token))!.id;
    const other = await mint();
    const policy = await api("POST", "/v1/policies", { name: "grant guardrail", kind: "guardrail", spec: { model_deny: ["mock-openai/gpt-4o-mini"] } });
    expect((await api("POST", `/v1/policies/${policy.body.id}/bind`, { principal_type: "oauth_token", principal_id: grantId })).status).toBe(200);
    expect(await chat(other.body.token)).toBe(403);
  });
});

describe("a bra_ token through every official SDK", () => {
  for (const client of CLIENTS) {
    for (const stream of [false, true]) {
      test(`${client} ${stream ? "stream" : "sync"}: answered, and the request is recorded in the grant's namespace`, async () => {
        const tokens = await deviceTokens(harness.server, account.apiKey, account.namespaceId, "inference:invoke usage:read");
        const seen = await callThroughSdk(harness, client, tokens.access_token, "mock-openai/gpt-4o-mini", { stream });
        expect(seen).toMatchObject({ ok: true });
      });
    }
  }

  test("a token without inference:invoke is refused in each protocol's own shape", async () => {
    const tokens = await deviceTokens(harness.server, account.apiKey, account.namespaceId, "usage:read");
    for (const client of CLIENTS) {
      const seen = await callThroughSdk(harness, client, tokens.access_token, "mock-openai/gpt-4o-mini", { stream: false });
      expect({ client, seen }).toMatchObject({ client, seen: { ok: false, status: 403 } });
    }
  });
});

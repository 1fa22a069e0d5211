import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import type { TestServer } from "../support/test-server";
import { CLI, decide, deviceTokens, pollDevice, postForm, startDevice } from "./oauth-support";

/**
 * The device flow end to end over real HTTP, as the CLI drives it: device authorization,
 * polling (pending, slow_down), approval through the decision API with the account-wide
 * key the operator created, the `bra_` token on inference (the official OpenAI SDK) and
 * on management routes, refresh rotation, reuse detection and revocation.
 */
let harness: InferenceHarness;
let server: TestServer;
beforeAll(async () => {
  harness = await startInferenceHarness();
  server = harness.server;
});
afterAll(() => harness.close());

const CLI_DEFAULT = "inference:invoke usage:read keys:read keys:write billing:read policy:read policy:write byok:read byok:write namespace:read";
const chat = (token: string) =>
  new OpenAI({ apiKey: token, baseURL: `${server.url}/v1`, maxRetries: 0 }).chat.completions.create({
    model: "mock-openai/gpt-4o-mini",
    messages: [{ role: "user", content: "hello" }],
  });
const sql = () => server.server.services.db.sql;

describe("discovery", () => {
  test("the metadata names every endpoint as an absolute URL on PUBLIC_URL", async () => {
    const response = await server.api("GET", "/.well-known/oauth-authorization-server");
    expect(response.status).toBe(200);
    const base = server.server.services.config.publicUrl;
    expect(response.body).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      device_authorization_endpoint: `${base}/oauth/device_authorization`,
      revocation_endpoint: `${base}/oauth/revoke`,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code"],
    });
    expect(response.body.grant_types_supported.sort()).toEqual(["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"]);
    expect(response.body.token_endpoint_auth_methods_supported).toContain("client_secret_basic");
    expect(response.body.scopes_supported).toContain("inference:invoke");
  });
});

describe("device authorization", () => {
  test("user codes are XXXX-XXXX of the 20 consonants; the verification URIs are on PUBLIC_URL", async () => {
    const base = server.server.services.config.publicUrl;
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const device = await startDevice(server);
      expect(device.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      for (const letter of device.user_code.replace("-", "")) seen.add(letter);
      expect(device.verification_uri).toBe(`${base}/oauth/device`);
      expect(device.verification_uri_complete).toBe(`${base}/oauth/device?user_code=${device.user_code}`);
      expect(device.expires_in).toBe(600);
      expect(device.interval).toBe(5);
      expect(device.device_code.length).toBeGreaterThanOrEqual(43);
    }
    // 240 letters drawn: every consonant shows up (a vowel or a digit never does).
    expect([...seen].sort().join("")).toBe("BCDFGHJKLMNPQRSTVWXZ");
  });

  test("unknown client, unknown scope, and nothing grantable are refused", async () => {
    const unknown = await postForm(server, "/oauth/device_authorization", { client_id: "brc_nobody" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe("invalid_client");
    const badScope = await postForm(server, "/oauth/device_authorization", { client_id: CLI, scope: "inference:invoke telepathy:read" });
    expect(badScope.body.error).toBe("invalid_scope");
    const controlOnly = await postForm(server, "/oauth/device_authorization", { client_id: CLI, scope: "user:write namespace:write" });
    expect(controlOnly.body.error).toBe("invalid_scope");
    const missing = await postForm(server, "/oauth/device_authorization", {});
    expect(missing.body.error).toBe("invalid_request");
  });
});

describe("the device flow end to end", () => {
  test("pending, slow_down (the interval grows by 5 s and is stored), approval, tokens that work where keys do", async () => {
    const { account } = harness;
    const device = await startDevice(server);
    const first = await pollDevice(server, device.device_code);
    expect(first.status).toBe(400);
    expect(first.body.error).toBe("authorization_pending");
    const tooSoon = await pollDevice(server, device.device_code);
    expect(tooSoon.status).toBe(400);
    expect(tooSoon.body.error).toBe("slow_down");
    const [row] = await sql()<{ interval_secs: number }[]>`select interval_secs from oauth_device_codes where user_code = ${device.user_code}`;
    expect(row!.interval_secs).toBe(10);
    // Polled again after the grown interval: pending, not slow_down.
    await sql()`update oauth_device_codes set last_polled_at = now() - interval '11 seconds' where user_code = ${device.user_code}`;
    expect((await pollDevice(server, device.device_code)).body.error).toBe("authorization_pending");

    // The decision API takes the code in any case, dash optional.
    const approved = await decide(server, account.apiKey, device.user_code.toLowerCase().replace("-", ""), account.namespaceId);
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({ status: "approved" });

    const tokens = await pollDevice(server, device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get("cache-control")).toBe("no-store");
    expect(Object.keys(tokens.body).sort()).toEqual(["access_token", "account_id", "expires_in", "namespace_id", "refresh_token", "refresh_token_expires_in", "scope", "token_type"]);
    expect(tokens.body.access_token).toMatch(/^bra_[A-Za-z0-9_-]{43,}$/);
    expect(tokens.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, refresh_token_expires_in: 30 * 24 * 3600, scope: CLI_DEFAULT, namespace_id: account.namespaceId, account_id: account.accountId });
    // Only hashes are stored.
    const [stored] = await sql()<{ count: number }[]>`select count(*)::int as count from oauth_tokens where access_token_hash = ${Buffer.from(tokens.body.access_token)} or refresh_token_hash = ${Buffer.from(tokens.body.refresh_token)}`;
    expect(stored!.count).toBe(0);

    // The device code worked once.
    const again = await pollDevice(server, device.device_code);
    expect(again.body.error).toBe("invalid_grant");
    // And the user code cannot be decided again.
    const redecided = await decide(server, account.apiKey, device.user_code, account.namespaceId);
    expect(redecided.status).toBe(400);
    expect(redecided.body.error).toBe("invalid_request");

    // Inference through the official SDK with the bra_ token as its API key.
    const answer = await chat(tokens.body.access_token);
    expect(answer.choices[0]!.message.content).toBeTruthy();
    // Management: bound to its namespace and its scopes.
    const keys = await server.api("GET", "/v1/namespaces/me/keys", { token: tokens.body.access_token });
    expect(keys.status).toBe(200);
    const own = await server.api("GET", `/v1/namespaces/${account.namespaceId}/keys`, { token: tokens.body.access_token });
    expect(own.status).toBe(200);
    const other = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "second" } });
    const elsewhere = await server.api("GET", `/v1/namespaces/${other.body.id}/keys`, { token: tokens.body.access_token });
    expect(elsewhere.status).toBe(404);
    const unheld = await server.api("POST", "/v1/namespaces", { token: tokens.body.access_token, body: { name: "third" } });
    expect(unheld.status).toBe(403);
    expect(unheld.body.error_description).toBe("missing required scope: namespace:write");
    // last_used_at is kept for grants the batched way keys get it.
    await server.server.services.lastUsed.flush();
    const [used] = await sql()<{ last_used_at: Date | null }[]>`select last_used_at from oauth_tokens where namespace_id = ${account.namespaceId} and revoked_at is null`;
    expect(used!.last_used_at).not.toBeNull();

    // Refresh rotates both tokens; the old access token stops at once, the namespace stays.
    const refreshed = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token, client_id: CLI });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect(refreshed.body.access_token).not.toBe(tokens.body.access_token);
    expect(refreshed.body.namespace_id).toBe(account.namespaceId);
    expect(refreshed.body.scope).toBe(CLI_DEFAULT);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: tokens.body.access_token })).status).toBe(401);
    expect((await chat(refreshed.body.access_token)).choices[0]!.message.content).toBeTruthy();

    // The rotated-out refresh token again: the whole grant is revoked.
    const replay = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token, client_id: CLI });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: refreshed.body.access_token })).status).toBe(401);
    const dead = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, client_id: CLI });
    expect(dead.body.error).toBe("invalid_grant");
  });

  test("a refresh may narrow the scope, never widen it", async () => {
    const tokens = await deviceTokens(server, harness.account.apiKey, harness.account.namespaceId, "keys:read usage:read");
    const wider = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: CLI, scope: "keys:read keys:write" });
    expect(wider.body.error).toBe("invalid_scope");
    const narrower = await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: CLI, scope: "usage:read" });
    expect(narrower.status).toBe(200);
    expect(narrower.body.scope).toBe("usage:read");
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: narrower.body.access_token })).status).toBe(403);
  });

  test("revoking either token revokes the grant; unknown tokens and other clients' are a quiet 200", async () => {
    const { account } = harness;
    const byRefresh = await deviceTokens(server, account.apiKey, account.namespaceId);
    const revoked = await postForm(server, "/oauth/revoke", { token: byRefresh.refresh_token, token_type_hint: "refresh_token", client_id: CLI });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({});
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: byRefresh.access_token })).status).toBe(401);
    expect((await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: byRefresh.refresh_token, client_id: CLI })).body.error).toBe("invalid_grant");

    const byAccess = await deviceTokens(server, account.apiKey, account.namespaceId);
    expect((await postForm(server, "/oauth/revoke", { token: byAccess.access_token, client_id: CLI })).status).toBe(200);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: byAccess.access_token })).status).toBe(401);
    expect((await postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: byAccess.refresh_token, client_id: CLI })).body.error).toBe("invalid_grant");

    const unknown = await postForm(server, "/oauth/revoke", { token: "bra_nothing-like-this-exists", client_id: CLI });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({});
    const missing = await postForm(server, "/oauth/revoke", { client_id: CLI });
    expect(missing.body.error).toBe("invalid_request");
  });

  test("a denied code is access_denied; a namespace-bound approver is refused; another account's namespace is 404", async () => {
    const { account } = harness;
    const denied = await startDevice(server);
    expect((await decide(server, account.apiKey, denied.user_code, undefined, false)).body).toEqual({ status: "denied" });
    expect((await pollDevice(server, denied.device_code)).body.error).toBe("access_denied");

    const device = await startDevice(server);
    const bound = await server.mintKey(account.apiKey, ["keys:read"]);
    const refused = await decide(server, bound, device.user_code, account.namespaceId);
    expect(refused.status).toBe(403);
    const stranger = await server.createAccount();
    const foreign = await decide(server, account.apiKey, device.user_code, stranger.namespaceId);
    expect(foreign.status).toBe(404);
    const noCredential = await server.api("POST", "/oauth/device/decision", { body: { user_code: device.user_code, namespace_id: account.namespaceId, approve: true } });
    expect(noCredential.status).toBe(401);
    const unknownCode = await decide(server, account.apiKey, "BBBB-BBBB", account.namespaceId);
    expect(unknownCode.status).toBe(400);
    expect(unknownCode.body.error).toBe("invalid_request");
    // Still pending after all that.
    expect((await pollDevice(server, device.device_code)).body.error).toBe("authorization_pending");
  });

  test("issued scopes: requested ∩ approver's ∩ client's, never control-plane; wildcards expand", async () => {
    const { account } = harness;
    const tokens = await deviceTokens(server, account.apiKey, account.namespaceId, "user:write clients:write namespace:write billing:write policy:*");
    expect(tokens.scope).toBe("billing:write policy:read policy:write");
  });

  test("racing polls of an approved code get one grant between them; racing refreshes with one token count as a replay", async () => {
    const { account } = harness;
    const device = await startDevice(server);
    await decide(server, account.apiKey, device.user_code, account.namespaceId);
    const polls = await Promise.all(Array.from({ length: 8 }, () => pollDevice(server, device.device_code)));
    expect(polls.filter((poll) => poll.status === 200)).toHaveLength(1);
    expect(polls.filter((poll) => poll.body.error === "invalid_grant")).toHaveLength(7);
    const tokens = polls.find((poll) => poll.status === 200)!.body;

    const refreshes = await Promise.all(
      Array.from({ length: 4 }, () => postForm(server, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: CLI })),
    );
    expect(refreshes.filter((refresh) => refresh.status === 200)).toHaveLength(1);
    const winner = refreshes.find((refresh) => refresh.status === 200)!.body;
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: winner.access_token })).status).toBe(401);
  });
});

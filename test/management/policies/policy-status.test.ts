import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../../support/inference-harness";
import { startTestServer, type TestServer } from "../../support/test-server";

/**
 * GET /v1/namespaces/{nsid}/policies/{id}/status: requests admitted through the real
 * gateway (mock upstreams, real PostgreSQL) move the figures, and a second instance on the
 * same database reads the same ones.
 */

let harness: InferenceHarness;
let second: TestServer;
beforeAll(async () => {
  harness = await startInferenceHarness();
  // Another instance sharing the database (it never drops it: the harness does).
  second = await startTestServer({}, { url: harness.server.databaseUrl, drop: async () => {} });
});
afterAll(async () => {
  await second.close();
  await harness.close();
});

const ns = () => `/v1/namespaces/${harness.account.namespaceId}`;

async function manage(method: string, path: string, body?: unknown) {
  const response = await harness.server.api(method, path, { token: harness.account.apiKey, body });
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
  return response.body;
}

async function status(policyId: string, server: TestServer = harness.server) {
  const response = await server.api("GET", `${ns()}/policies/${policyId}/status`, { token: harness.account.apiKey });
  expect(response.status).toBe(200);
  return response.body;
}

/** Reads the status until `done` holds (settlement is asynchronous to the response); fails after 200 reads. */
async function statusWhen(policyId: string, done: (body: any) => boolean) {
  let body: any;
  for (let read = 0; read < 200; read++) {
    body = await status(policyId);
    if (done(body)) return body;
    await Bun.sleep(25);
  }
  throw new Error(`status never reached the expected state: ${JSON.stringify(body)}`);
}

/** A new key with a new policy of `kind` bound to it. */
async function keyWithPolicy(kind: string, spec: unknown) {
  const key = await manage("POST", `${ns()}/keys`, { display_name: `${kind} key`, scopes: ["inference:invoke"] });
  const policy = await manage("POST", `${ns()}/policies`, { name: `${kind} ${crypto.randomUUID()}`, kind, spec });
  await manage("POST", `${ns()}/policies/${policy.id}/bind`, { principal_type: "api_key", principal_id: key.id });
  return { keyId: key.id as string, token: key.token as string, policyId: policy.id as string };
}

async function chat(token: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) {
  const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], ...extra }),
    signal,
  });
  await response.text();
  return response.status;
}

describe("budget status", () => {
  test("spent moves with each settled request, reserved while one is in flight, and remaining is what is left of the limit", async () => {
    const { keyId, token, policyId } = await keyWithPolicy("budget", { window: "day", limit_micro_usd: 2_000_000 });
    expect(await status(policyId)).toEqual({
      kind: "budget",
      window: "day",
      limit_micro_usd: 2_000_000,
      spent_micro_usd: 0,
      reserved_micro_usd: 0,
      remaining_micro_usd: 2_000_000,
      principals: [{ principal_type: "api_key", principal_id: keyId, spent_micro_usd: 0, reserved_micro_usd: 0, remaining_micro_usd: 2_000_000 }],
    });

    // 1000 × 0.15 + 200 × 0.6 = 270 µUSD, twice.
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 1000, completion: 200 } }, { kind: "text", usage: { prompt: 1000, completion: 200 } });
    expect(await chat(token)).toBe(200);
    expect(await chat(token)).toBe(200);
    const settled = await statusWhen(policyId, (body) => body.spent_micro_usd === 540 && body.reserved_micro_usd === 0);
    expect(settled.remaining_micro_usd).toBe(2_000_000 - 540);
    // The other instance reads the same counters.
    expect(await status(policyId, second)).toEqual(settled);

    // A request held by the upstream keeps its cost ceiling reserved until it ends.
    harness.mocks.openai.queueScenarios({ kind: "hang" });
    const abort = new AbortController();
    const inFlight = chat(token, { stream: true, max_tokens: 100 }, abort.signal).catch(() => "aborted");
    const holding = await statusWhen(policyId, (body) => body.reserved_micro_usd > 0);
    expect(holding.spent_micro_usd).toBe(540);
    expect(holding.remaining_micro_usd).toBe(2_000_000 - 540 - holding.reserved_micro_usd);
    expect(holding.principals[0].reserved_micro_usd).toBe(holding.reserved_micro_usd);
    abort.abort();
    await inFlight;
    const ended = await statusWhen(policyId, (body) => body.reserved_micro_usd === 0);
    expect(ended.spent_micro_usd).toBe(540);
  });

  test("bound to two keys, each has its own counter; the top level is the one nearest its limit", async () => {
    const first = await keyWithPolicy("budget", { window: "month", limit_micro_usd: 1_000_000 });
    const other = await manage("POST", `${ns()}/keys`, { display_name: "second key", scopes: ["inference:invoke"] });
    await manage("POST", `${ns()}/policies/${first.policyId}/bind`, { principal_type: "api_key", principal_id: other.id });
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 1000, completion: 200 } });
    expect(await chat(other.token)).toBe(200);
    const body = await statusWhen(first.policyId, (b) => b.spent_micro_usd === 270 && b.reserved_micro_usd === 0);
    expect(body).toMatchObject({ window: "month", spent_micro_usd: 270, remaining_micro_usd: 1_000_000 - 270 });
    expect(body.principals.map((p: any) => [p.principal_id, p.spent_micro_usd])).toEqual([
      [first.keyId, 0],
      [other.id, 270],
    ]);
  });

  test("an unbound budget has nothing used and its whole limit remaining", async () => {
    const policy = await manage("POST", `${ns()}/policies`, { name: `unbound ${crypto.randomUUID()}`, kind: "budget", spec: { window: "total", limit_micro_usd: 5 } });
    expect(await status(policy.id)).toEqual({ kind: "budget", window: "total", limit_micro_usd: 5, spent_micro_usd: 0, reserved_micro_usd: 0, remaining_micro_usd: 5, principals: [] });
  });
});

describe("rate-limit status", () => {
  test("used_requests and used_tokens count the admissions in the window; what a clause does not limit is null", async () => {
    const requestsOnly = await keyWithPolicy("rate_limit", { window_secs: 3600, max_requests: 5, max_tokens: null });
    expect((await status(requestsOnly.policyId)).clauses).toEqual([
      { window_secs: 3600, max_requests: 5, used_requests: 0, max_tokens: null, used_tokens: null, resets_in_secs: 0 },
    ]);
    harness.mocks.openai.queueScenarios({ kind: "text" }, { kind: "text" });
    expect(await chat(requestsOnly.token)).toBe(200);
    expect(await chat(requestsOnly.token)).toBe(200);
    const body = await status(requestsOnly.policyId);
    expect(body.kind).toBe("rate_limit");
    expect(body.clauses).toHaveLength(1);
    expect(body.clauses[0]).toMatchObject({ window_secs: 3600, max_requests: 5, used_requests: 2, max_tokens: null, used_tokens: null });
    expect(body.clauses[0].resets_in_secs).toBeGreaterThan(0);
    expect(body.clauses[0].resets_in_secs).toBeLessThanOrEqual(3600);
    expect(body.principals).toEqual([{ principal_type: "api_key", principal_id: requestsOnly.keyId, clauses: body.clauses }]);
    expect(await status(requestsOnly.policyId, second)).toEqual(body);

    // max_tokens counts each request's output ceiling: its own max_tokens.
    const tokens = await keyWithPolicy("rate_limit", { window_secs: 60, max_requests: null, max_tokens: 1000 });
    harness.mocks.openai.queueScenarios({ kind: "text" }, { kind: "text" });
    expect(await chat(tokens.token, { max_tokens: 100 })).toBe(200);
    expect(await chat(tokens.token, { max_tokens: 250 })).toBe(200);
    expect((await status(tokens.policyId)).clauses[0]).toMatchObject({ max_requests: null, used_requests: null, max_tokens: 1000, used_tokens: 350 });
  });

  test("a full window is what refuses the next request", async () => {
    const { token, policyId } = await keyWithPolicy("rate_limit", { window_secs: 600, max_requests: 1 });
    harness.mocks.openai.queueScenarios({ kind: "text" });
    expect(await chat(token)).toBe(200);
    expect(await chat(token)).toBe(429);
    const clause = (await status(policyId)).clauses[0];
    expect(clause).toMatchObject({ max_requests: 1, used_requests: 1 });
  });
});

describe("other kinds and access", () => {
  test("a preset reports each clause it bundles; a guardrail only its kind", async () => {
    const { policyId } = await keyWithPolicy("preset", { budget: { window: "day", limit_micro_usd: 1000 }, rate_limit: { window_secs: 60, max_requests: 10 }, guardrail: null });
    const body = await status(policyId);
    expect(body.kind).toBe("preset");
    expect(body.budget).toMatchObject({ kind: "budget", window: "day", limit_micro_usd: 1000, spent_micro_usd: 0, remaining_micro_usd: 1000 });
    expect(body.rate_limit.clauses).toEqual([{ window_secs: 60, max_requests: 10, used_requests: 0, max_tokens: null, used_tokens: null, resets_in_secs: 0 }]);
    const guardrail = await manage("POST", `${ns()}/policies`, { name: `g ${crypto.randomUUID()}`, kind: "guardrail", spec: { allow_streaming: false } });
    expect(await status(guardrail.id)).toEqual({ kind: "guardrail" });
  });

  test("another tenant's policy id is the 404 of a missing one, byte for byte; the route needs policy:read", async () => {
    const policy = await manage("POST", `${ns()}/policies`, { name: `mine ${crypto.randomUUID()}`, kind: "budget", spec: { window: "day", limit_micro_usd: 1000 } });
    const other = await harness.server.createAccount();
    const theirs = await harness.server.api("GET", `/v1/namespaces/me/policies/${policy.id}/status`, { token: other.apiKey });
    const missing = await harness.server.api("GET", `/v1/namespaces/me/policies/pol_missing/status`, { token: other.apiKey });
    expect(theirs.status).toBe(404);
    expect(theirs.text).toBe(missing.text);
    const flat = await harness.server.api("GET", `/v1/policies/${policy.id}/status`, { token: harness.account.apiKey });
    expect(flat.body.kind).toBe("budget");
    const noScope = await harness.server.mintKey(harness.account.apiKey, ["usage:read"]);
    const refused = await harness.server.api("GET", `${ns()}/policies/${policy.id}/status`, { token: noScope });
    expect(refused.status).toBe(403);
  });

  test("the OpenAPI document lists the route and its flat form with their scope", async () => {
    const spec = await harness.server.api("GET", "/openapi/json");
    expect(spec.body.paths["/v1/namespaces/{nsid}/policies/{id}/status"].get["x-scope"]).toBe("policy:read");
    expect(spec.body.paths["/v1/policies/{id}/status"].get["x-scope"]).toBe("policy:read");
  });
});

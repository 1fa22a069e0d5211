import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startInferenceHarness, type InferenceHarness } from "../../support/inference-harness";
import type { TestAccount } from "../../support/test-server";

/**
 * Request history, usage aggregates and settlement receipts, against real PostgreSQL.
 * Records come from real inference through the mock upstreams where the test is about
 * what inference writes; rows are inserted directly where the test needs a chosen
 * created_at, a legacy charge or an unknown one.
 */

let harness: InferenceHarness;
let sql: postgres.Sql;
beforeAll(async () => {
  harness = await startInferenceHarness();
  sql = postgres(harness.server.databaseUrl, { max: 2, onnotice: () => {} });
});
afterAll(async () => {
  await sql.end();
  await harness.close();
});

const api = (method: string, path: string, token?: string, headers?: Record<string, string>) =>
  harness.server.api(method, path, { token, headers });
const flush = () => harness.server.server.services.writeBuffer.flush();
const newAccount = () => harness.server.createAccount(undefined, 50_000_000);
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;

/** A non-streamed chat completion through the mock OpenAI upstream. */
async function chat(token: string, requestId: string, model = "mock-openai/gpt-4o-mini", extra: Record<string, unknown> = {}) {
  const response = await harness.server.api("POST", "/v1/chat/completions", {
    token,
    headers: { "x-request-id": requestId },
    body: { model, messages: [{ role: "user", content: "Hi" }], ...extra },
  });
  return response;
}

/** A streamed Anthropic Messages request, read to the end. */
async function streamedMessages(token: string, requestId: string, model = "mock-anthropic/claude-sonnet-4-5") {
  const response = await fetch(`${harness.server.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": token, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model, stream: true, max_tokens: 100, messages: [{ role: "user", content: "Hi there" }] }),
  });
  return { status: response.status, text: await response.text() };
}

/** A streamed chat completion, read to the end. */
async function streamedChat(token: string, requestId: string, body: Record<string, unknown>) {
  const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ stream: true, messages: [{ role: "user", content: "Hi" }], ...body }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const EVIDENCE = {
  source: "provider_reported",
  effective_usage: { cache_read_tokens: 0, cache_write_tokens: 0, completion_tokens: 1, prompt_tokens: 1, reasoning_tokens: 0, web_search_count: 0, media_input_count: 0, media_output_count: 0 },
  raw_usage: { cache_read_tokens: 0, cache_write_tokens: 0, completion_tokens: 1, prompt_tokens: 1, reasoning_tokens: 0, web_search_count: 0 },
  estimator: { chars_per_token: 4, version: "test" },
  raw_usage_frames: [],
};

interface DirectRecord {
  account: TestAccount;
  namespaceId?: string;
  createdAt: string;
  id?: string;
  requestId?: string;
  billingStatus?: string;
  finalCharge?: number | null;
  /** A billing_audit row with this charge. */
  audit?: number;
  capabilities?: string[];
  prompt?: number;
  completion?: number;
  reasoning?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** Inserts a request record (and optionally its billing audit) with chosen values. */
async function insertRecord(record: DirectRecord): Promise<string> {
  const id = record.id ?? `rq_direct_${crypto.randomUUID().replaceAll("-", "")}`;
  const namespaceId = record.namespaceId ?? record.account.namespaceId;
  const finalCharge = record.finalCharge === undefined ? 0 : record.finalCharge;
  const billingStatus = record.billingStatus ?? (finalCharge === null ? "unknown" : "computed");
  await sql`
    insert into requests (id, request_id, account_id, namespace_id, status, status_code, billing_status, model_id, provider_id,
      funding_source, streamed, prompt_tokens, completion_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
      final_charge_micro_usd, used_capabilities, usage_evidence, created_at, completed_at)
    values (${id}, ${record.requestId ?? unique("direct")}, ${record.account.accountId}, ${namespaceId}, 'succeeded', 200, ${billingStatus},
      'mock-openai/gpt-4o-mini', 'mock-openai', 'cloud_credit', false, ${record.prompt ?? 10}, ${record.completion ?? 5}, ${record.reasoning ?? 0},
      ${record.cacheRead ?? 0}, ${record.cacheWrite ?? 0}, ${finalCharge}, ${record.capabilities ?? []}::text[], ${JSON.stringify(EVIDENCE)}::jsonb,
      ${record.createdAt}::timestamptz, ${record.createdAt}::timestamptz)`;
  if (record.audit !== undefined) {
    await sql`insert into billing_audit (request_record_id, account_id, namespace_id, charge_micro_usd, pricing, buckets)
      values (${id}, ${record.account.accountId}, ${namespaceId}, ${record.audit}, '{}'::jsonb, '{}'::jsonb)`;
  }
  await rebuildRollups(record.account);
  return id;
}

async function insertLedger(account: TestAccount, kind: string, amount: number, createdAt: string, namespaceId: string | null = account.namespaceId) {
  await sql`insert into ledger_entries (id, account_id, namespace_id, request_record_id, kind, amount_micro_usd, created_at)
    values (${`le_direct_${crypto.randomUUID().replaceAll("-", "")}`}, ${account.accountId}, ${namespaceId}, ${`rq_none_${crypto.randomUUID()}`}, ${kind}, ${amount}, ${createdAt}::timestamptz)`;
  await rebuildRollups(account);
}

/**
 * Rows written here bypass the metering writer, which keeps the usage rollups the usage
 * answers read (migration 0034): recompute the account's, as an operator would after
 * editing records by hand. (A billing_audit row is only ever older than the rollups.)
 */
async function rebuildRollups(account: TestAccount) {
  await sql`select usage_rollups_rebuild(${account.accountId})`;
}

const RECORD_FIELDS = [
  "api_key_id",
  "billing_status",
  "completed_at",
  "completion_tokens",
  "created_at",
  "final_charge_micro_usd",
  "finish_reason",
  "first_token_kind",
  "funding_source",
  "generation_duration_ms",
  "id",
  "model_id",
  "oauth_token_id",
  "prompt_tokens",
  "provider_id",
  "request_duration_ms",
  "request_id",
  "routing_profile",
  "status",
  "status_code",
  "streamed",
  "ttft_ms",
  "upstream_duration_ms",
  "usage_evidence",
  "used_capabilities",
];
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const SIX = ["cache_read_tokens", "cache_write_tokens", "completion_tokens", "prompt_tokens", "reasoning_tokens", "web_search_count"];

describe("GET /v1/namespaces/{nsid}/requests with records from real inference", () => {
  let account: TestAccount;
  const ids = { sync: unique("sync"), cached: unique("cached"), fallback: unique("fallback") };
  let records: any[];

  beforeAll(async () => {
    account = await newAccount();
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 1000, completion: 200 } });
    expect((await chat(account.apiKey, ids.sync)).status).toBe(200);
    harness.mocks.anthropic.queueScenarios({ kind: "text", usage: { prompt: 100, completion: 20, cacheRead: 30, cacheWrite: 10 } });
    expect((await streamedMessages(account.apiKey, ids.cached)).status).toBe(200);
    // The first attempt reports usage at message_start and then breaks; the second serves.
    harness.mocks.anthropic.queueScenarios({ kind: "stream_cut", cutAfterChunks: 1, usage: { prompt: 40, completion: 9 } });
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 30, completion: 7 } });
    const fallback = await streamedChat(account.apiKey, ids.fallback, { model: "x/y", models: ["mock-anthropic/claude-sonnet-4-5", "mock-openai/gpt-4o-mini"] });
    expect(fallback.headers.get("x-switchyard-provider")).toBe("mock-openai");
    await flush();
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/requests`, account.apiKey);
    expect(response.status).toBe(200);
    records = response.body.data;
  });

  test("lists the namespace's records newest first, with the limit and offset used", async () => {
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/requests`, account.apiKey);
    expect(response.body.limit).toBe(25);
    expect(response.body.offset).toBe(0);
    expect(records.map((r) => r.request_id)).toEqual([ids.fallback, ids.cached, ids.sync]);
    const times = records.map((r) => Date.parse(r.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  test("every record carries exactly the documented record fields, with their types", () => {
    for (const record of records) {
      expect(Object.keys(record).sort()).toEqual(RECORD_FIELDS);
      expect(record.id).toMatch(/^rq_/);
      for (const field of ["id", "request_id", "billing_status", "finish_reason", "first_token_kind", "funding_source", "model_id", "provider_id", "status"]) {
        expect({ field, type: typeof record[field] }).toEqual({ field, type: "string" });
      }
      for (const field of ["prompt_tokens", "completion_tokens", "final_charge_micro_usd", "generation_duration_ms", "request_duration_ms", "upstream_duration_ms", "ttft_ms", "status_code"]) {
        expect({ field, integer: Number.isInteger(record[field]) }).toEqual({ field, integer: true });
      }
      expect(record.created_at).toMatch(RFC3339);
      expect(record.completed_at).toMatch(RFC3339);
      expect(Date.parse(record.completed_at)).toBeGreaterThanOrEqual(Date.parse(record.created_at));
      expect(typeof record.streamed).toBe("boolean");
      expect(Array.isArray(record.used_capabilities)).toBe(true);
      expect(record.routing_profile === null || typeof record.routing_profile === "string").toBe(true);
      const evidence = record.usage_evidence;
      expect(Object.keys(evidence).sort()).toEqual(["effective_usage", "estimator", "raw_usage", "raw_usage_frames", "source"]);
      expect(Object.keys(evidence.raw_usage).sort()).toEqual(SIX);
      expect(Object.keys(evidence.effective_usage).sort()).toEqual([...SIX, "media_input_count", "media_output_count"].sort());
      expect(evidence.estimator).toEqual({ chars_per_token: 1, version: "utf8-bytes-v2" });
    }
  });

  test("a sync chat record: succeeded, computed, charged by the catalog price (1000×0.15 + 200×0.6 = 270 µUSD)", () => {
    const record = records.find((r) => r.request_id === ids.sync);
    expect(record).toMatchObject({
      status: "succeeded",
      status_code: 200,
      billing_status: "computed",
      final_charge_micro_usd: 270,
      prompt_tokens: 1000,
      completion_tokens: 200,
      model_id: "mock-openai/gpt-4o-mini",
      provider_id: "mock-openai",
      funding_source: "cloud_credit",
      streamed: false,
      finish_reason: "stop",
      first_token_kind: "text",
    });
    expect(record.usage_evidence.source).toBe("provider_reported");
    expect(record.usage_evidence.raw_usage_frames).toHaveLength(1);
    expect(record.usage_evidence.raw_usage_frames[0]).toEqual({
      account_label: "platform",
      attempt_ordinal: 1,
      frame_kind: "usage",
      frame_ordinal: 1,
      provider_id: "mock-openai",
      provider_model_id: "gpt-4o-mini",
      usage: { cache_read_tokens: 0, cache_write_tokens: 0, completion_tokens: 200, prompt_tokens: 1000, reasoning_tokens: 0, web_search_count: 0 },
    });
  });

  test("a streamed Anthropic record keeps the cache split and is charged per bucket (60×3 + 30×0.3 + 10×3.75 + 20×15 → 527)", () => {
    const record = records.find((r) => r.request_id === ids.cached);
    expect(record).toMatchObject({ streamed: true, prompt_tokens: 100, completion_tokens: 20, final_charge_micro_usd: 527, provider_id: "mock-anthropic" });
    expect(record.usage_evidence.raw_usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 20, cache_read_tokens: 30, cache_write_tokens: 10 });
    expect(record.usage_evidence.effective_usage).toMatchObject({ prompt_tokens: 100, cache_read_tokens: 30, cache_write_tokens: 10 });
    // message_start and message_delta each report usage.
    const frames = record.usage_evidence.raw_usage_frames;
    expect(frames.map((f: any) => [f.attempt_ordinal, f.frame_ordinal])).toEqual([
      [1, 1],
      [1, 2],
    ]);
    expect(frames[0].usage).toMatchObject({ cache_read_tokens: 30, cache_write_tokens: 10 });
    expect(record.ttft_ms).toBeLessThanOrEqual(record.upstream_duration_ms);
  });

  test("a fallback record shows both attempts' usage frames, and is charged for both (the provider billed the cut one's prompt)", () => {
    const record = records.find((r) => r.request_id === ids.fallback);
    // 9 for the serving attempt (30 + 7 tokens on gpt-4o-mini), 120 for the 40 prompt tokens
    // Anthropic reported before its stream was cut (its output: nothing relayed).
    expect(record).toMatchObject({ provider_id: "mock-openai", prompt_tokens: 30, completion_tokens: 7, final_charge_micro_usd: 9 + 120 });
    expect(record.usage_evidence.raw_usage_frames.map((f: any) => [f.attempt_ordinal, f.frame_ordinal, f.provider_id, f.usage.prompt_tokens])).toEqual([
      [1, 1, "mock-anthropic", 40],
      [2, 1, "mock-openai", 30],
    ]);
  });

  test("never includes the prompt or the response text", async () => {
    const response = await api("GET", "/v1/requests", account.apiKey);
    expect(response.text).not.toContain("Hi there");
    expect(response.text).not.toContain("Hello, world");
  });

  test("the flat /v1/requests and `me` list the caller's own namespace, like its id", async () => {
    const byId = await api("GET", `/v1/namespaces/${account.namespaceId}/requests`, account.apiKey);
    const flat = await api("GET", "/v1/requests", account.apiKey);
    const me = await api("GET", "/v1/namespaces/me/requests", account.apiKey);
    expect(flat.status).toBe(200);
    expect(flat.body).toEqual(byId.body);
    expect(me.body).toEqual(byId.body);
  });
});

describe("requests refused before admission", () => {
  test("an account-wide key's refused requests (unknown model, undecodable body) are listed in the namespace it is attributed to", async () => {
    const account = await newAccount();
    const unknownModel = unique("unknown-model");
    expect((await chat(account.apiKey, unknownModel, "mock-openai/no-such-model")).status).toBe(404);
    const badBody = unique("bad-body");
    const response = await harness.server.api("POST", "/v1/chat/completions", { token: account.apiKey, headers: { "x-request-id": badBody }, body: { model: 42 } });
    expect(response.status).toBe(400);
    await flush();
    const listed = await api("GET", `/v1/namespaces/${account.namespaceId}/requests`, account.apiKey);
    const byId = new Map(listed.body.data.map((record: any) => [record.request_id, record]));
    expect(byId.get(unknownModel)).toMatchObject({ status: "failed", status_code: 404 });
    expect(byId.get(badBody)).toMatchObject({ status: "failed", status_code: 400 });
  });
});

describe("request history paging", () => {
  let account: TestAccount;
  const path = () => `/v1/namespaces/${account.namespaceId}/requests`;
  beforeAll(async () => {
    account = await newAccount();
    for (let i = 0; i < 105; i++) {
      await insertRecord({ account, createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(), id: `rq_page_${String(i).padStart(3, "0")}` });
    }
    // Three records created at the very same instant: the id breaks the tie, descending.
    for (const id of ["rq_tie_a", "rq_tie_b", "rq_tie_c"]) await insertRecord({ account, createdAt: "2026-01-01T00:00:00Z", id });
  });

  test("limit defaults to 25 and is clamped to [1, 100]", async () => {
    expect((await api("GET", path(), account.apiKey)).body.data).toHaveLength(25);
    const zero = await api("GET", `${path()}?limit=0`, account.apiKey);
    expect(zero.status).toBe(200);
    expect([zero.body.limit, zero.body.data.length]).toEqual([1, 1]);
    const negative = await api("GET", `${path()}?limit=-7`, account.apiKey);
    expect([negative.body.limit, negative.body.data.length]).toEqual([1, 1]);
    const huge = await api("GET", `${path()}?limit=1000`, account.apiKey);
    expect([huge.body.limit, huge.body.data.length]).toEqual([100, 100]);
  });

  test("a limit or offset that is not an integer is 400 bad_request", async () => {
    for (const query of ["limit=abc", "limit=2.5", "limit=", "limit=1e2", "offset=x", "offset=1.5", "offset=-1"]) {
      const response = await api("GET", `${path()}?${query}`, account.apiKey);
      expect({ query, status: response.status, error: response.body.error }).toEqual({ query, status: 400, error: "bad_request" });
      expect(typeof response.body.error_description).toBe("string");
    }
  });

  test("offset walks the newest-first listing without gaps or repeats; ties are ordered by id descending", async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 120; offset += 40) {
      const page = await api("GET", `${path()}?limit=40&offset=${offset}`, account.apiKey);
      expect(page.body.offset).toBe(offset);
      seen.push(...page.body.data.map((r: any) => r.id));
    }
    const expected = ["rq_tie_c", "rq_tie_b", "rq_tie_a", ...Array.from({ length: 105 }, (_, i) => `rq_page_${String(104 - i).padStart(3, "0")}`)];
    expect(seen).toEqual(expected);
    const beyond = await api("GET", `${path()}?offset=500`, account.apiKey);
    expect(beyond.body).toEqual({ data: [], limit: 25, offset: 500, next_after: null });
  });
});

describe("GET /v1/namespaces/{nsid}/usage", () => {
  test("sums requests, tokens and spend over [from, to): from is inclusive, to exclusive, any offset accepted", async () => {
    const account = await newAccount();
    await insertRecord({ account, createdAt: "2024-12-31T23:59:59.999Z", prompt: 1000, completion: 1000, finalCharge: 1000 });
    await insertRecord({ account, createdAt: "2025-01-01T00:00:00.000Z", prompt: 10, completion: 1, finalCharge: 100 });
    await insertRecord({ account, createdAt: "2025-01-01T12:00:00.000Z", prompt: 20, completion: 2, finalCharge: 200 });
    await insertRecord({ account, createdAt: "2025-01-01T23:59:59.999Z", prompt: 30, completion: 3, finalCharge: 300 });
    await insertRecord({ account, createdAt: "2025-01-02T00:00:00.000Z", prompt: 5000, completion: 5000, finalCharge: 5000 });
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/usage?from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z`, account.apiKey);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      from: "2025-01-01T00:00:00.000Z",
      to: "2025-01-02T00:00:00.000Z",
      request_count: 3,
      prompt_tokens: 60,
      completion_tokens: 6,
      spend_micro_usd: 600,
      capability_request_counts: {},
      billing_anomalies: 0,
    });
    // The same instants written with an offset are the same window.
    const offset = await api("GET", `/v1/namespaces/me/usage?from=2025-01-01T01:00:00%2B01:00&to=2025-01-01T19:00:00-05:00`, account.apiKey);
    expect(offset.body).toEqual(response.body);
    // One millisecond earlier takes in the record just before midnight.
    const earlier = await api("GET", `/v1/namespaces/me/usage?from=2024-12-31T23:59:59.999Z&to=2025-01-02T00:00:00Z`, account.apiKey);
    expect(earlier.body.request_count).toBe(4);
  });

  test("a billing-audit charge wins over the request row's, the row's counts only without an audit, and a null charge is an anomaly", async () => {
    const account = await newAccount();
    const at = "2025-03-01T00:00:00Z";
    await insertRecord({ account, createdAt: at, finalCharge: 100, audit: 70 }); // 70: the audit is authoritative
    await insertRecord({ account, createdAt: at, finalCharge: 50 }); // 50: legacy charge, no audit
    await insertRecord({ account, createdAt: at, finalCharge: null }); // unknown: anomaly, adds nothing
    await insertRecord({ account, createdAt: at, finalCharge: null, audit: 30 }); // 30: audited, not an anomaly
    await insertRecord({ account, createdAt: at, finalCharge: null, billingStatus: "legacy_unknown" }); // anomaly
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/usage?from=2025-03-01T00:00:00Z&to=2025-03-02T00:00:00Z`, account.apiKey);
    expect(response.body).toMatchObject({ request_count: 5, spend_micro_usd: 150, billing_anomalies: 2 });
  });

  test("capability_request_counts counts requests per used capability", async () => {
    const account = await newAccount();
    const at = "2025-04-01T00:00:00Z";
    await insertRecord({ account, createdAt: at, capabilities: ["image_input", "tools"] });
    await insertRecord({ account, createdAt: at, capabilities: ["tools"] });
    await insertRecord({ account, createdAt: at, capabilities: ["structured_outputs", "tools"] });
    await insertRecord({ account, createdAt: at, capabilities: [] });
    await insertRecord({ account, createdAt: "2025-05-01T00:00:00Z", capabilities: ["reasoning"] });
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/usage?from=2025-04-01T00:00:00Z&to=2025-04-02T00:00:00Z`, account.apiKey);
    expect(response.body.capability_request_counts).toEqual({ tools: 3, image_input: 1, structured_outputs: 1 });
    expect(response.body.request_count).toBe(4);
  });

  test("a real tool-calling request is counted under `tools`", async () => {
    const account = await newAccount();
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }];
    expect((await chat(account.apiKey, unique("tools"), "mock-openai/gpt-4o-mini@tool_call", { tools })).status).toBe(200);
    await flush();
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/usage`, account.apiKey);
    expect(response.body.capability_request_counts).toEqual({ tools: 1 });
  });

  test("the default window is the last 30 days ending now", async () => {
    const account = await newAccount();
    const day = 24 * 60 * 60 * 1000;
    await insertRecord({ account, createdAt: new Date(Date.now() - 29 * day).toISOString(), finalCharge: 11 });
    await insertRecord({ account, createdAt: new Date(Date.now() - 31 * day).toISOString(), finalCharge: 22 });
    const before = Date.now();
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/usage`, account.apiKey);
    const to = Date.parse(response.body.to);
    expect(to).toBeGreaterThanOrEqual(before - 1);
    expect(to).toBeLessThanOrEqual(Date.now() + 1);
    expect(to - Date.parse(response.body.from)).toBe(30 * day);
    expect(response.body).toMatchObject({ request_count: 1, spend_micro_usd: 11 });
    // With only `to` given, the window is the 30 days before it.
    const toOnly = await api("GET", `/v1/namespaces/${account.namespaceId}/usage?to=2025-01-31T00:00:00Z`, account.apiKey);
    expect([toOnly.body.from, toOnly.body.to]).toEqual(["2025-01-01T00:00:00.000Z", "2025-01-31T00:00:00.000Z"]);
  });

  test("real requests: the namespace's spend is the sum of its records' charges", async () => {
    const account = await newAccount();
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 1000, completion: 200 } });
    await chat(account.apiKey, unique("u1"));
    harness.mocks.anthropic.queueScenarios({ kind: "text", usage: { prompt: 100, completion: 20, cacheRead: 30, cacheWrite: 10 } });
    await streamedMessages(account.apiKey, unique("u2"));
    await flush();
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/usage`, account.apiKey);
    expect(response.body).toMatchObject({ request_count: 2, prompt_tokens: 1100, completion_tokens: 220, spend_micro_usd: 270 + 527, billing_anomalies: 0 });
  });

  test("invalid dates, and from ≥ to, are 400 bad_request", async () => {
    const account = await newAccount();
    const bad = [
      "from=yesterday",
      "from=2025-01-01",
      "from=2025-01-01T00:00:00",
      "from=2025-13-01T00:00:00Z",
      "from=2025-02-30T00:00:00Z",
      "from=2025-01-01T24:00:00Z",
      "to=2025-01-01T00:00:00%2B25:00",
      "from=",
      "from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z",
      "from=2025-01-01T00:00:00Z&to=2025-01-01T00:00:00Z",
      "from=0000-01-01T00:00:00Z",
    ];
    for (const query of bad) {
      const response = await api("GET", `/v1/namespaces/${account.namespaceId}/usage?${query}`, account.apiKey);
      expect({ query, status: response.status, error: response.body.error }).toEqual({ query, status: 400, error: "bad_request" });
    }
  });
});

describe("GET /v1/usage (account-wide)", () => {
  test("covers every namespace of the account: request rows plus the usage ledger debits, spend reported positive", async () => {
    const account = await newAccount();
    const created = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "second" } });
    const bound = await harness.server.mintKey(account.apiKey, ["inference:invoke", "usage:read"], created.body.id);
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 1000, completion: 200 } });
    await chat(account.apiKey, unique("a1"));
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 2000, completion: 400 } });
    await chat(bound, unique("b1"));
    await flush();

    const whole = await api("GET", "/v1/usage", account.apiKey);
    expect(whole.status).toBe(200);
    expect(whole.body).toMatchObject({
      namespace_id: null,
      request_count: 2,
      prompt_tokens: 3000,
      completion_tokens: 600,
      spend_micro_usd: 270 + 540,
      billing_anomalies: 0,
      ledger: { usage_micro_usd: 810, usage_count: 2, pending_debit_recovery_micro_usd: 0, pending_debit_recovery_count: 0 },
    });
    expect(Date.parse(whole.body.to) - Date.parse(whole.body.from)).toBe(30 * 24 * 60 * 60 * 1000);

    // The namespace aggregates split it; a namespace-bound key's /v1/usage is its own namespace.
    const first = await api("GET", `/v1/namespaces/${account.namespaceId}/usage`, account.apiKey);
    const other = await api("GET", `/v1/namespaces/${created.body.id}/usage`, account.apiKey);
    expect([first.body.spend_micro_usd, other.body.spend_micro_usd]).toEqual([270, 540]);
    const scoped = await api("GET", "/v1/usage", bound);
    expect(scoped.body).toMatchObject({ namespace_id: created.body.id, request_count: 1, spend_micro_usd: 540, ledger: { usage_count: 1 } });
  });

  test("counts pending_debit_recovery entries and ignores credits and refunds; ledger entries fall in the window by their own time", async () => {
    const account = await newAccount();
    const q = "from=2025-06-01T00:00:00Z&to=2025-06-02T00:00:00Z";
    await insertLedger(account, "usage", -300, "2025-06-01T00:00:00Z");
    await insertLedger(account, "usage", -200, "2025-06-01T23:59:59.999Z");
    await insertLedger(account, "usage", -999, "2025-06-02T00:00:00Z");
    await insertLedger(account, "pending_debit_recovery", 0, "2025-06-01T10:00:00Z");
    await insertLedger(account, "pending_debit_recovery", -40, "2025-06-01T11:00:00Z");
    await insertLedger(account, "credit", 5_000, "2025-06-01T12:00:00Z", null);
    await insertLedger(account, "refund", 77, "2025-06-01T12:00:00Z");
    await insertRecord({ account, createdAt: "2025-06-01T10:00:00Z", finalCharge: null, prompt: 7, completion: 3 });
    const response = await api("GET", `/v1/usage?${q}`, account.apiKey);
    expect(response.body).toEqual({
      from: "2025-06-01T00:00:00.000Z",
      to: "2025-06-02T00:00:00.000Z",
      namespace_id: null,
      request_count: 1,
      prompt_tokens: 7,
      completion_tokens: 3,
      spend_micro_usd: 540,
      billing_anomalies: 1,
      ledger: { usage_micro_usd: 500, usage_count: 2, pending_debit_recovery_micro_usd: 40, pending_debit_recovery_count: 2 },
    });
  });

  test("keeps the history of an archived namespace, which its own route no longer reaches", async () => {
    const account = await newAccount();
    const gone = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "gone" } });
    await insertRecord({ account, namespaceId: gone.body.id, createdAt: "2025-07-01T00:00:00Z", finalCharge: 12 });
    expect((await api("DELETE", `/v1/namespaces/${gone.body.id}`, account.apiKey)).status).toBe(200);
    expect((await api("GET", `/v1/namespaces/${gone.body.id}/usage`, account.apiKey)).status).toBe(404);
    expect((await api("GET", `/v1/namespaces/${gone.body.id}/requests`, account.apiKey)).status).toBe(404);
    const whole = await api("GET", "/v1/usage?from=2025-07-01T00:00:00Z&to=2025-07-02T00:00:00Z", account.apiKey);
    expect(whole.body.request_count).toBe(1);
  });

  test("invalid windows are 400", async () => {
    const account = await newAccount();
    for (const query of ["from=nope", "to=2025-01-01T00:00:00Z&from=2025-01-01T00:00:01Z"]) {
      expect((await api("GET", `/v1/usage?${query}`, account.apiKey)).status).toBe(400);
    }
  });
});

describe("GET /v1/requests/{request_id}/settlement", () => {
  test("computed: echoes the id, names model and provider, non-overlapping buckets and the final charge", async () => {
    const account = await newAccount();
    const requestId = unique("settle");
    harness.mocks.anthropic.queueScenarios({ kind: "text", usage: { prompt: 100, completion: 20, cacheRead: 30, cacheWrite: 10 } });
    await streamedMessages(account.apiKey, requestId);
    await flush();
    // The settlement client sends its key in x-api-key.
    const response = await api("GET", `/v1/requests/${requestId}/settlement`, undefined, { "x-api-key": account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      request_id: requestId,
      state: "computed",
      model_id: "mock-anthropic/claude-sonnet-4-5",
      provider_id: "mock-anthropic",
      usage: { uncached_input_tokens: 60, cache_read_tokens: 30, cache_write_tokens: 10, output_tokens: 20, reasoning_tokens: 0 },
      final_charge_micro_usd: 527,
    });
    // Bearer works as well.
    expect((await api("GET", `/v1/requests/${requestId}/settlement`, account.apiKey)).body).toEqual(response.body);
  });

  test("reasoning is its own bucket, taken out of the output", async () => {
    const account = await newAccount();
    const requestId = unique("reason");
    harness.mocks.openai.queueScenarios({ kind: "reasoning", usage: { prompt: 50, completion: 30, reasoning: 12, cacheRead: 20 } });
    expect((await chat(account.apiKey, requestId)).status).toBe(200);
    await flush();
    const response = await api("GET", `/v1/requests/${requestId}/settlement`, account.apiKey);
    expect(response.body.usage).toEqual({ uncached_input_tokens: 30, cache_read_tokens: 20, cache_write_tokens: 0, output_tokens: 18, reasoning_tokens: 12 });
    // 30×0.15 + 20×0.075 + (18 + 12)×0.6 = 4.5 + 1.5 + 18 = 24
    expect(response.body).toMatchObject({ state: "computed", final_charge_micro_usd: 24 });
  });

  test("a request no upstream served is not_charged, with a null charge", async () => {
    const account = await newAccount();
    const requestId = unique("failed");
    expect((await chat(account.apiKey, requestId, "mock-openai/gpt-4o-mini@error429")).status).toBe(429);
    await flush();
    const response = await api("GET", `/v1/requests/${requestId}/settlement`, account.apiKey);
    expect(response.body).toMatchObject({ request_id: requestId, state: "not_charged", final_charge_micro_usd: null, provider_id: null });
    expect(response.body.usage).toEqual({ uncached_input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 });
  });

  test("an unknown charge is state unknown with a null charge; contradictory counters clamp to 0", async () => {
    const account = await newAccount();
    const requestId = unique("unknown");
    await insertRecord({ account, createdAt: "2025-01-01T00:00:00Z", requestId, finalCharge: null, prompt: 10, completion: 4, cacheRead: 25, reasoning: 9 });
    const response = await api("GET", `/v1/requests/${requestId}/settlement`, account.apiKey);
    expect(response.body).toMatchObject({ state: "unknown", final_charge_micro_usd: null });
    expect(response.body.usage).toEqual({ uncached_input_tokens: 0, cache_read_tokens: 25, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 9 });
    const legacy = unique("legacy");
    await insertRecord({ account, createdAt: "2025-01-01T00:00:00Z", requestId: legacy, finalCharge: null, billingStatus: "legacy_unknown" });
    expect((await api("GET", `/v1/requests/${legacy}/settlement`, account.apiKey)).body.state).toBe("unknown");
  });

  test("a reused request id answers with its newest record; the audit charge wins over the row's", async () => {
    const account = await newAccount();
    const requestId = unique("reused");
    await insertRecord({ account, createdAt: "2025-01-01T00:00:00Z", requestId, finalCharge: 111 });
    await insertRecord({ account, createdAt: "2025-01-02T00:00:00Z", requestId, finalCharge: 222, audit: 220 });
    await insertRecord({ account, createdAt: "2024-12-31T00:00:00Z", requestId, finalCharge: 333 });
    const response = await api("GET", `/v1/requests/${requestId}/settlement`, account.apiKey);
    expect(response.body.final_charge_micro_usd).toBe(220);
  });

  test("the path segment is percent-decoded once and the decoded id is echoed", async () => {
    const account = await newAccount();
    const requestId = `weird/id?x=1&y=%20#frag-${crypto.randomUUID()}`;
    await insertRecord({ account, createdAt: "2025-01-01T00:00:00Z", requestId, finalCharge: 5 });
    const response = await api("GET", `/v1/requests/${encodeURIComponent(requestId)}/settlement`, account.apiKey);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ request_id: requestId, state: "computed", final_charge_micro_usd: 5 });
    expect((await api("GET", `/v1/requests/%E0%A4%A/settlement`, account.apiKey)).status).toBe(400);
  });

  test("pending while the request is still being served (visible to its account only), computed once its record is written", async () => {
    const alice = await newAccount();
    const bob = await newAccount();
    const requestId = unique("in-flight");
    harness.mocks.openai.queueScenarios({ kind: "slow", delayMs: 0, chunkDelayMs: 150, text: "one two three four" });
    const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const reader = response.body!.getReader();
    await reader.read(); // the stream is committed and still running
    const pending = await api("GET", `/v1/requests/${requestId}/settlement`, alice.apiKey);
    expect([pending.status, pending.body]).toEqual([
      200,
      {
        request_id: requestId,
        state: "pending",
        model_id: "mock-openai/gpt-4o-mini",
        provider_id: "mock-openai",
        usage: { uncached_input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 },
        final_charge_micro_usd: null,
      },
    ]);
    expect((await api("GET", `/v1/requests/${requestId}/settlement`, bob.apiKey)).status).toBe(404);
    const other = await harness.server.api("POST", "/v1/namespaces", { token: alice.apiKey, body: { name: "elsewhere" } });
    const bound = await harness.server.mintKey(alice.apiKey, ["usage:read"], other.body.id);
    expect((await api("GET", `/v1/requests/${requestId}/settlement`, bound)).status).toBe(404);
    while (!(await reader.read()).done) {
      // the rest of the stream
    }
    // The record is settled once the stream has ended (just after its last byte), then
    // written: flushed until the receipt comes from it, within a generous bound.
    let settled = await api("GET", `/v1/requests/${requestId}/settlement`, alice.apiKey);
    const pendingEntry = () => harness.server.server.services.pendingSettlements.find(alice.accountId, requestId, null);
    for (let polls = 0; (settled.body.state !== "computed" || pendingEntry() !== undefined) && polls < 300; polls++) {
      await flush();
      await Bun.sleep(20);
      settled = await api("GET", `/v1/requests/${requestId}/settlement`, alice.apiKey);
    }
    expect(settled.body).toMatchObject({ request_id: requestId, state: "computed", provider_id: "mock-openai" });
    expect(settled.body.final_charge_micro_usd).toBeGreaterThan(0);
    expect(pendingEntry()).toBeUndefined();
  });

  test("404 request not found for an unknown id, another tenant's id, and another namespace's id for a namespace-bound key", async () => {
    const alice = await newAccount();
    const bob = await newAccount();
    const requestId = unique("private");
    await chat(alice.apiKey, requestId);
    await flush();
    expect((await api("GET", `/v1/requests/${requestId}/settlement`, alice.apiKey)).status).toBe(200);
    const notFound = { error: "not_found", error_description: "request not found" };
    const missing = await api("GET", `/v1/requests/${unique("never")}/settlement`, alice.apiKey);
    expect([missing.status, missing.body]).toEqual([404, notFound]);
    const foreign = await api("GET", `/v1/requests/${requestId}/settlement`, bob.apiKey);
    expect([foreign.status, foreign.body]).toEqual([404, notFound]);
    // Bob reusing Alice's id only ever sees his own record.
    await insertRecord({ account: bob, createdAt: "2025-01-01T00:00:00Z", requestId, finalCharge: 1 });
    expect((await api("GET", `/v1/requests/${requestId}/settlement`, bob.apiKey)).body.final_charge_micro_usd).toBe(1);
    // Alice's own record: default mock usage 12 + 5 → 12×0.15 + 5×0.6 = 4.8 → 5.
    expect((await api("GET", `/v1/requests/${requestId}/settlement`, alice.apiKey)).body.final_charge_micro_usd).toBe(5);
    // A key bound to Alice's other namespace cannot see the default namespace's request.
    const other = await harness.server.api("POST", "/v1/namespaces", { token: alice.apiKey, body: { name: "other" } });
    const bound = await harness.server.mintKey(alice.apiKey, ["usage:read"], other.body.id);
    const hidden = await api("GET", `/v1/requests/${requestId}/settlement`, bound);
    expect([hidden.status, hidden.body]).toEqual([404, notFound]);
    const ownBound = await harness.server.mintKey(alice.apiKey, ["usage:read"], alice.namespaceId);
    expect((await api("GET", `/v1/requests/${requestId}/settlement`, ownBound)).status).toBe(200);
  });
});

describe("authorization", () => {
  test("every usage route needs usage:read: 401 without a credential, 403 naming the scope without it", async () => {
    const account = await newAccount();
    const keysOnly = await harness.server.mintKey(account.apiKey, ["keys:read", "billing:read"]);
    const paths = [
      `/v1/namespaces/${account.namespaceId}/requests`,
      "/v1/requests",
      `/v1/namespaces/${account.namespaceId}/usage`,
      "/v1/usage",
      "/v1/requests/some-id/settlement",
    ];
    for (const path of paths) {
      const anonymous = await api("GET", path);
      expect({ path, status: anonymous.status, error: anonymous.body.error }).toEqual({ path, status: 401, error: "unauthorized" });
      const forbidden = await api("GET", path, keysOnly);
      expect({ path, status: forbidden.status, body: forbidden.body }).toEqual({
        path,
        status: 403,
        body: { error: "forbidden", error_description: "missing required scope: usage:read" },
      });
    }
  });

  test("another tenant's or an archived nsid is the 404 of a missing namespace, and nothing of theirs leaks", async () => {
    const alice = await newAccount();
    const bob = await newAccount();
    await insertRecord({ account: bob, createdAt: "2025-01-01T00:00:00Z", finalCharge: 9 });
    for (const suffix of ["requests", "usage"]) {
      const foreign = await api("GET", `/v1/namespaces/${bob.namespaceId}/${suffix}`, alice.apiKey);
      const missing = await api("GET", `/v1/namespaces/ns_missing/${suffix}`, alice.apiKey);
      expect([foreign.status, foreign.body]).toEqual([404, missing.body]);
      expect(missing.body).toEqual({ error: "not_found", error_description: "namespace not found" });
    }
    expect((await api("GET", "/v1/requests", alice.apiKey)).body.data).toEqual([]);
    expect((await api("GET", "/v1/usage?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", alice.apiKey)).body.request_count).toBe(0);
  });

  test("a namespace-bound key reads its own namespace's history (by id and as `me`) and 404s on its account's other namespace", async () => {
    const account = await newAccount();
    const other = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "other" } });
    await insertRecord({ account, namespaceId: other.body.id, createdAt: "2025-01-01T00:00:00Z", id: `rq_other_${crypto.randomUUID().slice(0, 8)}` });
    await insertRecord({ account, createdAt: "2025-01-01T00:00:00Z" });
    const bound = await harness.server.mintKey(account.apiKey, ["usage:read"], other.body.id);
    const own = await api("GET", "/v1/requests", bound);
    expect(own.body.data.map((r: any) => r.id)).toEqual([expect.stringMatching(/^rq_other_/)]);
    expect((await api("GET", `/v1/namespaces/${other.body.id}/requests`, bound)).body).toEqual(own.body);
    expect((await api("GET", `/v1/namespaces/${account.namespaceId}/requests`, bound)).status).toBe(404);
    expect((await api("GET", `/v1/namespaces/${account.namespaceId}/usage`, bound)).status).toBe(404);
  });

  test("scope is checked before the namespace, as on every management route: 403 without usage:read, then 404 for an nsid the key cannot address", async () => {
    const account = await newAccount();
    const other = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "other" } });
    const withoutScope = await harness.server.mintKey(account.apiKey, ["keys:read"], other.body.id);
    const withScope = await harness.server.mintKey(account.apiKey, ["usage:read"], other.body.id);
    for (const suffix of ["requests", "usage"]) {
      const forbidden = await api("GET", `/v1/namespaces/${other.body.id}/${suffix}`, withoutScope);
      expect([forbidden.status, forbidden.body.error_description]).toEqual([403, "missing required scope: usage:read"]);
      expect((await api("GET", `/v1/namespaces/${account.namespaceId}/${suffix}`, withScope)).status).toBe(404);
      expect((await api("GET", `/v1/namespaces/${other.body.id}/${suffix}`, withScope)).status).toBe(200);
    }
  });

  test("the OpenAPI document lists every usage route with its scope", async () => {
    const spec = await api("GET", "/openapi/json");
    const scopes = (path: string) => spec.body.paths[path]?.get?.["x-scope"];
    for (const path of ["/v1/namespaces/{nsid}/requests", "/v1/requests", "/v1/namespaces/{nsid}/usage", "/v1/usage", "/v1/requests/{request_id}/settlement"]) {
      expect({ path, scope: scopes(path) }).toEqual({ path, scope: "usage:read" });
    }
    const names = (path: string) => spec.body.paths[path].get.parameters.map((p: any) => `${p.in}:${p.name}`);
    expect(names("/v1/namespaces/{nsid}/requests")).toEqual(["path:nsid"]);
    expect(names("/v1/requests")).toEqual(["query:limit", "query:offset", "query:after"]);
    expect(names("/v1/usage")).toEqual(["query:from", "query:to"]);
    expect(names("/v1/requests/{request_id}/settlement")).toEqual(["path:request_id"]);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../../support/inference-harness";
import type { TestAccount } from "../../support/test-server";
import type { RequestRow } from "../../../src/metering/metering-rows";

/**
 * GET /v1/namespaces/{nsid}/usage/daily against real PostgreSQL. Records with chosen
 * timestamps, keys, models, providers and funding go in through the gateway's own
 * metering writer (the sink and write buffer every request's record takes); one comes
 * from real inference.
 */

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(async () => {
  await harness.close();
});

const api = (path: string, token: string) => harness.server.api("GET", path, { token });
const services = () => harness.server.server.services;

interface Written {
  at: string;
  key?: string | null;
  grant?: string | null;
  model?: string;
  provider?: string;
  byok?: boolean;
  prompt?: number;
  completion?: number;
  /** The row's charge; null: unknown. */
  charge?: number | null;
  /** A billing_audit row's charge (as records written before migration 0030 have), which wins over the row's. */
  audit?: number;
}

/** Writes request records through the metering sink, then flushes the buffer; a legacy audit row goes in directly. */
async function write(account: TestAccount, rows: Written[]): Promise<void> {
  const sink = services().meteringSink;
  for (const row of rows) {
    const id = `rq_daily_${crypto.randomUUID().replaceAll("-", "")}`;
    const byok = row.byok ?? false;
    const charge = byok ? 0 : row.charge === undefined ? 10 : row.charge;
    const record: RequestRow = {
      id,
      request_id: id,
      account_id: account.accountId,
      namespace_id: account.namespaceId,
      api_key_id: row.grant ? null : row.key === undefined ? "k_alpha" : row.key,
      oauth_token_id: row.grant ?? null,
      status: "succeeded",
      status_code: 200,
      billing_status: byok ? "not_charged" : charge === null ? "unknown" : "computed",
      model_id: row.model ?? "mock-openai/gpt-4o-mini",
      provider_id: row.provider ?? "mock-openai",
      provider_model_id: "m",
      routing_profile: null,
      funding_source: byok ? "byok" : "cloud_credit",
      streamed: false,
      finish_reason: "stop",
      first_token_kind: "text",
      prompt_tokens: row.prompt ?? 100,
      completion_tokens: row.completion ?? 10,
      reasoning_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      final_charge_micro_usd: charge,
      request_duration_ms: 5,
      upstream_duration_ms: 4,
      generation_duration_ms: 1,
      ttft_ms: 3,
      used_capabilities: [],
      usage_evidence: { source: "provider_reported", effective_usage: {}, raw_usage: {}, estimator: { chars_per_token: 4, version: "test" }, raw_usage_frames: [] } as never,
      warnings: [],
      attempts: [],
      charge_audit: null,
      created_at: row.at,
      completed_at: row.at,
    };
    sink.request(record);
    if (row.audit !== undefined) {
      await services().db.sql`insert into billing_audit (request_record_id, account_id, namespace_id, charge_micro_usd, pricing, buckets)
        values (${id}, ${account.accountId}, ${account.namespaceId}, ${row.audit}, '{}', '{}')`;
    }
  }
  await services().writeBuffer.flush();
  // The legacy billing-audit charges are written by hand, around the metering writer: the
  // usage rollups are rebuilt from the records and the audit, as an operator would
  // (docs/api/usage-and-history.md "Usage reads by day").
  if (rows.some((row) => row.audit !== undefined)) await services().db.sql`select usage_rollups_rebuild(${account.accountId})`;
}

const WINDOW = "from=2026-04-01T00:00:00Z&to=2026-04-05T00:00:00Z";

describe("GET /v1/namespaces/{nsid}/usage/daily", () => {
  let account: TestAccount;
  const daily = async (query: string) => {
    const response = await api(`/v1/namespaces/${account.namespaceId}/usage/daily?${query}`, account.apiKey);
    expect(response.status).toBe(200);
    return response.body;
  };

  beforeAll(async () => {
    account = await harness.server.createAccount(undefined, 10_000_000);
    await write(account, [
      // Outside the window on either side.
      { at: "2026-03-31T23:59:59.999Z", prompt: 1_000_000, charge: 1_000_000 },
      { at: "2026-04-05T00:00:00.000Z", prompt: 1_000_000, charge: 1_000_000 },
      // 1 April, its first and last millisecond: two keys, two models.
      { at: "2026-04-01T00:00:00.000Z", key: "k_alpha", prompt: 100, completion: 10, charge: 50, audit: 70 },
      { at: "2026-04-01T23:59:59.999Z", key: "k_beta", model: "mock-anthropic/claude-sonnet-4-5", provider: "mock-anthropic", prompt: 200, completion: 20, charge: 300 },
      // 2 April: a BYOK request (tokens, no charge), an OAuth token's request, an unknown charge.
      { at: "2026-04-02T12:00:00.000Z", key: "k_alpha", byok: true, prompt: 400, completion: 40 },
      { at: "2026-04-02T13:00:00.000Z", grant: "og_token", prompt: 10, completion: 1, charge: 7 },
      { at: "2026-04-02T14:00:00.000Z", key: "k_beta", prompt: 1, completion: 1, charge: null },
      // No request on 3 April. 4 April: another provider for the same model.
      { at: "2026-04-04T08:00:00.000Z", key: "k_alpha", provider: "mock-openai-2", prompt: 3, completion: 3, charge: 11 },
    ]);
  });

  test("without group_by: one row per UTC day with requests, group null, in day order; the empty day is left out", async () => {
    const body = await daily(WINDOW);
    expect(body).toEqual({
      from: "2026-04-01T00:00:00.000Z",
      to: "2026-04-05T00:00:00.000Z",
      group_by: null,
      data: [
        // The audit charge (70) wins over the row's (50).
        { date: "2026-04-01", group: null, request_count: 2, prompt_tokens: 300, completion_tokens: 30, spend_micro_usd: 370 },
        // BYOK adds its tokens and nothing to spend; the unknown charge adds nothing.
        { date: "2026-04-02", group: null, request_count: 3, prompt_tokens: 411, completion_tokens: 42, spend_micro_usd: 7 },
        { date: "2026-04-04", group: null, request_count: 1, prompt_tokens: 3, completion_tokens: 3, spend_micro_usd: 11 },
      ],
    });
  });

  test("group_by api_key splits each day by key; an OAuth token's request has no key (group null)", async () => {
    const body = await daily(`${WINDOW}&group_by=api_key`);
    expect(body.group_by).toBe("api_key");
    expect(body.data.map((r: any) => [r.date, r.group, r.request_count, r.spend_micro_usd])).toEqual([
      ["2026-04-01", "k_alpha", 1, 70],
      ["2026-04-01", "k_beta", 1, 300],
      ["2026-04-02", "k_alpha", 1, 0],
      ["2026-04-02", "k_beta", 1, 0],
      ["2026-04-02", null, 1, 7],
      ["2026-04-04", "k_alpha", 1, 11],
    ]);
  });

  test("group_by model and group_by provider split by their own field", async () => {
    const byModel = await daily(`${WINDOW}&group_by=model`);
    expect(byModel.data.map((r: any) => [r.date, r.group, r.request_count])).toEqual([
      ["2026-04-01", "mock-anthropic/claude-sonnet-4-5", 1],
      ["2026-04-01", "mock-openai/gpt-4o-mini", 1],
      ["2026-04-02", "mock-openai/gpt-4o-mini", 3],
      ["2026-04-04", "mock-openai/gpt-4o-mini", 1],
    ]);
    const byProvider = await daily(`${WINDOW}&group_by=provider`);
    expect(byProvider.data.map((r: any) => [r.date, r.group, r.request_count])).toEqual([
      ["2026-04-01", "mock-anthropic", 1],
      ["2026-04-01", "mock-openai", 1],
      ["2026-04-02", "mock-openai", 3],
      ["2026-04-04", "mock-openai-2", 1],
    ]);
  });

  test("for every grouping, the sums over data equal the namespace usage aggregate of the same window", async () => {
    const windows = [WINDOW, "from=2026-04-01T12:00:00Z&to=2026-04-04T08:00:00Z", "from=2026-03-01T00:00:00Z&to=2026-05-01T00:00:00Z"];
    for (const window of windows) {
      const aggregate = (await api(`/v1/namespaces/${account.namespaceId}/usage?${window}`, account.apiKey)).body;
      for (const groupBy of ["", "&group_by=model", "&group_by=api_key", "&group_by=provider"]) {
        const data = (await daily(`${window}${groupBy}`)).data as any[];
        const sum = (field: string) => data.reduce((total, row) => total + row[field], 0);
        expect({ window, groupBy, request_count: sum("request_count"), prompt_tokens: sum("prompt_tokens"), completion_tokens: sum("completion_tokens"), spend_micro_usd: sum("spend_micro_usd") }).toEqual({
          window,
          groupBy,
          request_count: aggregate.request_count,
          prompt_tokens: aggregate.prompt_tokens,
          completion_tokens: aggregate.completion_tokens,
          spend_micro_usd: aggregate.spend_micro_usd,
        });
      }
    }
  });

  test("by default the last 30 days: a request made now is in today's row, one from April is not", async () => {
    const token = harness.account.apiKey;
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 1000, completion: 200 } });
    const response = await harness.server.api("POST", "/v1/chat/completions", { token, body: { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } });
    expect(response.status).toBe(200);
    await services().writeBuffer.flush();
    const before = Date.now();
    const body = (await api(`/v1/namespaces/${harness.account.namespaceId}/usage/daily`, token)).body;
    const span = Date.parse(body.to) - Date.parse(body.from);
    expect(span).toBe(30 * 24 * 60 * 60 * 1000);
    expect(Date.parse(body.to)).toBeGreaterThanOrEqual(before);
    const today = new Date().toISOString().slice(0, 10);
    expect(body.data).toContainEqual({ date: today, group: null, request_count: 1, prompt_tokens: 1000, completion_tokens: 200, spend_micro_usd: 270 });
  });

  test("a window of up to 400 days is answered; a longer one, a bad group_by or a bad date is 400 naming it", async () => {
    expect((await api(`/v1/namespaces/${account.namespaceId}/usage/daily?from=2025-03-01T00:00:00Z&to=2026-04-05T00:00:00Z`, account.apiKey)).status).toBe(200);
    const cases: [string, string][] = [
      ["from=2025-02-28T00:00:00Z&to=2026-04-05T00:00:00Z", "400 days"],
      ["to=2020-01-01T00:00:00Z&from=2021-01-01T00:00:00Z", "from"],
      ["group_by=key", "group_by"],
      ["group_by=", "group_by"],
      ["from=last-week", "from"],
    ];
    for (const [query, mentions] of cases) {
      const response = await api(`/v1/namespaces/${account.namespaceId}/usage/daily?${query}`, account.apiKey);
      expect({ query, status: response.status, error: response.body.error }).toEqual({ query, status: 400, error: "bad_request" });
      expect(response.body.error_description).toContain(mentions);
    }
  });

  test("needs usage:read; another tenant's namespace is the 404 of a missing one", async () => {
    const noScope = await harness.server.mintKey(account.apiKey, ["keys:read"]);
    expect((await api(`/v1/namespaces/${account.namespaceId}/usage/daily`, noScope)).status).toBe(403);
    const other = await harness.server.createAccount();
    const theirs = await api(`/v1/namespaces/${account.namespaceId}/usage/daily?${WINDOW}`, other.apiKey);
    const missing = await api(`/v1/namespaces/ns_missing/usage/daily?${WINDOW}`, other.apiKey);
    expect(theirs.status).toBe(404);
    expect(theirs.text).toBe(missing.text);
    expect((await api(`/v1/namespaces/me/usage/daily?${WINDOW}`, other.apiKey)).body.data).toEqual([]);
  });

  test("the OpenAPI document lists the route with its scope", async () => {
    const spec = await harness.server.api("GET", "/openapi/json");
    expect(spec.body.paths["/v1/namespaces/{nsid}/usage/daily"].get["x-scope"]).toBe("usage:read");
  });
});

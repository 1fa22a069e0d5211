import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startInferenceHarness, type InferenceHarness } from "../../support/inference-harness";
import type { TestAccount } from "../../support/test-server";
import { deviceTokens } from "../../oauth/oauth-support";

/**
 * Request attribution (which credential made each request) and the history filters of
 * GET /v1/namespaces/{nsid}/requests, against real PostgreSQL and real inference through
 * the mock upstreams. Rows with chosen timestamps go in through SQL where a test needs them.
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

const api = (method: string, path: string, token?: string) => harness.server.api(method, path, { token });
const flush = () => harness.server.server.services.writeBuffer.flush();
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;

async function mintKey(account: TestAccount, name: string): Promise<{ id: string; token: string }> {
  const created = await harness.server.api("POST", `/v1/namespaces/${account.namespaceId}/keys`, {
    token: account.apiKey,
    body: { display_name: name, scopes: ["inference:invoke", "usage:read"] },
  });
  expect(created.status).toBe(200);
  return { id: created.body.id, token: created.body.token };
}

async function chat(token: string, requestId: string, body: Record<string, unknown> = {}) {
  const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], ...body }),
  });
  await response.text();
  return response.status;
}

describe("request attribution", () => {
  let account: TestAccount;
  let key: { id: string; token: string };
  let grantId: string;
  const ids = { key: unique("by-key"), oauth: unique("by-oauth"), operator: unique("by-operator") };
  let records: Map<string, any>;

  beforeAll(async () => {
    account = await harness.server.createAccount(undefined, 50_000_000);
    key = await mintKey(account, "attributed");
    const tokens = await deviceTokens(harness.server, account.apiKey, account.namespaceId, "inference:invoke usage:read");
    const grants = await api("GET", `/v1/namespaces/${account.namespaceId}/oauth/tokens`, account.apiKey);
    expect(grants.body.data).toHaveLength(1);
    grantId = grants.body.data[0].id;
    expect(await chat(key.token, ids.key)).toBe(200);
    expect(await chat(tokens.access_token, ids.oauth)).toBe(200);
    expect(await chat(account.apiKey, ids.operator)).toBe(200);
    await flush();
    const listed = await api("GET", `/v1/namespaces/${account.namespaceId}/requests`, account.apiKey);
    expect(listed.status).toBe(200);
    records = new Map(listed.body.data.map((r: any) => [r.request_id, r]));
  });

  test("a key's request carries the key's id as GET …/keys lists it, and a null oauth_token_id", () => {
    expect(records.get(ids.key)).toMatchObject({ api_key_id: key.id, oauth_token_id: null });
  });

  test("an OAuth token's request carries its grant's id as GET …/oauth/tokens lists it, and a null api_key_id", () => {
    expect(grantId).toMatch(/^og_/);
    expect(records.get(ids.oauth)).toMatchObject({ api_key_id: null, oauth_token_id: grantId });
  });

  test("the account-wide key the operator issued is attributed like any other key", () => {
    const record = records.get(ids.operator);
    expect(record.api_key_id).toMatch(/^k_/);
    expect(record.oauth_token_id).toBeNull();
  });

  test("records written before attribution keep null in both fields", async () => {
    const id = `rq_legacy_${crypto.randomUUID().replaceAll("-", "")}`;
    await sql`insert into requests (id, request_id, account_id, namespace_id, status, status_code, billing_status, streamed, usage_evidence, created_at, completed_at)
      values (${id}, 'legacy', ${account.accountId}, ${account.namespaceId}, 'succeeded', 200, 'computed', false, '{}'::jsonb, now() - interval '1 hour', now() - interval '1 hour')`;
    const listed = await api("GET", `/v1/namespaces/${account.namespaceId}/requests`, account.apiKey);
    expect(listed.body.data.find((r: any) => r.id === id)).toMatchObject({ api_key_id: null, oauth_token_id: null });
  });
});

interface Row {
  status?: string;
  model?: string;
  key?: string | null;
  streamed?: boolean;
  createdAt: string;
}

/** Inserts request records with chosen values into the account's namespace; returns their ids in order. */
async function insertRows(account: TestAccount, rows: Row[]): Promise<string[]> {
  const ids: string[] = [];
  for (const row of rows) {
    const id = `rq_filter_${crypto.randomUUID().replaceAll("-", "")}`;
    ids.push(id);
    await sql`insert into requests (id, request_id, account_id, namespace_id, api_key_id, status, status_code, billing_status, model_id, provider_id,
        funding_source, streamed, final_charge_micro_usd, usage_evidence, created_at, completed_at)
      values (${id}, ${id}, ${account.accountId}, ${account.namespaceId}, ${row.key ?? null}, ${row.status ?? "succeeded"}, ${row.status === "failed" ? 502 : 200},
        'computed', ${row.model ?? "mock-openai/gpt-4o-mini"}, 'mock-openai', 'cloud_credit', ${row.streamed ?? false}, 1, '{}'::jsonb,
        ${row.createdAt}::timestamptz, ${row.createdAt}::timestamptz)`;
  }
  return ids;
}

describe("GET /v1/namespaces/{nsid}/requests filters", () => {
  let account: TestAccount;
  let ids: string[];
  const list = async (query: string) => {
    const response = await api("GET", `/v1/namespaces/${account.namespaceId}/requests?${query}`, account.apiKey);
    expect(response.status).toBe(200);
    return (response.body.data as any[]).map((r) => r.id);
  };
  /** The ids of the inserted rows at these positions, newest first (as the history lists them). */
  const rowsAt = (...positions: number[]) => positions.sort((a, b) => b - a).map((i) => ids[i]);

  beforeAll(async () => {
    account = await harness.server.createAccount();
    ids = await insertRows(account, [
      { createdAt: "2026-03-01T10:00:00Z", key: "k_alpha", model: "mock-openai/gpt-4o-mini" },
      { createdAt: "2026-03-01T11:00:00Z", key: "k_alpha", model: "mock-anthropic/claude-sonnet-4-5", streamed: true },
      { createdAt: "2026-03-02T00:00:00Z", key: "k_beta", status: "failed" },
      { createdAt: "2026-03-02T12:00:00Z", key: "k_alpha", status: "failed", streamed: true },
      { createdAt: "2026-03-03T09:30:00Z", key: null, model: "mock-anthropic/claude-sonnet-4-5" },
    ]);
  });

  test("without filters, every record newest first", async () => {
    expect(await list("")).toEqual(rowsAt(0, 1, 2, 3, 4));
  });

  test("each filter narrows on its own field", async () => {
    expect(await list("status=failed")).toEqual(rowsAt(2, 3));
    expect(await list("model_id=mock-anthropic/claude-sonnet-4-5")).toEqual(rowsAt(1, 4));
    expect(await list("api_key_id=k_alpha")).toEqual(rowsAt(0, 1, 3));
    expect(await list("streamed=true")).toEqual(rowsAt(1, 3));
    expect(await list("streamed=false")).toEqual(rowsAt(0, 2, 4));
  });

  test("from is inclusive and to exclusive, at the exact instant", async () => {
    expect(await list("from=2026-03-02T00:00:00Z")).toEqual(rowsAt(2, 3, 4));
    expect(await list("to=2026-03-02T00:00:00Z")).toEqual(rowsAt(0, 1));
    expect(await list("from=2026-03-01T11:00:00Z&to=2026-03-02T12:00:00Z")).toEqual(rowsAt(1, 2));
    // An offset names the same instant.
    expect(await list(`from=${encodeURIComponent("2026-03-02T01:00:00+01:00")}`)).toEqual(rowsAt(2, 3, 4));
  });

  test("filters combine with AND: the one failed request of a key", async () => {
    expect(await list("api_key_id=k_alpha&status=failed")).toEqual(rowsAt(3));
    expect(await list("api_key_id=k_alpha&streamed=true&from=2026-03-02T00:00:00Z")).toEqual(rowsAt(3));
    expect(await list("api_key_id=k_beta&streamed=true")).toEqual([]);
  });

  test("an unknown value matches nothing rather than failing", async () => {
    expect(await list("status=exploded")).toEqual([]);
    expect(await list("model_id=nobody/nothing")).toEqual([]);
    expect(await list("api_key_id=k_unknown")).toEqual([]);
  });

  test("paging works within a filter: limit and offset count filtered records", async () => {
    const first = await api("GET", `/v1/namespaces/${account.namespaceId}/requests?api_key_id=k_alpha&limit=2`, account.apiKey);
    expect(first.body).toMatchObject({ limit: 2, offset: 0 });
    expect(first.body.data.map((r: any) => r.id)).toEqual(rowsAt(1, 3));
    expect(await list("api_key_id=k_alpha&limit=2&offset=2")).toEqual(rowsAt(0));
    expect(await list("status=succeeded&limit=1&offset=1")).toEqual(rowsAt(1));
  });

  test("the flat /v1/requests takes the same filters", async () => {
    const flat = await api("GET", "/v1/requests?api_key_id=k_alpha&status=failed", account.apiKey);
    expect(flat.body.data.map((r: any) => r.id)).toEqual(rowsAt(3));
  });

  test("a malformed filter is 400 bad_request naming the parameter", async () => {
    const cases: [string, string][] = [
      ["streamed=yes", "streamed"],
      ["streamed=", "streamed"],
      ["from=yesterday", "from"],
      ["to=2026-02-30T00:00:00Z", "to"],
      ["from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", "from"],
      ["status=", "status"],
      ["model_id=", "model_id"],
      [`api_key_id=${"k".repeat(600)}`, "api_key_id"],
      // Text PostgreSQL cannot hold: refused here, never passed to the database (was a 500).
      ["status=%00", "status"],
      ["model_id=a%00b", "model_id"],
      ["api_key_id=%00", "api_key_id"],
    ];
    for (const [query, name] of cases) {
      const response = await api("GET", `/v1/namespaces/${account.namespaceId}/requests?${query}`, account.apiKey);
      expect({ query, status: response.status, error: response.body.error }).toEqual({ query, status: 400, error: "bad_request" });
      expect(response.body.error_description).toContain(name);
    }
  });

  test("another account's key id finds nothing of theirs", async () => {
    const other = await harness.server.createAccount();
    await insertRows(other, [{ createdAt: "2026-03-01T10:00:00Z", key: "k_alpha" }]);
    expect(await list("api_key_id=k_alpha")).toEqual(rowsAt(0, 1, 3));
  });
});

describe("the key filter's plan", () => {
  test("reads the (namespace, api_key_id, created_at) index range, not the whole namespace", async () => {
    const account = await harness.server.createAccount();
    // A busy namespace: 4,000 records of other keys, 3 of the one asked for.
    await sql`insert into requests (id, request_id, account_id, namespace_id, api_key_id, status, status_code, billing_status, streamed, usage_evidence, created_at, completed_at)
      select 'rq_bulk_' || g || '_' || ${account.accountId}, 'bulk', ${account.accountId}, ${account.namespaceId}, 'k_busy_' || (g % 20), 'succeeded', 200, 'computed', false, '{}'::jsonb,
             now() - make_interval(secs => g), now() - make_interval(secs => g)
        from generate_series(1, 4000) g`;
    await insertRows(account, [{ createdAt: "2026-01-01T00:00:00Z", key: "k_rare" }, { createdAt: "2026-01-02T00:00:00Z", key: "k_rare" }, { createdAt: "2026-01-03T00:00:00Z", key: "k_rare" }]);
    await sql`analyze requests`;
    const { query } = await import("../../../src/db/named-queries");
    const params = [account.accountId, account.namespaceId, 25, 0, null, null, null, null, null, null, null, "k_rare"];
    const plan = (await sql.unsafe(`explain ${query("listKeyRequests")}`, params as never[])).map((row: any) => row["QUERY PLAN"]).join("\n");
    // The request table is partitioned by month (migration 0025): the month holding the busy
    // namespace is read through its partition of the (namespace, api_key_id, created_at)
    // index; months with next to nothing in them may be read whole.
    const busy = /Index Scan using \S*namespace_id_api_key_id_created_at\S* on (requests_p\d{4}_\d{2})/.exec(plan)?.[1];
    expect(busy).toBeDefined();
    expect(plan).not.toContain(`Seq Scan on ${busy}`);
    expect(plan).not.toMatch(/namespace_id_created_at\S* on /);
    const listed = await api("GET", `/v1/namespaces/${account.namespaceId}/requests?api_key_id=k_rare`, account.apiKey);
    expect(listed.body.data).toHaveLength(3);
  });
});

describe("GET /v1/namespaces/{nsid}/requests/{id}", () => {
  let account: TestAccount;
  const detail = (id: string, token = account.apiKey, nsid = account.namespaceId) => api("GET", `/v1/namespaces/${nsid}/requests/${encodeURIComponent(id)}`, token);

  beforeAll(async () => {
    account = await harness.server.createAccount(undefined, 50_000_000);
  });

  test("a fallback's record: the history's fields, plus each attempt with its provider, outcome and timing", async () => {
    const requestId = unique("fallback");
    harness.mocks.anthropic.queueScenarios({ kind: "error", status: 503 });
    harness.mocks.openai.queueScenarios({ kind: "text", usage: { prompt: 30, completion: 7 } });
    expect(await chat(account.apiKey, requestId, { model: "x/y", models: ["mock-anthropic/claude-sonnet-4-5", "mock-openai/gpt-4o-mini"] })).toBe(200);
    await flush();
    const listed = (await api("GET", `/v1/namespaces/${account.namespaceId}/requests`, account.apiKey)).body.data.find((r: any) => r.request_id === requestId);
    const response = await detail(listed.id);
    expect(response.status).toBe(200);
    const { warnings, attempts, ...record } = response.body;
    expect(record).toEqual(listed);
    expect(Array.isArray(warnings)).toBe(true);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ ordinal: 1, provider_id: "mock-anthropic", model_id: "mock-anthropic/claude-sonnet-4-5", funding_source: "cloud_credit", outcome: "provider_error", status_code: 503, ttft_ms: null });
    expect(typeof attempts[0].error).toBe("string");
    expect(attempts[1]).toMatchObject({ ordinal: 2, provider_id: "mock-openai", model_id: "mock-openai/gpt-4o-mini", outcome: "success", status_code: 200, error: null });
    expect(Number.isInteger(attempts[1].duration_ms)).toBe(true);
    expect(attempts[1].ttft_ms).toBeLessThanOrEqual(attempts[1].duration_ms);
    expect(Object.keys(attempts[1]).sort()).toEqual(["duration_ms", "error", "funding_source", "model_id", "ordinal", "outcome", "provider_id", "status_code", "ttft_ms"]);
  });

  test("a refused request's record names the policy, in refused_by and in its warnings, and has no attempt", async () => {
    const key = await mintKey(account, "refused");
    const policy = await harness.server.api("POST", `/v1/namespaces/${account.namespaceId}/policies`, {
      token: account.apiKey,
      body: { name: "no streams", kind: "guardrail", spec: { allow_streaming: false } },
    });
    await harness.server.api("POST", `/v1/namespaces/${account.namespaceId}/policies/${policy.body.id}/bind`, { token: account.apiKey, body: { principal_type: "api_key", principal_id: key.id } });
    const requestId = unique("refused");
    expect(await chat(key.token, requestId, { stream: true })).toBe(403);
    await flush();
    const listed = (await api("GET", `/v1/namespaces/${account.namespaceId}/requests?api_key_id=${key.id}`, account.apiKey)).body.data[0];
    expect(listed.request_id).toBe(requestId);
    const body = (await detail(listed.id)).body;
    expect(body.refused_by.policy_id).toBe(policy.body.id);
    expect(body.warnings).toContainEqual(expect.objectContaining({ code: "refused_by_policy", field: policy.body.id }));
    expect(body.attempts).toEqual([]);
  });

  test("a record written before attempts were kept has attempts null", async () => {
    const id = `rq_old_${crypto.randomUUID().replaceAll("-", "")}`;
    await sql`insert into requests (id, request_id, account_id, namespace_id, status, status_code, billing_status, streamed, usage_evidence, created_at, completed_at)
      values (${id}, 'old', ${account.accountId}, ${account.namespaceId}, 'succeeded', 200, 'computed', false, '{}', now(), now())`;
    const body = (await detail(id)).body;
    expect(body).toMatchObject({ id, warnings: [], attempts: null, api_key_id: null, oauth_token_id: null });
  });

  test("another tenant's record, another namespace's and an unknown id are the same 404; `me` works", async () => {
    const [own] = (await api("GET", `/v1/namespaces/${account.namespaceId}/requests?limit=1`, account.apiKey)).body.data;
    expect((await detail(own.id, account.apiKey, "me")).status).toBe(200);
    const missing = await detail("rq_missing");
    expect(missing.status).toBe(404);
    const other = await harness.server.createAccount();
    const theirs = await detail(own.id, other.apiKey, "me");
    expect(theirs.status).toBe(404);
    expect(theirs.text).toBe(missing.text);
    const second = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: `other-${crypto.randomUUID().slice(0, 8)}` } });
    const elsewhere = await detail(own.id, account.apiKey, second.body.id);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.text).toBe(missing.text);
    const noScope = await harness.server.mintKey(account.apiKey, ["keys:read"]);
    expect((await detail(own.id, noScope)).status).toBe(403);
  });
});

describe("eachRequestPage (the export of a whole filtered history)", () => {
  test("reads every matching record once, newest first, page after page from where the last ended", async () => {
    const account = await harness.server.createAccount();
    // Ties on created_at, and instants a microsecond apart (a millisecond Date would merge them).
    await sql`insert into requests (id, request_id, account_id, namespace_id, api_key_id, status, status_code, billing_status, streamed, usage_evidence, created_at, completed_at)
      select 'rq_page_' || lpad(g::text, 3, '0'), 'page', ${account.accountId}, ${account.namespaceId}, case when g % 3 = 0 then 'k_third' else 'k_other' end,
             'succeeded', 200, 'computed', g % 2 = 0, '{}',
             '2026-05-01T00:00:00Z'::timestamptz + make_interval(secs => (g / 4) * 0.000001), now()
        from generate_series(1, 23) g`;
    const { eachRequestPage } = await import("../../../src/management/usage/usage-service");
    const services = harness.server.server.services;
    const tenant = { accountId: account.accountId, namespaceId: account.namespaceId };
    const read = async (filters = {}) => {
      const pages: string[][] = [];
      for await (const page of eachRequestPage(services, tenant, filters, 4)) pages.push(page.map((r) => r.id));
      return pages;
    };
    const all = await read();
    const listed = (await api("GET", `/v1/namespaces/${account.namespaceId}/requests?limit=100`, account.apiKey)).body.data.map((r: any) => r.id);
    expect(listed).toHaveLength(23);
    expect(all.flat()).toEqual(listed);
    expect(all.map((page) => page.length)).toEqual([4, 4, 4, 4, 4, 3]);
    // With filters, on both statements (the key filter has its own).
    const third = (await read({ apiKeyId: "k_third" })).flat();
    expect(third).toEqual(listed.filter((id: string) => Number(id.slice(-3)) % 3 === 0));
    const streamedThird = (await read({ apiKeyId: "k_third", streamed: true })).flat();
    expect(streamedThird).toEqual(listed.filter((id: string) => Number(id.slice(-3)) % 6 === 0));
    expect(await read({ status: "failed" })).toEqual([]);
  });
});

describe("GET …/requests past the first pages: after and next_after", () => {
  let account: TestAccount;
  /** Every record of the namespace, newest first, as one listing gives them. */
  let everything: string[];
  const get = (query: string, token = account.apiKey, nsid: string = account.namespaceId) => api("GET", `/v1/namespaces/${nsid}/requests?${query}`, token);

  /** Follows next_after from the first page to the last; the ids of each page. */
  async function walk(query: string, limit: number): Promise<string[][]> {
    const pages: string[][] = [];
    let after: string | null = null;
    do {
      const response = await get(`${query}&limit=${limit}${after === null ? "" : `&after=${encodeURIComponent(after)}`}`);
      expect(response.status).toBe(200);
      pages.push(response.body.data.map((r: any) => r.id));
      after = response.body.next_after;
      if (after !== null) expect(after).toBe(response.body.data.at(-1).id);
    } while (after !== null && pages.length < 50);
    return pages;
  }

  beforeAll(async () => {
    account = await harness.server.createAccount();
    // 23 records, in groups of four at the same microsecond (ties broken by id), others a
    // microsecond apart (a millisecond Date would merge them); keys, statuses and streaming vary.
    await sql`insert into requests (id, request_id, account_id, namespace_id, api_key_id, status, status_code, billing_status, model_id, streamed, usage_evidence, created_at, completed_at)
      select 'rq_walk_' || lpad(g::text, 3, '0'), 'walk', ${account.accountId}, ${account.namespaceId}, case when g % 3 = 0 then 'k_third' else 'k_other' end,
             case when g % 5 = 0 then 'failed' else 'succeeded' end, 200, 'computed', case when g % 2 = 0 then 'm/even' else 'm/odd' end, g % 4 = 0, '{}',
             '2026-05-01T00:00:00Z'::timestamptz + make_interval(secs => (g / 4) * 0.000001 + (g / 8) * 86400), now()
        from generate_series(1, 23) g`;
    everything = (await get("limit=100")).body.data.map((r: any) => r.id);
    expect(everything).toHaveLength(23);
  });

  test("each page says where the next starts; following next_after reads every record once, newest first, and the last page says null", async () => {
    const first = await get("limit=5");
    expect(Object.keys(first.body).sort()).toEqual(["data", "limit", "next_after", "offset"]);
    expect(first.body).toMatchObject({ limit: 5, offset: 0, next_after: everything[4] });
    const pages = await walk("", 5);
    expect(pages.map((page) => page.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat()).toEqual(everything);
    // A page that ends exactly at the last record says so: no empty page to ask for.
    const even = await walk("", 23);
    expect(even).toEqual([everything]);
    expect((await get("limit=100")).body.next_after).toBeNull();
  });

  test("after works with every filter, alone and combined, on both statements (the key filter has its own)", async () => {
    for (const query of [
      "status=failed",
      "status=succeeded",
      "model_id=m%2Feven",
      "streamed=true",
      "api_key_id=k_third",
      "api_key_id=k_other&streamed=false",
      "from=2026-05-02T00:00:00Z",
      "to=2026-05-03T00:00:00Z",
      "from=2026-05-02T00:00:00Z&to=2026-05-03T00:00:00Z&status=succeeded&api_key_id=k_other",
    ]) {
      const filtered = (await get(`${query}&limit=100`)).body.data.map((r: any) => r.id);
      expect(filtered.length).toBeGreaterThan(0);
      const pages = await walk(query, 2);
      expect({ query, ids: pages.flat() }).toEqual({ query, ids: filtered });
      expect(pages.slice(0, -1).every((page) => page.length === 2)).toBe(true);
    }
  });

  test("the record after names sets a position only: it need not match the filters, and the offset counts from it", async () => {
    const failed = (await get("status=failed&limit=100")).body.data.map((r: any) => r.id);
    const succeeded = everything.find((id, index) => index > 3 && !failed.includes(id))!;
    const olderFailed = failed.filter((id: string) => everything.indexOf(id) > everything.indexOf(succeeded));
    const page = await get(`status=failed&limit=100&after=${succeeded}`);
    expect(page.body.data.map((r: any) => r.id)).toEqual(olderFailed);
    const skipped = await get(`limit=3&offset=2&after=${everything[5]}`);
    expect(skipped.body.data.map((r: any) => r.id)).toEqual(everything.slice(8, 11));
    expect(skipped.body).toMatchObject({ limit: 3, offset: 2, next_after: everything[10] });
    const last = await get(`after=${everything.at(-1)}`);
    expect(last.body).toMatchObject({ data: [], next_after: null });
  });

  test("the flat /v1/requests takes after and answers next_after", async () => {
    const flat = await api("GET", `/v1/requests?limit=4&after=${everything[3]}`, account.apiKey);
    expect(flat.body.data.map((r: any) => r.id)).toEqual(everything.slice(4, 8));
    expect(flat.body.next_after).toBe(everything[7]);
  });

  test("another tenant's record, another namespace's and a missing id are the same 400, byte for byte: a cursor reveals nothing", async () => {
    const missing = await get("after=rq_does_not_exist");
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe("bad_request");
    expect(missing.body.error_description).toContain("after");
    const stranger = await harness.server.createAccount();
    const theirs = await get(`after=${everything[0]}`, stranger.apiKey, stranger.namespaceId);
    expect(theirs.status).toBe(400);
    expect(theirs.text).toBe(missing.text);
    const theirsFlat = await api("GET", `/v1/requests?after=${everything[0]}`, stranger.apiKey);
    expect(theirsFlat.text).toBe(missing.text);
    const second = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: `walk-${crypto.randomUUID().slice(0, 8)}` } });
    expect(second.status).toBe(200);
    const elsewhere = await get(`after=${everything[0]}`, account.apiKey, second.body.id);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toBe(missing.text);
    // Nor does the stranger's own listing move: their namespace is empty either way.
    expect((await get("limit=100", stranger.apiKey, stranger.namespaceId)).body).toMatchObject({ data: [], next_after: null });
  });

  test("offset is bounded at 10,000: past it a 400 that says to page with after", async () => {
    const deepest = await get("offset=10000");
    expect(deepest.status).toBe(200);
    expect(deepest.body).toMatchObject({ data: [], offset: 10000, next_after: null });
    for (const offset of ["10001", "1100000", "99999999999999999999", "000000000000000000000010001"]) {
      const response = await get(`limit=100&offset=${offset}`);
      expect({ offset, status: response.status, error: response.body.error }).toEqual({ offset, status: 400, error: "bad_request" });
      expect(response.body.error_description).toContain("after=");
      expect(response.body.error_description).toContain("10000");
    }
  });

  test("hostile limit, offset and after are 400 bad_request naming the parameter, or clamped where the spec clamps", async () => {
    const cases: [string, string][] = [
      ["offset=-1", "offset"],
      ["offset=abc", "offset"],
      ["offset=1.5", "offset"],
      ["offset=1e3", "offset"],
      ["offset=", "offset"],
      ["offset=%2010", "offset"],
      ["offset=0x10", "offset"],
      ["limit=abc", "limit"],
      ["limit=", "limit"],
      ["limit=2.5", "limit"],
      ["limit=NaN", "limit"],
      ["after=", "after"],
      ["after=rq%20space", "after"],
      ["after=rq%00nul", "after"],
      ["after=%E2%9C%93", "after"],
      ["after=%ED%A0%80", "after"],
      [`after=${"r".repeat(129)}`, "after"],
      ["after=rq_x&offset=10001", "after="],
    ];
    for (const [query, name] of cases) {
      const response = await get(query);
      expect({ query, status: response.status, error: response.body.error }).toEqual({ query, status: 400, error: "bad_request" });
      expect(response.body.error_description).toContain(name);
    }
    // The spec clamps limit to [1, 100].
    expect((await get("limit=-5")).body).toMatchObject({ limit: 1, next_after: everything[0] });
    expect((await get("limit=0")).body.limit).toBe(1);
    expect((await get("limit=99999999999999999999")).body.limit).toBe(100);
    // SQL in a cursor is a record id nobody has.
    const injected = await get(`after=${encodeURIComponent("x'or'1'='1';--")}`);
    expect(injected.status).toBe(400);
    expect(injected.text).toBe((await get("after=rq_does_not_exist")).text);
  });

  test("the OpenAPI document describes after, next_after and the offset bound", async () => {
    const spec = await harness.server.api("GET", "/openapi/json");
    const flat = spec.body.paths["/v1/requests"].get;
    const parameters = Object.fromEntries(flat.parameters.map((p: any) => [p.name, p]));
    expect(parameters.offset.schema).toMatchObject({ minimum: 0, maximum: 10000 });
    expect(parameters.after.schema.type).toBe("string");
    expect(parameters.after.description).toContain("next_after");
    const namespaced = spec.body.paths["/v1/namespaces/{nsid}/requests"].get;
    for (const words of ["after", "next_after", "10000"]) expect(namespaced.description).toContain(words);
  });
});

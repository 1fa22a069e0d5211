import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { startInferenceHarness, type InferenceHarness } from "../helpers/inference-harness";
import type { TestAccount } from "../helpers/test-server";
import { deviceTokens } from "../oauth/oauth-support";

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

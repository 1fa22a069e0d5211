import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { startAllMockUpstreams, type MockUpstream, type MockUpstreamSet } from "../support/mock-upstreams";
import { MOCK_KEY, startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import type { TestAccount } from "../support/test-server";
import { callThroughSdk, CLIENTS, type ClientName } from "../policy-enforcement/enforcement-support";

/**
 * Customers' own provider keys at request time, through the four official SDKs. The
 * harness's mocks accept only the platform key; a second set of mocks ("the customer's
 * own endpoints", reached through each key's api_base) accepts any key and records what
 * it was sent, so each test sees exactly which credential went where.
 */
let harness: InferenceHarness;
let own: MockUpstreamSet;
beforeAll(async () => {
  await sodium.ready;
  // The customer's endpoints are loopback mocks: an operator's allowed private destination.
  [harness, own] = await Promise.all([startInferenceHarness({ byokApiBaseAllow: ["127.0.0.1"] }), startAllMockUpstreams()]);
});
afterAll(async () => {
  await harness.close();
  await own.close();
});

const UPSTREAM: Record<ClientName, { provider: string; model: string; mock: (set: MockUpstreamSet) => MockUpstream }> = {
  "openai-chat": { provider: "mock-openai", model: "mock-openai/gpt-4o-mini", mock: (set) => set.openai },
  "openai-responses": { provider: "mock-responses", model: "mock-responses/gpt-5-mini", mock: (set) => set.responses },
  "anthropic-messages": { provider: "mock-anthropic", model: "mock-anthropic/claude-sonnet-4-5", mock: (set) => set.anthropic },
  "google-generate-content": { provider: "mock-google", model: "mock-google/gemini-2.5-flash", mock: (set) => set.google },
};

/** The credential a recorded request carried, in its protocol's own header. */
function credentialOf(client: ClientName, headers: Record<string, string>): string | undefined {
  switch (client) {
    case "openai-chat":
    case "openai-responses":
      return headers.authorization?.replace(/^Bearer /, "");
    case "anthropic-messages":
      return headers["x-api-key"];
    case "google-generate-content":
      return headers["x-goog-api-key"];
  }
}

async function uploadKey(account: TestAccount, provider: string, key: string, apiBase?: string): Promise<void> {
  const { kek_id, public_key } = (await harness.server.api("GET", "/v1/byok/encryption-pubkey")).body;
  const box = sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(public_key, sodium.base64_variants.ORIGINAL));
  const response = await harness.server.api("POST", "/v1/byok/keys", {
    token: account.apiKey,
    body: { provider_name: provider, kek_id, ciphertext_b64: sodium.to_base64(box, sodium.base64_variants.ORIGINAL), key_prefix: key.slice(0, 3), ...(apiBase ? { api_base: apiBase } : {}) },
  });
  expect(response.status).toBe(200);
}

/** The account's request records, newest first, after the write buffer is flushed. */
async function recordsOf(account: TestAccount): Promise<Record<string, unknown>[]> {
  await harness.server.server.services.writeBuffer.flush();
  const response = await harness.server.api("GET", "/v1/requests?limit=100", { token: account.apiKey });
  expect(response.status).toBe(200);
  return response.body.data;
}

const secretFor = (provider: string) => `cust-${provider}-secret-0123456789`;

describe("BYOK through each client protocol", () => {
  let customer: TestAccount;
  let platformUser: TestAccount;
  beforeAll(async () => {
    [customer, platformUser] = await Promise.all([harness.server.createAccount(undefined, 100_000_000), harness.server.createAccount(undefined, 100_000_000)]);
    for (const client of CLIENTS) await uploadKey(customer, UPSTREAM[client].provider, secretFor(UPSTREAM[client].provider), UPSTREAM[client].mock(own).baseUrl);
  });

  for (const client of CLIENTS) {
    for (const stream of [false, true]) {
      test(`${client} ${stream ? "stream" : "sync"}: the customer's key goes to its api_base, the platform key never; another account's request sees only the platform key`, async () => {
        const { provider, model, mock } = UPSTREAM[client];
        const ownMock = mock(own);
        const platformMock = mock(harness.mocks);
        const ownBefore = ownMock.requests.length;
        const platformBefore = platformMock.requests.length;

        const byok = await callThroughSdk(harness, client, customer.apiKey, model, { stream });
        expect(byok).toMatchObject({ ok: true });
        expect(ownMock.requests.length).toBe(ownBefore + 1);
        expect(platformMock.requests.length).toBe(platformBefore);
        const sent = ownMock.requests.at(-1)!;
        expect(credentialOf(client, sent.headers)).toBe(secretFor(provider));
        expect(JSON.stringify(sent.headers)).not.toContain(MOCK_KEY);

        const platform = await callThroughSdk(harness, client, platformUser.apiKey, model, { stream });
        expect(platform).toMatchObject({ ok: true });
        expect(ownMock.requests.length).toBe(ownBefore + 1);
        const platformSent = platformMock.requests.at(-1)!;
        expect(credentialOf(client, platformSent.headers)).toBe(MOCK_KEY);
        expect(JSON.stringify(platformSent.headers)).not.toContain("secret-0123456789");
      });
    }
  }

  test("GET /v1/requests: BYOK requests are byok, not charged, with tokens; platform requests are cloud_credit and charged; no key appears", async () => {
    const byokRecords = await recordsOf(customer);
    expect(byokRecords).toHaveLength(CLIENTS.length * 2);
    for (const record of byokRecords) {
      expect(record).toMatchObject({ status: "succeeded", funding_source: "byok", billing_status: "not_charged", final_charge_micro_usd: 0 });
      expect(record.prompt_tokens as number).toBeGreaterThan(0);
      expect(record.completion_tokens as number).toBeGreaterThan(0);
    }
    const platformRecords = await recordsOf(platformUser);
    expect(platformRecords).toHaveLength(CLIENTS.length * 2);
    for (const record of platformRecords) {
      expect(record).toMatchObject({ status: "succeeded", funding_source: "cloud_credit", billing_status: "computed" });
      expect(record.final_charge_micro_usd as number).toBeGreaterThan(0);
    }
    expect(JSON.stringify(byokRecords)).not.toContain("secret-0123456789");
    const balance = await harness.server.api("GET", "/v1/billing/balance", { token: customer.apiKey });
    if (balance.status === 200) expect(JSON.stringify(balance.body)).toContain("100000000");
  });
});

describe("funding", () => {
  test("an account without credit is served by its own key, and refused without it", async () => {
    const broke = await harness.server.createAccount(undefined, 0);
    const refused = await callThroughSdk(harness, "openai-chat", broke.apiKey, UPSTREAM["openai-chat"].model, { stream: false });
    expect(refused).toMatchObject({ ok: false, status: 402 });
    await uploadKey(broke, "mock-openai", secretFor("mock-openai"), own.openai.baseUrl);
    for (const stream of [false, true]) {
      expect(await callThroughSdk(harness, "openai-chat", broke.apiKey, UPSTREAM["openai-chat"].model, { stream })).toMatchObject({ ok: true });
    }
    const records = await recordsOf(broke);
    const served = records.filter((record) => record.status === "succeeded");
    expect(served).toHaveLength(2);
    for (const record of served) expect(record).toMatchObject({ funding_source: "byok", billing_status: "not_charged", final_charge_micro_usd: 0 });
  });
});

describe("a provider without a platform key", () => {
  test("serves an account with its own key and refuses the others with a 402", async () => {
    const [customer, other] = await Promise.all([harness.server.createAccount(undefined, 100_000_000), harness.server.createAccount(undefined, 100_000_000)]);
    await uploadKey(customer, "mock-responses", secretFor("mock-responses"), own.responses.baseUrl);
    const saved = process.env.MOCK_RESPONSES_API_KEY;
    delete process.env.MOCK_RESPONSES_API_KEY;
    try {
      const model = UPSTREAM["openai-responses"].model;
      expect(await callThroughSdk(harness, "openai-responses", other.apiKey, model, { stream: false })).toMatchObject({ ok: false, status: 402 });
      expect(await callThroughSdk(harness, "openai-responses", customer.apiKey, model, { stream: false })).toMatchObject({ ok: true });
      expect(credentialOf("openai-responses", own.responses.requests.at(-1)!.headers)).toBe(secretFor("mock-responses"));
    } finally {
      process.env.MOCK_RESPONSES_API_KEY = saved;
    }
  });
});

describe("last_used_at", () => {
  test("is written (batched) when the provider accepts the key, and stays null for a key that only failed", async () => {
    const account = await harness.server.createAccount(undefined, 100_000_000);
    await uploadKey(account, "mock-openai", secretFor("mock-openai"), own.openai.baseUrl);
    await uploadKey(account, "mock-anthropic", "refused-customer-key-0123456789");
    const listed = async () => (await harness.server.api("GET", "/v1/byok/keys", { token: account.apiKey })).body.data as Array<{ provider_name: string; last_used_at: string | null }>;
    expect((await listed()).every((key) => key.last_used_at === null)).toBe(true);
    expect(await callThroughSdk(harness, "openai-chat", account.apiKey, UPSTREAM["openai-chat"].model, { stream: false })).toMatchObject({ ok: true });
    expect(await callThroughSdk(harness, "anthropic-messages", account.apiKey, UPSTREAM["anthropic-messages"].model, { stream: false })).toMatchObject({ ok: true });
    await harness.server.server.services.byokKeys.flushUses();
    const keys = await listed();
    const used = keys.find((key) => key.provider_name === "mock-openai")!;
    expect(new Date(used.last_used_at!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(keys.find((key) => key.provider_name === "mock-anthropic")!.last_used_at).toBeNull();
  });
});

describe("a key the provider refuses", () => {
  async function keyWithByokRule(account: TestAccount, rule: "required" | "forbidden"): Promise<string> {
    const ns = `/v1/namespaces/${account.namespaceId}`;
    const call = async (method: string, path: string, body: unknown) => {
      const response = await harness.server.api(method, path, { token: account.apiKey, body });
      expect(response.status).toBe(200);
      return response.body;
    };
    const key = await call("POST", `${ns}/keys`, { display_name: `byok ${rule}`, scopes: ["inference:invoke"] });
    const policy = await call("POST", `${ns}/policies`, { name: `byok ${rule} ${key.id}`, kind: "guardrail", spec: { byok: rule } });
    await call("POST", `${ns}/policies/${policy.id}/bind`, { principal_type: "api_key", principal_id: key.id });
    return key.token;
  }

  async function failureOf(account: TestAccount, provider: string): Promise<{ last_failure_at: string | null; last_failure_kind: string | null }> {
    const list = await harness.server.api("GET", "/v1/byok/keys", { token: account.apiKey });
    return list.body.data.find((entry: { provider_name: string }) => entry.provider_name === provider);
  }

  test("falls through to the platform's key, is charged as cloud_credit, and the key row is marked unauthorized", async () => {
    const account = await harness.server.createAccount(undefined, 100_000_000);
    // No api_base: the revoked key goes to the provider itself, which accepts only the platform key.
    await uploadKey(account, "mock-anthropic", "revoked-customer-key-0123456789");
    const before = harness.mocks.anthropic.requests.length;
    const seen = await callThroughSdk(harness, "anthropic-messages", account.apiKey, UPSTREAM["anthropic-messages"].model, { stream: false });
    expect(seen).toMatchObject({ ok: true });
    const sent = harness.mocks.anthropic.requests.slice(before);
    expect(sent.map((request) => request.headers["x-api-key"])).toEqual(["revoked-customer-key-0123456789", MOCK_KEY]);
    const [record] = await recordsOf(account);
    expect(record).toMatchObject({ funding_source: "cloud_credit", billing_status: "computed" });
    expect(JSON.stringify(record)).not.toContain("revoked-customer-key");
    // The mark is written without holding the request: wait for it.
    let failure = await failureOf(account, "mock-anthropic");
    for (let i = 0; i < 500 && failure.last_failure_kind === null; i++) {
      await Bun.sleep(20);
      failure = await failureOf(account, "mock-anthropic");
    }
    expect(failure.last_failure_kind).toBe("unauthorized");
    expect(new Date(failure.last_failure_at!).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  test('byok: "required" answers the refusal instead of falling through, without the key in the error', async () => {
    const account = await harness.server.createAccount(undefined, 100_000_000);
    await uploadKey(account, "mock-openai", "revoked-openai-key-0123456789");
    const token = await keyWithByokRule(account, "required");
    const before = harness.mocks.openai.requests.length;
    for (const client of ["openai-chat", "google-generate-content"] as const) {
      const seen = await callThroughSdk(harness, client, token, UPSTREAM["openai-chat"].model, { stream: false });
      expect(seen).toMatchObject({ ok: false, status: 502 });
      if (!seen.ok) {
        expect(seen.message).toContain("mock-openai");
        expect(seen.message).not.toContain("0123456789");
      }
    }
    const sent = harness.mocks.openai.requests.slice(before);
    expect(sent.map((request) => request.headers.authorization)).toEqual(["Bearer revoked-openai-key-0123456789", "Bearer revoked-openai-key-0123456789"]);
    // Without a key of its own for the provider, the request is refused before any upstream call.
    const none = await callThroughSdk(harness, "openai-chat", token, UPSTREAM["google-generate-content"].model, { stream: false });
    expect(none).toMatchObject({ ok: false, status: 403, code: "permission_denied" });
  });

  test('byok: "forbidden" uses the platform key even when the account holds a working one', async () => {
    const account = await harness.server.createAccount(undefined, 100_000_000);
    await uploadKey(account, "mock-google", secretFor("mock-google"), own.google.baseUrl);
    const token = await keyWithByokRule(account, "forbidden");
    const ownBefore = own.google.requests.length;
    const seen = await callThroughSdk(harness, "google-generate-content", token, UPSTREAM["google-generate-content"].model, { stream: true });
    expect(seen).toMatchObject({ ok: true });
    expect(own.google.requests.length).toBe(ownBefore);
    expect(harness.mocks.google.requests.at(-1)!.headers["x-goog-api-key"]).toBe(MOCK_KEY);
    const [record] = await recordsOf(account);
    expect(record).toMatchObject({ funding_source: "cloud_credit", billing_status: "computed" });
  });
});

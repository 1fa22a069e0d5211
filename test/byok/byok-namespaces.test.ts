import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import type { TestAccount } from "../support/test-server";
import { callThroughSdk } from "../policy-enforcement/enforcement-support";

/**
 * A BYOK key written by a credential bound to a namespace is that namespace's alone: it
 * ranks first for the namespace's requests and is never used for another namespace's, nor
 * for an account-wide credential's; it cannot replace or delete the account's key. Two sets
 * of "customer endpoints" (the account's and namespace 2's, each reached through its key's
 * api_base) record what they were sent, so each test sees where a prompt went.
 */
let harness: InferenceHarness;
let accountEndpoint: MockUpstreamSet;
let ns2Endpoint: MockUpstreamSet;
beforeAll(async () => {
  await sodium.ready;
  [harness, accountEndpoint, ns2Endpoint] = await Promise.all([
    startInferenceHarness({ byokApiBaseAllow: ["127.0.0.1"] }),
    startAllMockUpstreams(),
    startAllMockUpstreams(),
  ]);
});
afterAll(async () => {
  await harness.close();
  await accountEndpoint.close();
  await ns2Endpoint.close();
});

const MODEL = "mock-openai/gpt-4o-mini";
const ACCOUNT_SECRET = "acct-openai-secret-0123456789";
const NS2_SECRET = "ns2x-openai-secret-0123456789";

async function upload(token: string, provider: string, key: string, apiBase?: string) {
  const { kek_id, public_key } = (await harness.server.api("GET", "/v1/byok/encryption-pubkey")).body;
  const box = sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(public_key, sodium.base64_variants.ORIGINAL));
  return harness.server.api("POST", "/v1/byok/keys", {
    token,
    body: { provider_name: provider, kek_id, ciphertext_b64: sodium.to_base64(box, sodium.base64_variants.ORIGINAL), key_prefix: key.slice(0, 4), ...(apiBase ? { api_base: apiBase } : {}) },
  });
}

const bearerOf = (headers: Record<string, string>) => headers.authorization?.replace(/^Bearer /, "");

describe("a namespace-bound credential's BYOK key", () => {
  let account: TestAccount;
  let ns2: string;
  let ns3: string;
  let ns2Key: string;
  let ns3Key: string;
  let defaultNsKey: string;
  beforeAll(async () => {
    account = await harness.server.createAccount(undefined, 100_000_000);
    const create = async (name: string) => {
      const response = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name } });
      expect(response.status).toBe(200);
      return response.body.id as string;
    };
    [ns2, ns3] = [await create("second"), await create("third")];
    const scopes = ["byok:read", "byok:write", "inference:invoke"];
    [ns2Key, ns3Key, defaultNsKey] = await Promise.all([
      harness.server.mintKey(account.apiKey, scopes, ns2),
      harness.server.mintKey(account.apiKey, scopes, ns3),
      harness.server.mintKey(account.apiKey, scopes, account.namespaceId),
    ]);
    expect((await upload(account.apiKey, "mock-openai", ACCOUNT_SECRET, accountEndpoint.openai.baseUrl)).status).toBe(200);
    // Namespace 2 stores the same provider's key with its own api_base.
    expect((await upload(ns2Key, "mock-openai", NS2_SECRET, ns2Endpoint.openai.baseUrl)).status).toBe(200);
    expect((await upload(ns3Key, "mock-anthropic", "ns3x-anthropic-secret-0123456789")).status).toBe(200);
  });

  test("is never used for another namespace's request or an account-wide credential's; its own namespace's requests use it first", async () => {
    const accountBefore = accountEndpoint.openai.requests.length;
    for (const token of [account.apiKey, defaultNsKey, ns3Key]) {
      expect(await callThroughSdk(harness, "openai-chat", token, MODEL, { stream: false })).toMatchObject({ ok: true });
      expect(await callThroughSdk(harness, "openai-chat", token, MODEL, { stream: true })).toMatchObject({ ok: true });
    }
    expect(ns2Endpoint.openai.requests).toHaveLength(0);
    const toAccount = accountEndpoint.openai.requests.slice(accountBefore);
    expect(toAccount).toHaveLength(6);
    for (const request of toAccount) expect(bearerOf(request.headers)).toBe(ACCOUNT_SECRET);

    expect(await callThroughSdk(harness, "openai-chat", ns2Key, MODEL, { stream: false })).toMatchObject({ ok: true });
    expect(ns2Endpoint.openai.requests).toHaveLength(1);
    expect(bearerOf(ns2Endpoint.openai.requests[0]!.headers)).toBe(NS2_SECRET);
    expect(accountEndpoint.openai.requests.length).toBe(accountBefore + 6);

    // Each use is written to the key that served it.
    await harness.server.server.services.byokKeys.flushUses();
    const listed = (await harness.server.api("GET", "/v1/byok/keys", { token: account.apiKey })).body.data as Array<{ provider_name: string; namespace_id: string | null; last_used_at: string | null }>;
    expect(listed.map((key) => [key.provider_name, key.namespace_id, key.last_used_at !== null])).toEqual([
      ["mock-anthropic", ns3, false],
      ["mock-openai", null, true],
      ["mock-openai", ns2, true],
    ]);
  });

  test("the store answers each caller with its namespace's key, else the account's, never another namespace's", async () => {
    const store = harness.server.server.services.byokKeys;
    expect(await store.keyFor(account.accountId, "mock-openai")).toBe(ACCOUNT_SECRET);
    expect(await store.keyFor(account.accountId, "mock-openai", account.namespaceId)).toBe(ACCOUNT_SECRET);
    expect(await store.keyFor(account.accountId, "mock-openai", ns3)).toBe(ACCOUNT_SECRET);
    expect(await store.keyFor(account.accountId, "mock-openai", ns2)).toBe(NS2_SECRET);
    expect(await store.keyFor(account.accountId, "mock-anthropic")).toBeUndefined();
    expect(await store.keyFor(account.accountId, "mock-anthropic", ns2)).toBeUndefined();
  });

  test("a listing shows a bound credential its namespace's keys and the account's, nothing of another namespace's", async () => {
    type Listed = { provider_name: string; namespace_id: string | null; key_prefix: string };
    const listed = async (token: string) => {
      const response = await harness.server.api("GET", "/v1/byok/keys", { token });
      expect(response.status).toBe(200);
      return (response.body.data as Listed[]).map((key) => [key.provider_name, key.namespace_id, key.key_prefix]);
    };
    expect(await listed(ns2Key)).toEqual([
      ["mock-openai", null, "acct"],
      ["mock-openai", ns2, "ns2x"],
    ]);
    expect(await listed(ns3Key)).toEqual([
      ["mock-anthropic", ns3, "ns3x"],
      ["mock-openai", null, "acct"],
    ]);
    expect(await listed(defaultNsKey)).toEqual([["mock-openai", null, "acct"]]);
    expect(await listed(account.apiKey)).toEqual([
      ["mock-anthropic", ns3, "ns3x"],
      ["mock-openai", null, "acct"],
      ["mock-openai", ns2, "ns2x"],
    ]);
  });

  test("cannot replace or delete the account's key, nor another namespace's; deletes its own", async () => {
    const store = harness.server.server.services.byokKeys;
    // Uploading again replaces namespace 2's key, never the account's.
    expect((await upload(ns2Key, "mock-openai", "ns2x-replaced-secret-0123456789", ns2Endpoint.openai.baseUrl)).status).toBe(200);
    expect(await store.keyFor(account.accountId, "mock-openai")).toBe(ACCOUNT_SECRET);
    expect(await store.keyFor(account.accountId, "mock-openai", ns2)).toBe("ns2x-replaced-secret-0123456789");

    const notFound = { error: "not_found", error_description: "BYOK key not found" };
    // Namespace 3 has no mock-openai key of its own: the account's is out of its reach.
    const ns3Deletes = await harness.server.api("DELETE", "/v1/byok/keys/mock-openai", { token: ns3Key });
    expect(ns3Deletes.status).toBe(404);
    expect(ns3Deletes.body).toEqual(notFound);
    for (const target of [ns2, "", "null"]) {
      const aimed = await harness.server.api("DELETE", `/v1/byok/keys/mock-openai?namespace_id=${target}`, { token: ns3Key });
      expect(aimed.status).toBe(404);
      expect(aimed.body).toEqual(notFound);
    }
    expect(await store.keyFor(account.accountId, "mock-openai")).toBe(ACCOUNT_SECRET);
    expect(await store.keyFor(account.accountId, "mock-openai", ns2)).toBe("ns2x-replaced-secret-0123456789");

    // Namespace 2 deletes its own key; the account's stays, and a second delete finds nothing.
    expect((await harness.server.api("DELETE", "/v1/byok/keys/mock-openai", { token: ns2Key })).status).toBe(200);
    expect(await store.keyFor(account.accountId, "mock-openai", ns2)).toBe(ACCOUNT_SECRET);
    expect(await store.keyFor(account.accountId, "mock-openai")).toBe(ACCOUNT_SECRET);
    const again = await harness.server.api("DELETE", "/v1/byok/keys/mock-openai", { token: ns2Key });
    expect(again.status).toBe(404);
    expect(again.body).toEqual(notFound);
  });

  test("an account-wide credential deletes a namespace's key by naming it, and its own without", async () => {
    const other = await harness.server.createAccount(undefined, 0);
    const nsKey = await harness.server.mintKey(other.apiKey, ["byok:read", "byok:write"], other.namespaceId);
    expect((await upload(other.apiKey, "mock-google", "acct-google-secret-0123456789")).status).toBe(200);
    expect((await upload(nsKey, "mock-google", "nsky-google-secret-0123456789")).status).toBe(200);
    // Another account naming this one's namespace finds nothing.
    expect((await harness.server.api("DELETE", `/v1/byok/keys/mock-google?namespace_id=${other.namespaceId}`, { token: account.apiKey })).status).toBe(404);
    const store = harness.server.server.services.byokKeys;
    expect(await store.keyFor(other.accountId, "mock-google", other.namespaceId)).toBe("nsky-google-secret-0123456789");
    // A malformed namespace id (NUL, too long, another shape) is the 404 of a missing key, never a database error.
    const missing = await harness.server.api("DELETE", "/v1/byok/keys/mock-google?namespace_id=ns_nosuchnamespace", { token: other.apiKey });
    expect(missing.status).toBe(404);
    for (const malformed of ["ns_%00", `ns_${"x".repeat(5000)}`, "%F0%9F%98%80", "x'%20or%201=1"]) {
      const refused = await harness.server.api("DELETE", `/v1/byok/keys/mock-google?namespace_id=${malformed}`, { token: other.apiKey });
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 404, body: missing.body });
    }
    expect((await harness.server.api("DELETE", `/v1/byok/keys/mock-google?namespace_id=${other.namespaceId}`, { token: other.apiKey })).status).toBe(200);
    expect(await store.keyFor(other.accountId, "mock-google", other.namespaceId)).toBe("acct-google-secret-0123456789");
    expect((await harness.server.api("DELETE", "/v1/byok/keys/mock-google", { token: other.apiKey })).status).toBe(200);
    expect(await store.keyFor(other.accountId, "mock-google")).toBeUndefined();
  });
});

describe("archiving a namespace", () => {
  test("destroys that namespace's BYOK keys and keeps the account's and other namespaces'", async () => {
    const account = await harness.server.createAccount(undefined, 0);
    const create = async (name: string) => (await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name } })).body.id as string;
    const [gone, kept] = [await create("gone"), await create("kept")];
    const [goneKey, keptKey] = await Promise.all([
      harness.server.mintKey(account.apiKey, ["byok:write"], gone),
      harness.server.mintKey(account.apiKey, ["byok:write"], kept),
    ]);
    expect((await upload(account.apiKey, "mock-openai", ACCOUNT_SECRET)).status).toBe(200);
    expect((await upload(goneKey, "mock-openai", "gone-openai-secret-0123456789")).status).toBe(200);
    expect((await upload(keptKey, "mock-openai", "kept-openai-secret-0123456789")).status).toBe(200);
    expect((await harness.server.api("DELETE", `/v1/namespaces/${gone}`, { token: account.apiKey })).status).toBe(200);
    const listed = await harness.server.api("GET", "/v1/byok/keys", { token: account.apiKey });
    expect(listed.body.data.map((key: { namespace_id: string | null }) => key.namespace_id)).toEqual([null, kept]);
  });
});

describe("a namespace's key the provider refuses", () => {
  test("is marked on that namespace's row alone", async () => {
    const account = await harness.server.createAccount(undefined, 100_000_000);
    const create = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "refused" } });
    const nsKey = await harness.server.mintKey(account.apiKey, ["byok:write", "inference:invoke"], create.body.id);
    expect((await upload(account.apiKey, "mock-anthropic", "acct-anthropic-secret-0123456789", accountEndpoint.anthropic.baseUrl)).status).toBe(200);
    // No api_base: the provider itself, which accepts only the platform's key, refuses it.
    expect((await upload(nsKey, "mock-anthropic", "nsre-anthropic-secret-0123456789")).status).toBe(200);
    expect(await callThroughSdk(harness, "anthropic-messages", nsKey, "mock-anthropic/claude-sonnet-4-5", { stream: false })).toMatchObject({ ok: true });
    // The refusal is written without holding the request: wait for it.
    const marks = async () =>
      ((await harness.server.api("GET", "/v1/byok/keys", { token: account.apiKey })).body.data as Array<{ namespace_id: string | null; last_failure_kind: string | null }>).map((key) => [
        key.namespace_id,
        key.last_failure_kind,
      ]);
    for (let i = 0; i < 200 && !(await marks()).some(([, kind]) => kind !== null); i++) await Bun.sleep(50);
    expect(await marks()).toEqual([
      [null, null],
      [create.body.id, "unauthorized"],
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import { startInferenceHarness, writeMockCatalog, type InferenceHarness } from "../support/inference-harness";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { PROTOCOLS, send, UPSTREAM, type Protocol } from "../metering/metering-support";

/**
 * The egress guard end to end: what a customer may store as a BYOK `api_base`, what the
 * gateway connects to at request time, and what the client learns of what answered there.
 */

const SECRET = "SECRET-METADATA-7f3a9c";

async function uploadKey(server: TestServer, token: string, provider: string, apiBase: string | undefined) {
  const { kek_id, public_key } = (await server.api("GET", "/v1/byok/encryption-pubkey")).body;
  const box = sodium.crypto_box_seal(sodium.from_string("cust-key-0123456789abcdef"), sodium.from_base64(public_key, sodium.base64_variants.ORIGINAL));
  return server.api("POST", "/v1/byok/keys", {
    token,
    body: { provider_name: provider, kek_id, ciphertext_b64: sodium.to_base64(box, sodium.base64_variants.ORIGINAL), key_prefix: "cus", ...(apiBase === undefined ? {} : { api_base: apiBase }) },
  });
}

/** A key bound to a `byok: "required"` guardrail: a failed BYOK attempt is the answer (no platform fallback). */
async function byokRequiredKey(server: TestServer, account: TestAccount): Promise<string> {
  const ns = `/v1/namespaces/${account.namespaceId}`;
  const call = async (method: string, path: string, body: unknown) => {
    const response = await server.api(method, path, { token: account.apiKey, body });
    expect(response.status).toBe(200);
    return response.body;
  };
  const key = await call("POST", `${ns}/keys`, { display_name: "byok required", scopes: ["inference:invoke"] });
  const policy = await call("POST", `${ns}/policies`, { name: `byok required ${key.id}`, kind: "guardrail", spec: { byok: "required" } });
  await call("POST", `${ns}/policies/${policy.id}/bind`, { principal_type: "api_key", principal_id: key.id });
  return key.token;
}

/** A loopback TCP listener that counts connections and answers nothing useful. */
function countingListener() {
  let opened = 0;
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        opened++;
        socket.end();
      },
      data() {},
    },
  });
  return { port: listener.port, opened: () => opened, stop: () => listener.stop(true) };
}

beforeAll(async () => {
  await sodium.ready;
});

describe("api_base at write time", () => {
  let server: TestServer;
  let account: TestAccount;
  beforeAll(async () => {
    server = await startTestServer();
    account = await server.createAccount();
  });
  afterAll(() => server.close());

  const refused = [
    "http://127.0.0.1:9/latest/meta-data/#",
    "https://127.0.0.1:9/latest/meta-data/",
    "https://127.1/v1",
    "https://0177.0.0.1/v1",
    "https://0x7f.1/v1",
    "https://2130706433/v1",
    "https://0x7f000001/v1",
    "https://[::1]/v1",
    "https://[::ffff:127.0.0.1]/v1",
    "https://[::ffff:7f00:1]/v1",
    "https://[64:ff9b::7f00:1]/v1",
    "https://[fe80::1]/v1",
    "https://[fc00::1]/v1",
    "https://10.1.2.3/v1",
    "https://172.16.0.1/v1",
    "https://192.168.0.1/v1",
    "https://100.64.0.1/v1",
    "https://169.254.169.254/latest/meta-data/",
    "https://0.0.0.0/v1",
    "https://224.0.0.1/v1",
    "https://240.0.0.1/v1",
    "https://255.255.255.255/v1",
    "https://localhost/v1",
    "https://LOCALHOST./v1",
    "https://foo.localhost/v1",
    "https://user@api.example.test/v1",
    "https://api.example.test/v1?x=1",
    "https://api.example.test/v1#",
    "http://api.example.test/v1",
  ];
  for (const apiBase of refused) {
    test(`${apiBase} is 400 bad_request naming api_base, and nothing is stored`, async () => {
      const response = await uploadKey(server, account.apiKey, "openai", apiBase);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe("bad_request");
      expect(response.body.error_description).toStartWith("api_base ");
    });
  }

  test("a public https base is stored; the refused ones left no row", async () => {
    expect((await uploadKey(server, account.apiKey, "openai", "https://api.example.test/v1")).status).toBe(200);
    const list = await server.api("GET", "/v1/byok/keys", { token: account.apiKey });
    expect(list.body.data.map((key: { api_base: string }) => key.api_base)).toEqual(["https://api.example.test/v1"]);
  });
});

describe("api_base at request time (resolution and pinning)", () => {
  let mocks: MockUpstreamSet;
  let server: TestServer;
  let account: TestAccount;
  let token: string;
  const listener = countingListener();
  const answers: Record<string, string[]> = {
    "rebind.example.test": ["127.0.0.1"],
    "mixed.example.test": ["93.184.216.34", "10.0.0.7"],
    "v6.example.test": ["2606:2800:220:1::1", "::1"],
    "mapped.example.test": ["::ffff:169.254.169.254"],
    "pinned.example.test": ["127.0.0.1"],
  };
  const lookedUp: string[] = [];
  beforeAll(async () => {
    mocks = await startAllMockUpstreams({ apiKey: "mock-platform-key" });
    server = await startTestServer({ providersFile: writeMockCatalog(mocks), byokApiBaseAllow: ["10.99.0.0/16"] }, undefined, {
      resolveHost: async (hostname) => {
        lookedUp.push(hostname);
        const found = answers[hostname];
        if (!found) throw new Error(`ENOTFOUND ${hostname}`);
        return found;
      },
    });
    account = await server.createAccount(undefined, 100_000_000);
    token = await byokRequiredKey(server, account);
  });
  afterAll(async () => {
    listener.stop();
    await server.close();
    await mocks.close();
  });

  for (const name of ["rebind", "mixed", "v6", "mapped"]) {
    test(`a name that resolves (in part) to a non-public address (${name}) is stored, then refused before any connection`, async () => {
      const hostname = `${name}.example.test`;
      expect((await uploadKey(server, account.apiKey, "mock-openai", `https://${hostname}:${listener.port}/v1`)).status).toBe(200);
      const before = listener.opened();
      const sent = await send(server.url, token, "openai-chat", UPSTREAM["openai-chat"].model);
      expect(sent.status).toBe(503);
      expect(sent.json.error.message).toContain("not a permitted destination");
      expect(sent.text).not.toContain("127.0.0.1");
      expect(lookedUp).toContain(hostname);
      expect(listener.opened()).toBe(before);
    });
  }

  test("a base stored before the rule (straight into the table) is refused at request time, before any connection", async () => {
    expect((await uploadKey(server, account.apiKey, "mock-openai", "https://api.example.test/v1")).status).toBe(200);
    await server.server.services.db.sql`update byok_keys set api_base = ${`http://127.0.0.1:${listener.port}/v1`} where account_id = ${account.accountId}`;
    server.server.services.byokKeys.invalidate(account.accountId, "mock-openai");
    const before = listener.opened();
    const sent = await send(server.url, token, "openai-chat", UPSTREAM["openai-chat"].model);
    expect(sent.status).toBe(503);
    expect(listener.opened()).toBe(before);
  });

  test("an allowed name connects to the address that was checked, not to a fresh lookup of the name", async () => {
    // 127.0.0.1 is not in the allowed CIDR: refused.
    expect((await uploadKey(server, account.apiKey, "mock-openai", `https://pinned.example.test:${listener.port}/v1`)).status).toBe(200);
    let before = listener.opened();
    expect((await send(server.url, token, "openai-chat", UPSTREAM["openai-chat"].model)).status).toBe(503);
    expect(listener.opened()).toBe(before);
    // Allowed now (its own CIDR, in a second server on the same database): the system
    // resolver does not know the name, so a connection to the listener can only be the pinned address.
    const allowing = await startTestServer({ providersFile: writeMockCatalog(mocks), byokApiBaseAllow: ["127.0.0.1/32"] }, { url: server.databaseUrl, drop: async () => {} }, {
      resolveHost: async (hostname) => answers[hostname] ?? [],
    });
    try {
      before = listener.opened();
      const sent = await send(allowing.url, token, "openai-chat", UPSTREAM["openai-chat"].model);
      // The listener hangs up (no TLS): an upstream failure, after connecting (probe and fetch) to the checked address.
      expect(sent.status).toBeGreaterThanOrEqual(500);
      expect(listener.opened()).toBeGreaterThan(before);
    } finally {
      await allowing.close();
    }
  });
});

describe("what answered at a customer's api_base reaches the client only as the gateway's description", () => {
  let harness: InferenceHarness;
  let own: MockUpstreamSet;
  let evil: ReturnType<typeof Bun.serve>;
  let redirectTarget: ReturnType<typeof Bun.serve>;
  let redirectHits = 0;
  let mode = "text404";
  let token: string;

  beforeAll(async () => {
    [harness, own] = await Promise.all([startInferenceHarness({ byokApiBaseAllow: ["127.0.0.1"] }), startAllMockUpstreams()]);
    redirectTarget = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch() {
        redirectHits++;
        return new Response(SECRET);
      },
    });
    const ownMock = { "openai-chat": own.openai, "openai-responses": own.responses, "anthropic-messages": own.anthropic, "google-generate-content": own.google };
    evil = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const url = new URL(request.url);
        const [, protocol, ...rest] = url.pathname.split("/");
        switch (mode) {
          case "text404":
            return new Response(`<html>${SECRET}</html>`, { status: 404, headers: { "content-type": "text/plain" } });
          case "json400":
            return Response.json({ error: { message: SECRET, type: "invalid_request_error", code: SECRET } }, { status: 400 });
          case "json500":
            return Response.json({ error: { message: SECRET, type: "server_error" }, detail: SECRET }, { status: 500 });
          case "json429":
            return Response.json({ error: { message: SECRET, type: "rate_limit_error" } }, { status: 429, headers: { "retry-after": "7" } });
          case "redirect":
            return new Response(SECRET, { status: 302, headers: { location: `http://127.0.0.1:${redirectTarget.port}/v1/chat/completions` } });
          case "html200":
            return new Response(`<html>${SECRET}</html>`, { status: 200, headers: { "content-type": "text/html" } });
          case "json200":
            return Response.json({ secret: SECRET, choices: [], content: [], output: [], candidates: [] });
          case "stream-early":
          case "stream-late": {
            // The real mock's vendor stream with its mid-stream error frame, the message swapped for the secret.
            const mock = ownMock[protocol as Protocol];
            mock.queueScenarios({ kind: "stream_error", ...(mode === "stream-early" ? { errorAfterChunks: 1 } : {}) });
            const base = new URL(mock.baseUrl);
            const upstream = await fetch(`${base.origin}/${rest.join("/")}${url.search}`, { method: "POST", headers: request.headers, body: await request.text() });
            const text = (await upstream.text()).replace(/"message":"[^"]*"/g, `"message":"${SECRET}"`);
            expect(text).toContain(SECRET);
            return new Response(text, { status: upstream.status, headers: { "content-type": "text/event-stream" } });
          }
        }
        return new Response("unknown mode", { status: 500 });
      },
    });
    const account = harness.account;
    for (const protocol of PROTOCOLS) {
      const basePath = new URL(ownMock[protocol].baseUrl).pathname;
      const stored = await uploadKey(harness.server, account.apiKey, UPSTREAM[protocol].providerId, `http://127.0.0.1:${evil.port}/${protocol}${basePath}`);
      expect(stored.status).toBe(200);
    }
    token = await byokRequiredKey(harness.server, account);
  });
  afterAll(async () => {
    evil.stop(true);
    redirectTarget.stop(true);
    await harness.close();
    await own.close();
  });

  // Status 0: any, as long as nothing leaks. A 404 is not_found in the Anthropic and Google error tables, 400 in OpenAI's.
  const cases: { mode: string; stream: boolean; status: number | number[] }[] = [
    { mode: "text404", stream: false, status: [400, 404] },
    { mode: "json400", stream: false, status: 400 },
    { mode: "json500", stream: false, status: 502 },
    { mode: "json429", stream: false, status: 429 },
    { mode: "redirect", stream: false, status: 502 },
    { mode: "html200", stream: false, status: 502 },
    { mode: "json200", stream: false, status: 0 },
    { mode: "text404", stream: true, status: [400, 404] },
    { mode: "redirect", stream: true, status: 502 },
    { mode: "html200", stream: true, status: 0 },
    { mode: "stream-early", stream: true, status: 0 },
    { mode: "stream-late", stream: true, status: 200 },
  ];
  for (const protocol of PROTOCOLS) {
    for (const { mode: caseMode, stream, status } of cases) {
      test(`${protocol} ${stream ? "stream" : "sync"}, upstream ${caseMode}: no byte of the upstream's body reaches the client${status ? ` (${status})` : ""}`, async () => {
        mode = caseMode;
        const hitsBefore = redirectHits;
        const sent = await send(harness.server.url, token, protocol, UPSTREAM[protocol].model, { stream });
        expect(sent.text).not.toContain(SECRET);
        expect(sent.text).not.toContain("<html>");
        if (Array.isArray(status)) expect(status).toContain(sent.status);
        else if (status !== 0) expect(sent.status).toBe(status);
        // The stream failed after it was committed: its error frame is there, in the gateway's words.
        if (caseMode === "stream-late") expect(sent.text).toContain("its message is not shown");
        if (caseMode === "json429") expect(sent.headers.get("retry-after")).toBe("7");
        if (caseMode === "redirect") expect(redirectHits).toBe(hitsBefore);
      });
    }
  }
});

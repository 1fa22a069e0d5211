import { afterAll, beforeAll, expect, test } from "bun:test";
import { MOCK_KEY, spawnServerOnMocks } from "../support/inference-harness";
import { startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import type { SpawnedServer } from "../support/spawn-server";
import { createTestDatabase } from "../support/test-database";
import { callThroughSdk, CLIENTS, type ClientName, type SdkTarget, type Seen } from "./enforcement-support";

/**
 * A client that waits for each answer before it sends the next request must be refused
 * exactly at the request that no longer fits: by then every earlier request is over, so
 * nothing may still be held for it. Each cell sends requests strictly one after another
 * through an official SDK (sync or stream, every client protocol), to one instance or
 * alternating between two on one database, and expects the refusal at exactly the request
 * computed from the limit, the request's cost ceiling and its known charge — and a budget
 * refusal that says 0 reserved for requests in flight.
 *
 * Before the fix the hold of the request whose answer the client had just read was still
 * there about half the time (the settlement was written after the answer was sent), and
 * the refusal came one request early naming it.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let mocks: MockUpstreamSet;
let servers: [SpawnedServer, SpawnedServer];
beforeAll(async () => {
  db = await createTestDatabase();
  mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
  for (const mock of [mocks.openai, mocks.responses, mocks.anthropic, mocks.google]) mock.setScenario({ kind: "text", usage: { prompt: 12, completion: 16 } });
  const env = { DATABASE_URL: db.url, ADMIN_TOKEN: "op", LOG_LEVEL: "warn" };
  servers = (await Promise.all([spawnServerOnMocks(mocks, env), spawnServerOnMocks(mocks, env)])) as [SpawnedServer, SpawnedServer];
}, 60_000);
afterAll(async () => {
  for (const server of servers ?? []) server.process.kill("SIGTERM");
  await Promise.all((servers ?? []).map((server) => server.exited));
  await mocks.close();
  await db.drop();
});

/** The same protocol upstream for each client (the relayed path), and another one (translated). */
const SAME: Record<ClientName, string> = {
  "openai-chat": "mock-openai/gpt-4o-mini",
  "openai-responses": "mock-responses/gpt-5-mini",
  "anthropic-messages": "mock-anthropic/claude-sonnet-4-5",
  "google-generate-content": "mock-google/gemini-2.5-flash",
};
const CROSS: Record<ClientName, string> = {
  "openai-chat": "mock-anthropic/claude-sonnet-4-5",
  "openai-responses": "mock-google/gemini-2.5-flash",
  "anthropic-messages": "mock-openai/gpt-4o-mini",
  "google-generate-content": "mock-responses/gpt-5-mini",
};
const MAX_TOKENS = 16;

interface Account {
  account_id: string;
  namespace_id: string;
  api_key: string;
}

const target = (server: SpawnedServer): SdkTarget => ({ server: { url: server.url } });

async function call(method: string, path: string, token: string, body?: unknown): Promise<any> {
  const response = await fetch(`${servers[0].url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

let accounts = 0;
const newAccount = (credit: number): Promise<Account> => call("POST", "/admin/accounts", "op", { email: `seq${++accounts}-${Date.now()}@example.test`, credit_micro_usd: credit });

/** A policy bound to the account's namespace; returns its id. */
async function bind(owner: Account, kind: string, spec: unknown): Promise<string> {
  const ns = `/v1/namespaces/${owner.namespace_id}`;
  const policy = await call("POST", `${ns}/policies`, owner.api_key, { name: `${kind} ${Date.now()}`, kind, spec });
  await call("POST", `${ns}/policies/${policy.id}/bind`, owner.api_key, { principal_type: "namespace", principal_id: owner.namespace_id });
  return policy.id;
}

const status = (owner: Account, policyId: string) => call("GET", `/v1/namespaces/${owner.namespace_id}/policies/${policyId}/status`, owner.api_key);

const sdkCall = (server: SpawnedServer, client: ClientName, token: string, model: string, stream: boolean): Promise<Seen> =>
  callThroughSdk(target(server), client, token, model, { stream, maxTokens: MAX_TOKENS });

/** What one request of a path costs: its reservation (the ceiling a budget of 1 names) and its charge (settled, read from a budget's status). */
interface Costs {
  ceiling: number;
  charge: number;
}
const costsMemo = new Map<string, Promise<Costs>>();

function costsOf(client: ClientName, model: string, stream: boolean): Promise<Costs> {
  const key = `${client} ${model} ${stream}`;
  let costs = costsMemo.get(key);
  if (!costs) {
    costs = (async () => {
      const tiny = await newAccount(1_000_000_000);
      await bind(tiny, "budget", { window: "total", limit_micro_usd: 1 });
      const refused = await sdkCall(servers[0], client, tiny.api_key, model, stream);
      const ceiling = Number(/may cost up to (\d+) micro-USD/.exec(refused.ok ? "" : refused.message)?.[1]);
      expect(ceiling).toBeGreaterThan(0);
      const wide = await newAccount(1_000_000_000);
      const policyId = await bind(wide, "budget", { window: "total", limit_micro_usd: 1_000_000_000 });
      expect((await sdkCall(servers[0], client, wide.api_key, model, stream)).ok).toBe(true);
      // Waiting is fine here: this is the probe, not the sequence under test.
      let figures = await status(wide, policyId);
      for (let i = 0; figures.reserved_micro_usd !== 0 && i < 200; i++) {
        await Bun.sleep(10);
        figures = await status(wide, policyId);
      }
      expect(figures.reserved_micro_usd).toBe(0);
      const charge = figures.spent_micro_usd as number;
      expect(charge).toBeGreaterThan(0);
      // The test is only meaningful when a lingering hold would change the outcome.
      expect(ceiling).toBeGreaterThan(charge);
      return { ceiling, charge };
    })();
    costsMemo.set(key, costs);
  }
  return costs;
}

/**
 * Sends requests one after another (each after the previous answer was read in full)
 * until one is refused, at most `fits + 1`; returns the answers. With two instances the
 * next request always goes to the other one.
 */
async function sequence(instances: 1 | 2, fits: number, send: (server: SpawnedServer) => Promise<Seen>): Promise<Seen[]> {
  const seen: Seen[] = [];
  for (let i = 0; i <= fits; i++) {
    const answer = await send(servers[instances === 2 ? i % 2 : 0]!);
    seen.push(answer);
    if (!answer.ok) break;
  }
  return seen;
}

/** The answers' shape: how many were served before the refusal, and the refusal. */
function expectRefusedAt(seen: Seen[], fits: number, status: number): Extract<Seen, { ok: false }> {
  const served = seen.filter((answer) => answer.ok).length;
  const last = seen.at(-1)!;
  expect({ served, refused: last.ok ? "none" : last.status ?? last.code }).toEqual({ served: fits, refused: status });
  return last as Extract<Seen, { ok: false }>;
}

type Limit = "budget" | "requests" | "tokens" | "wallet";

/** One cell: a fresh account with its limit set so that exactly `FITS` requests fit. */
async function cell(limit: Limit, client: ClientName, model: string, stream: boolean, instances: 1 | 2): Promise<void> {
  const FITS = 5;
  const label = `${limit} ${client} → ${model} ${stream ? "stream" : "sync"} × ${instances}`;
  const send = (token: string) => (server: SpawnedServer) => sdkCall(server, client, token, model, stream);
  try {
    switch (limit) {
      case "budget": {
        const { ceiling, charge } = await costsOf(client, model, stream);
        const owner = await newAccount(1_000_000_000);
        // Request i fits while (i - 1) × charge + ceiling ≤ limit: exactly FITS do.
        await bind(owner, "budget", { window: "total", limit_micro_usd: FITS * charge + ceiling - 1 });
        const refused = expectRefusedAt(await sequence(instances, FITS, send(owner.api_key)), FITS, 402);
        expect(refused.message).toContain(`${FITS * charge} spent, 0 reserved for requests in flight`);
        break;
      }
      case "requests": {
        const owner = await newAccount(1_000_000_000);
        await bind(owner, "rate_limit", { window_secs: 3600, max_requests: FITS });
        expectRefusedAt(await sequence(instances, FITS, send(owner.api_key)), FITS, 429);
        break;
      }
      case "tokens": {
        const owner = await newAccount(1_000_000_000);
        // Each request counts its output ceiling (its max tokens): FITS of them fit, not one more.
        await bind(owner, "rate_limit", { window_secs: 3600, max_tokens: (FITS + 1) * MAX_TOKENS - 1 });
        expectRefusedAt(await sequence(instances, FITS, send(owner.api_key)), FITS, 429);
        break;
      }
      case "wallet": {
        const { ceiling, charge } = await costsOf(client, model, stream);
        const owner = await newAccount(FITS * charge + ceiling - 1);
        expectRefusedAt(await sequence(instances, FITS, send(owner.api_key)), FITS, 402);
        break;
      }
    }
  } catch (error) {
    throw new Error(`${label}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Cells run a few at a time (each is strictly sequential within itself); the first failure is reported. */
async function runCells(cells: Array<() => Promise<void>>, width = 4): Promise<void> {
  const failures: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < cells.length) {
        const run = cells[next++]!;
        await run().catch((error: unknown) => failures.push(error instanceof Error ? error.message : String(error)));
      }
    }),
  );
  expect(failures).toEqual([]);
}

for (const instances of [1, 2] as const) {
  for (const limit of ["budget", "wallet"] as const) {
    test(`${limit}, ${instances} instance(s): strictly sequential requests are refused exactly at the one that no longer fits, every protocol, sync and stream, relayed and translated`, async () => {
      const cells = CLIENTS.flatMap((client) =>
        [false, true].flatMap((stream) => [SAME[client], CROSS[client]].map((model) => () => cell(limit, client, model, stream, instances))),
      );
      await runCells(cells);
    }, 120_000);
  }
  for (const limit of ["requests", "tokens"] as const) {
    test(`rate limit on ${limit}, ${instances} instance(s): refused exactly at the request past the limit, every protocol, sync and stream`, async () => {
      await runCells(CLIENTS.flatMap((client) => [false, true].map((stream) => () => cell(limit, client, SAME[client], stream, instances))));
    }, 120_000);
  }
}

/**
 * A request admitted and then ended before any upstream was called is withdrawn from the
 * rate limit (released). Between each served request the client sends one such request
 * (a Responses request with `store: true` to Anthropic, which no candidate can encode):
 * exactly the limit is served all the same, so each withdrawal landed before its 400.
 */
async function withdrawn(server: SpawnedServer, token: string): Promise<void> {
  const response = await fetch(`${server.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "mock-anthropic/claude-sonnet-4-5", input: "hi", store: true, max_output_tokens: MAX_TOKENS }),
  });
  await response.text();
  expect(response.status).toBe(400);
}

for (const instances of [1, 2] as const) {
  for (const limit of ["requests", "tokens"] as const) {
    test(`rate limit on ${limit}, ${instances} instance(s): requests withdrawn between the served ones leave nothing behind`, async () => {
      const FITS = 5;
      const cells = CLIENTS.map((client) => async () => {
        const owner = await newAccount(1_000_000_000);
        await bind(owner, "rate_limit", limit === "requests" ? { window_secs: 3600, max_requests: FITS } : { window_secs: 3600, max_tokens: (FITS + 1) * MAX_TOKENS - 1 });
        let turn = 0;
        let served = 0;
        const seen = await sequence(instances, FITS, async (server) => {
          const answer = await sdkCall(server, client, owner.api_key, SAME[client], false);
          if (answer.ok) served++;
          // While the window has room (a full one refuses it, rightly): to the other instance,
          // so the next served request comes back to this one.
          if (served < FITS) await withdrawn(servers[instances === 2 ? ++turn % 2 : 0]!, owner.api_key);
          return answer;
        });
        try {
          expectRefusedAt(seen, FITS, 429);
        } catch (error) {
          throw new Error(`${client}: ${error instanceof Error ? error.message : String(error)}`);
        }
      });
      await runCells(cells);
    }, 120_000);
  }
}

/** What each protocol's stream ends with, and the request that streams it (raw HTTP, no SDK). */
const RAW_STREAMS = [
  { client: "openai-chat", path: "/v1/chat/completions", terminal: "data: [DONE]", body: (model: string) => ({ model, stream: true, max_tokens: MAX_TOKENS, messages: [{ role: "user", content: "Say hello." }] }) },
  { client: "anthropic-messages", path: "/v1/messages", terminal: "event: message_stop", body: (model: string) => ({ model, stream: true, max_tokens: MAX_TOKENS, messages: [{ role: "user", content: "Say hello." }] }) },
  { client: "openai-responses", path: "/v1/responses", terminal: "event: response.completed", body: (model: string) => ({ model, stream: true, max_output_tokens: MAX_TOKENS, input: "Say hello." }) },
] as const;

/** Streams one request and stops reading at its terminal event, as a client may: it has the answer. */
async function untilTerminal(server: SpawnedServer, token: string, path: string, body: unknown, terminal: string): Promise<Seen> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) return { ok: false, status: response.status, code: undefined, message: await response.text(), retryAfter: undefined };
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes(terminal)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended without "${terminal}": ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  void reader.cancel().catch(() => {});
  return { ok: true, text };
}

test("a client that stops reading at the stream's terminal event finds nothing of that request held, relayed and translated, on either instance", async () => {
  // Frames 20 ms apart: the upstream's body ends 20 ms after its terminal frame, the
  // window in which a relayed terminal frame would reach the client before the settlement.
  const upstreams = [mocks.openai, mocks.responses, mocks.anthropic, mocks.google];
  for (const mock of upstreams) mock.setScenario({ kind: "text", usage: { prompt: 12, completion: 16 }, chunkDelayMs: 20 });
  const cells = RAW_STREAMS.flatMap(({ client, path, terminal, body }) =>
    [SAME[client], CROSS[client]].flatMap((model) =>
      ([1, 2] as const).map((instances) => async () => {
        const { ceiling, charge } = await costsOf(client, model, true);
        const owner = await newAccount(1_000_000_000);
        const FITS = 5;
        await bind(owner, "budget", { window: "total", limit_micro_usd: FITS * charge + ceiling - 1 });
        try {
          const seen = await sequence(instances, FITS, (server) => untilTerminal(server, owner.api_key, path, body(model), terminal));
          const refused = expectRefusedAt(seen, FITS, 402);
          expect(refused.message).toContain(`${FITS * charge} spent, 0 reserved for requests in flight`);
        } catch (error) {
          throw new Error(`${client} → ${model} × ${instances}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }),
    ),
  );
  try {
    await runCells(cells);
  } finally {
    for (const mock of upstreams) mock.setScenario({ kind: "text", usage: { prompt: 12, completion: 16 } });
  }
}, 120_000);

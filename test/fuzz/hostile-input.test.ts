import { afterAll, beforeAll, expect, test } from "bun:test";
import type { SpawnedServer } from "../support/spawn-server";
import { startFuzzServer, stopFuzzServer, type FuzzServer } from "./fuzz-server";
import { chunkedBody, rawHttp } from "../support/raw-http";
import { Fuzzer, HOSTILE_KEYS, hostileModelId, invalidUtf8, mutateBody, mutateHeaders, mutatePath, pathId, seededRandom } from "./fuzz-inputs";
import { CHAT_MODEL, routes, type ErrorShape, type RouteCase } from "./fuzz-routes";

/**
 * Hostile input against every route of one Switchyard process (real PostgreSQL, the
 * mock upstreams, translation workers for all but tiny bodies): malformed and mutated
 * bodies, wrong types, huge numbers, NUL and lone surrogates, 100k-deep JSON, malformed
 * model ids ("@", "@x/", "a//b", "openai/constructor", in bodies and in Google's path),
 * object keys named by Object.prototype members ("__proto__", "constructor", "toString")
 * anywhere in a body (routing preset params, policy specs, metadata, tool schemas), odd paths
 * (dot segments, %00, doubled slashes, long ones), odd credentials and content types,
 * large headers within the runtime's limit, chunked and invalid UTF-8 bodies.
 *
 * Asserts: no 5xx (only healthy mock models are used, so any 5xx is ours), every error
 * body in its route's shape, no request left hanging, no unhandled error in the
 * server's log, the process alive afterwards, and billing still flowing: a funded
 * account's request succeeds, is settled with a charge and debits the wallet.
 *
 * Seeded: the seed is printed; FUZZ_SEED=<n> replays a run. Bounded by FUZZ_CASES
 * (default 4000) and a time budget, whichever comes first.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const CASES = Number(process.env.FUZZ_CASES ?? 4000);
const BUDGET_MS = 15_000;
const LANES = 6;
const ADMIN_TOKEN = "fuzz-operator";
/** The runtime answers a request head above this by itself (431, empty body): out of our hands, see docs/operations.md "Reliability: what hostile input, slow clients and failures cannot do". */
const RUNTIME_HEADER_LIMIT = 16 * 1024;

let running: FuzzServer | undefined;
let server: SpawnedServer;
beforeAll(async () => {
  running = await startFuzzServer({
    ADMIN_TOKEN,
    // Most bodies go through the worker pool, where a stack overflow would surface differently.
    TRANSLATION_INLINE_MAX_BYTES: "1024",
  });
  server = running.server;
});
afterAll(() => stopFuzzServer(running), 20_000);

interface Account {
  accountId: string;
  namespaceId: string;
  apiKey: string;
}

async function createAccount(email: string, credit: number): Promise<Account> {
  const response = await fetch(`${server.url}/admin/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ email, credit_micro_usd: credit }),
  });
  const body = (await response.json()) as { account_id: string; namespace_id: string; api_key: string };
  return { accountId: body.account_id, namespaceId: body.namespace_id, apiKey: body.api_key };
}

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  chunked: boolean;
  raw: boolean;
  /** A Host header other than the server's address (raw requests only). */
  host?: string;
  pathMutated: boolean;
}

interface Received {
  status: number;
  text: string;
}

function describeCase(sent: Sent, received: Received | string): string {
  const body = sent.body === undefined ? "" : typeof sent.body === "string" ? sent.body : `<${sent.body.length} bytes, invalid UTF-8>`;
  const headers = Object.entries(sent.headers).map(([k, v]) => `${k}: ${v.length > 60 ? `${v.slice(0, 60)}…(${v.length})` : v}`);
  const outcome = typeof received === "string" ? received : `${received.status} ${received.text.slice(0, 300)}`;
  return `${sent.method} ${sent.path.slice(0, 200)}${sent.raw ? " [raw]" : ""}${sent.host === undefined ? "" : ` [Host: ${sent.host.slice(0, 40)}]`}${sent.chunked ? " [chunked]" : ""}\n  headers: ${headers.join("; ")}\n  body: ${body.slice(0, 300)}${body.length > 300 ? `…(${body.length})` : ""}\n  -> ${outcome}`;
}

/** The problem with an error body for its expected shape, or undefined when it fits. */
function shapeProblem(shape: ErrorShape, status: number, text: string): string | undefined {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return "error body is not JSON";
  }
  const isString = (value: unknown) => typeof value === "string" && value.length > 0;
  switch (shape) {
    case "openai":
      return isString(body?.error?.message) && isString(body?.error?.type) ? undefined : "not an OpenAI error envelope";
    case "anthropic":
      return body?.type === "error" && isString(body?.error?.type) && isString(body?.error?.message) ? undefined : "not an Anthropic error envelope";
    case "google":
      return body?.error?.code === status && isString(body?.error?.status) && isString(body?.error?.message) ? undefined : "not a Google error envelope";
    case "management":
      return isString(body?.error) && isString(body?.error_description) ? undefined : "not a management error body";
  }
}

const SHAPES: ErrorShape[] = ["openai", "anthropic", "google", "management"];

async function send(sent: Sent): Promise<Received> {
  // fetch refuses a body on GET (and normalizes what `raw` paths keep): those go over a socket.
  const bodyOnGet = sent.body !== undefined && sent.method === "GET";
  if (sent.raw || sent.chunked || bodyOnGet || typeof sent.body !== "string") {
    const host = sent.host ?? new URL(server.url).host;
    let head = `${sent.method} ${sent.path} HTTP/1.1\r\nHost: ${host}`;
    for (const [name, value] of Object.entries(sent.headers)) head += `\r\n${name}: ${value}`;
    let payload: string | Uint8Array = "";
    if (sent.body !== undefined) {
      if (sent.chunked && typeof sent.body === "string") {
        head += "\r\nTransfer-Encoding: chunked";
        payload = chunkedBody(sent.body, 4096);
      } else {
        payload = sent.body;
        head += `\r\nContent-Length: ${typeof payload === "string" ? Buffer.byteLength(payload) : payload.length}`;
      }
    }
    const response = await rawHttp(server.url, head, payload, 20_000);
    return { status: response.status, text: response.body };
  }
  const response = await fetch(server.url + sent.path, {
    method: sent.method,
    headers: sent.headers,
    ...(sent.body === undefined ? {} : { body: sent.body }),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: response.status, text: await response.text() };
}

/** `text` as a path segment: percent-encoded, or as it is where the path can carry it (the Google model may hold "/", "@" and ":"). */
function inPath(fuzz: Fuzzer, text: string): string {
  let encoded: string;
  try {
    encoded = encodeURIComponent(text);
  } catch {
    // A lone surrogate has no UTF-8: send the bytes a broken client would.
    encoded = "%ED%A0%80";
  }
  return fuzz.chance(0.5) && /^[!-~]*$/.test(text) && !/[?#%]/.test(text) ? text : encoded;
}

function buildCase(fuzz: Fuzzer, route: RouteCase, fuzzAccount: Account, requestIds: string[]): Sent {
  let path = route.path
    .replace("{nsid}", pathId(fuzz, fuzzAccount.namespaceId))
    .replace("{key}", pathId(fuzz, `k_${"x".repeat(16)}`))
    .replace("{account}", pathId(fuzz, fuzzAccount.accountId))
    .replace("{request}", pathId(fuzz, fuzz.pick(requestIds)))
    .replace("{model}", fuzz.pick([() => CHAT_MODEL, () => pathId(fuzz, "mock-google/gemini-2.5-flash"), () => inPath(fuzz, hostileModelId(fuzz))])())
    .replaceAll("{id}", () => fuzz.pick([() => pathId(fuzz, "rp_aaaaaaaaaaaaaaaa"), () => inPath(fuzz, fuzz.pick(HOSTILE_KEYS))])())
    .replaceAll("{provider}", () => fuzz.pick([() => pathId(fuzz, "mock-openai"), () => inPath(fuzz, fuzz.pick(HOSTILE_KEYS)), () => inPath(fuzz, hostileModelId(fuzz))])());
  let raw = false;
  const pathMutated = fuzz.chance(0.15);
  if (pathMutated) ({ path, raw } = mutatePath(fuzz, path));
  let headers: Record<string, string> = {};
  if (route.auth === "account") headers.authorization = `Bearer ${fuzzAccount.apiKey}`;
  if (route.auth === "admin") headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  let body: string | Uint8Array | undefined;
  if (route.body) {
    headers["content-type"] = "application/json";
    body = fuzz.chance(0.85) ? mutateBody(fuzz, route.body()) : JSON.stringify(route.body());
    if (fuzz.chance(0.03)) body = invalidUtf8(fuzz, body);
  }
  if (fuzz.chance(0.3)) headers = mutateHeaders(fuzz, headers);
  // Another method on the path: whatever answers (405/404 or another route), it answers in a known shape.
  const method = fuzz.chance(0.05) ? fuzz.pick(["PUT", "PATCH", "DELETE", "OPTIONS", "GET", "POST"]) : route.method;
  // A placeholder filled with `..` or `%2e%2e` makes a dot segment: the path may now be another route's.
  const dotSegment = /\/(\.|%2e){1,2}(\/|\?|$)/i.test(path);
  const otherRoute = pathMutated || dotSegment || method !== route.method;
  const host = fuzz.chance(0.05) ? fuzz.pick(["x", "api", "a:1", "", "h".repeat(300), "[::1]", "example.test:99999"]) : undefined;
  return { method, path, headers, body, chunked: body !== undefined && fuzz.chance(0.1), raw: raw || host !== undefined, pathMutated: otherRoute, ...(host === undefined ? {} : { host }) };
}

test(`hostile input against every route (seed ${SEED}): no 5xx, errors in shape, process alive, billing flowing`, async () => {
  console.log(`fuzz seed ${SEED} (replay: FUZZ_SEED=${SEED} npm test -- test/fuzz)`);
  const fuzz = new Fuzzer(seededRandom(SEED));
  const fuzzAccount = await createAccount(`fuzz-${SEED}@example.test`, 50_000_000);
  const billed = await createAccount(`billed-${SEED}@example.test`, 10_000_000);
  const requestIds = ["01935c6e-0000-7000-8000-000000000000", "req-fuzz"];
  const allRoutes = routes(fuzz);
  // Drawn up front, so a seed replays the same cases whatever order the lanes finish in.
  const cases = Array.from({ length: CASES }, () => {
    const route = fuzz.pick(allRoutes);
    return { route, sent: buildCase(fuzz, route, fuzzAccount, requestIds) };
  });
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let sentCount = 0;
  const deadline = performance.now() + BUDGET_MS;

  const lane = async () => {
    while (sentCount < cases.length && performance.now() < deadline) {
      const { route, sent } = cases[sentCount++]!;
      let received: Received;
      try {
        received = await send(sent);
      } catch (error) {
        failures.push(describeCase(sent, `no response: ${error instanceof Error ? error.message : String(error)}`));
        continue;
      }
      statuses.set(received.status, (statuses.get(received.status) ?? 0) + 1);
      const headSize = sent.path.length + Object.entries(sent.headers).reduce((sum, [k, v]) => sum + k.length + v.length + 4, 0);
      if (received.status === 431 && headSize > RUNTIME_HEADER_LIMIT - 512) continue;
      if (received.status >= 500) {
        failures.push(describeCase(sent, received));
        continue;
      }
      if (received.status < 400) continue;
      // A mutated path may have become another route (or none): its error must still fit one of the shapes.
      const problem = sent.pathMutated
        ? SHAPES.every((shape) => shapeProblem(shape, received.status, received.text) !== undefined)
          ? "error body fits no known shape"
          : undefined
        : shapeProblem(route.shape, received.status, received.text);
      if (problem) failures.push(`${problem}: ${describeCase(sent, received)}`);
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  console.log(`fuzz: ${sentCount} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
  if (failures.length > 0) console.log(`server log:\n${server.output().split("\n").filter((line) => line.includes('"level":"error"')).slice(-10).join("\n")}`);
  expect(failures.slice(0, 10)).toEqual([]);

  // The process is alive and logged no unhandled error.
  expect(server.process.exitCode).toBeNull();
  expect((await fetch(`${server.url}/ping`)).status).toBe(200);
  const unhandled = server
    .output()
    .split("\n")
    .filter((line) => /unhandled error|failed unexpectedly|inference failed|Maximum call stack|invalid byte sequence/.test(line));
  expect(unhandled).toEqual([]);

  // Billing still flows: a funded account's ordinary request is served, settled with a charge, and debited.
  const requestId = `fuzz-billing-${SEED}`;
  const served = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${billed.apiKey}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: CHAT_MODEL, messages: [{ role: "user", content: "Hello after the storm" }], max_tokens: 32 }),
  });
  expect(served.status).toBe(200);
  expect(((await served.json()) as { choices: unknown[] }).choices.length).toBe(1);
  let receipt: { state?: string; final_charge_micro_usd?: number | null } = {};
  for (let attempt = 0; attempt < 100 && receipt.state !== "computed"; attempt++) {
    const response = await fetch(`${server.url}/v1/requests/${requestId}/settlement`, { headers: { authorization: `Bearer ${billed.apiKey}` } });
    if (response.status === 200) receipt = (await response.json()) as typeof receipt;
    if (receipt.state !== "computed") await Bun.sleep(50);
  }
  if (receipt.state !== "computed") console.log(`server log:\n${server.output().split("\n").filter((line) => line.includes("level")).slice(-20).join("\n")}`);
  expect(receipt.state).toBe("computed");
  expect(receipt.final_charge_micro_usd).toBeGreaterThan(0);
  const balance = (await fetch(`${server.url}/v1/billing/balance`, { headers: { authorization: `Bearer ${billed.apiKey}` } }).then((r) => r.json())) as { balance_micro_usd: number };
  expect(balance.balance_micro_usd).toBe(10_000_000 - receipt.final_charge_micro_usd!);
  const ledger = (await fetch(`${server.url}/v1/billing/transactions`, { headers: { authorization: `Bearer ${billed.apiKey}` } }).then((r) => r.json())) as {
    data: Array<{ kind: string; amount_micro_usd: number; request_id: string | null }>;
  };
  expect(ledger.data.find((entry) => entry.request_id === requestId)).toMatchObject({ kind: "usage", amount_micro_usd: -receipt.final_charge_micro_usd! });
}, 60_000);

/**
 * Shared pieces of the metering end-to-end tests: one request in any of the four client
 * protocols, rows read straight from PostgreSQL, charges computed by hand from the
 * CATALOG prices, and the number of usage reports a mock upstream sends.
 */
import postgres from "postgres";
import { MOCK_PROVIDERS, type CatalogPricing, type MockScenario, type UpstreamProtocol } from "../support/mock-upstreams";
import { anthropicMessagesMock } from "../support/mock-upstreams/anthropic-messages-mock";
import { googleGenerateContentMock } from "../support/mock-upstreams/google-generate-content-mock";
import { openaiChatMock } from "../support/mock-upstreams/openai-chat-mock";
import { openaiResponsesMock } from "../support/mock-upstreams/openai-responses-mock";
import type { MockProtocol } from "../support/mock-upstreams/mock-protocol";
import { resolveScenario } from "../support/mock-upstreams/resolve-scenario";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";

export type Protocol = UpstreamProtocol;
export const PROTOCOLS: readonly Protocol[] = ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"];

/** The first catalog model of each mock provider, and which mock serves it. */
export const UPSTREAM = {
  "openai-chat": { model: "mock-openai/gpt-4o-mini", providerId: "mock-openai", mock: "openai", upstreamId: "gpt-4o-mini" },
  "openai-responses": { model: "mock-responses/gpt-5-mini", providerId: "mock-responses", mock: "responses", upstreamId: "gpt-5-mini" },
  "anthropic-messages": { model: "mock-anthropic/claude-sonnet-4-5", providerId: "mock-anthropic", mock: "anthropic", upstreamId: "claude-sonnet-4-5" },
  "google-generate-content": { model: "mock-google/gemini-2.5-flash", providerId: "mock-google", mock: "google", upstreamId: "gemini-2.5-flash" },
} as const satisfies Record<Protocol, { model: string; providerId: string; mock: "openai" | "responses" | "anthropic" | "google"; upstreamId: string }>;

/** The catalog endpoint's prices (USD per 1M tokens = µUSD per token) of a mock provider's model. */
export function catalogPricing(upstream: Protocol, upstreamId: string = UPSTREAM[upstream].upstreamId): CatalogPricing {
  const base = upstreamId.replace(/@.*$/, "");
  const model = MOCK_PROVIDERS[upstream].models.find((entry) => entry.upstreamId === base);
  if (!model) throw new Error(`no catalog model ${upstreamId} for ${upstream}`);
  return model.pricing;
}

export interface Buckets {
  uncachedInput: number;
  cacheRead?: number;
  cacheWrite?: number;
  output: number;
  reasoning?: number;
}

/**
 * Σ bucket × rate, exact (rates scaled to integers), rounded ONCE to the nearest µUSD,
 * halves up; reasoning bills at the output rate.
 */
export function handCharge(pricing: CatalogPricing, buckets: Buckets): number {
  const scale = 1_000_000n;
  const units = (rate: number) => BigInt(Math.round(rate * 1_000_000));
  const sum =
    BigInt(buckets.uncachedInput) * units(pricing.input) +
    BigInt(buckets.cacheRead ?? 0) * units(pricing.cache_read) +
    BigInt(buckets.cacheWrite ?? 0) * units(pricing.cache_write) +
    BigInt(buckets.output + (buckets.reasoning ?? 0)) * units(pricing.output);
  return Number((2n * sum + scale) / (2n * scale));
}

export interface SendOptions {
  stream?: boolean;
  requestId?: string;
  /** The request's max output tokens (every protocol's own field). Messages always sends one (default 1024). */
  maxTokens?: number;
  /** Chat only: stream_options.include_usage. */
  includeUsage?: boolean;
  prompt?: string;
  apiKey?: string;
  /** Extra body fields (e.g. `models`). */
  extra?: Record<string, unknown>;
  signal?: AbortSignal;
}

export function requestFor(client: Protocol, model: string, options: SendOptions): { path: string; body: Record<string, unknown> } {
  const prompt = options.prompt ?? "Hi";
  const stream = options.stream === true;
  switch (client) {
    case "openai-chat":
      return {
        path: "/v1/chat/completions",
        body: {
          model,
          messages: [{ role: "user", content: prompt }],
          stream,
          ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
          ...(options.includeUsage ? { stream_options: { include_usage: true } } : {}),
          ...options.extra,
        },
      };
    case "openai-responses":
      return {
        path: "/v1/responses",
        body: { model, input: prompt, stream, ...(options.maxTokens === undefined ? {} : { max_output_tokens: options.maxTokens }), ...options.extra },
      };
    case "anthropic-messages":
      return {
        path: "/v1/messages",
        body: { model, max_tokens: options.maxTokens ?? 1024, messages: [{ role: "user", content: prompt }], stream, ...options.extra },
      };
    case "google-generate-content":
      return {
        path: `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
        body: {
          contents: [{ role: "user", parts: [{ text: prompt }] }],
          ...(options.maxTokens === undefined ? {} : { generationConfig: { maxOutputTokens: options.maxTokens } }),
          ...options.extra,
        },
      };
  }
}

export interface Sent {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body of a non-streamed answer. */
  json: any;
  requestId: string;
}

/** One inference request over real HTTP, body read to the end. */
export async function send(baseUrl: string, apiKey: string, client: Protocol, model: string, options: SendOptions = {}): Promise<Sent> {
  const requestId = options.requestId ?? `req-${crypto.randomUUID()}`;
  const { path, body } = requestFor(client, model, options);
  const response = await fetch(baseUrl + path, {
    method: "POST",
    headers: { authorization: `Bearer ${options.apiKey ?? apiKey}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify(body),
    signal: options.signal,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json, requestId };
}

/** The JSON payloads of an SSE body (the `data:` lines), `[DONE]` left out. */
export function sseJson(text: string): any[] {
  const out: unknown[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "" || data === "[DONE]") continue;
    out.push(JSON.parse(data));
  }
  return out;
}

const WIRES: Record<Protocol, MockProtocol> = {
  "openai-chat": openaiChatMock,
  "openai-responses": openaiResponsesMock,
  "anthropic-messages": anthropicMessagesMock,
  "google-generate-content": googleGenerateContentMock,
};

function carriesUsage(payload: any): boolean {
  const isObject = (value: unknown) => typeof value === "object" && value !== null;
  return isObject(payload?.usage) || isObject(payload?.message?.usage) || isObject(payload?.response?.usage) || isObject(payload?.usageMetadata);
}

/**
 * How many usage reports the mock upstream sends for this scenario: 1 for a body, and for
 * a stream the frames that carry a usage object (Switchyard always asks chat upstreams
 * for include_usage). Rendered by the mock's own wire code, so it counts what was sent.
 */
export function usageReports(upstream: Protocol, scenario: MockScenario, stream: boolean, maxTokens?: number): number {
  if (!stream) return 1;
  const resolved = resolveScenario(scenario, maxTokens);
  const frames = WIRES[upstream].renderStream(resolved, {
    model: UPSTREAM[upstream].upstreamId,
    stream: true,
    body: { stream_options: { include_usage: true } },
    jsonArrayStream: false,
  });
  return frames.flatMap((frame) => sseJson(frame)).filter(carriesUsage).length;
}

/** A postgres.js client on the harness's database (closed by `closeClients`). */
const clients: postgres.Sql[] = [];
export function database(url: string): postgres.Sql {
  const sql = postgres(url, { max: 2, onnotice: () => {}, types: { bigint: postgres.BigInt } });
  clients.push(sql);
  return sql;
}
export async function closeClients(): Promise<void> {
  await Promise.all(clients.splice(0).map((sql) => sql.end({ timeout: 1 })));
}

/** The setup of the tests that send real requests and read what they wrote: the harness and a client on its database. */
export async function startMeteringHarness(): Promise<{ harness: InferenceHarness; sql: postgres.Sql }> {
  const harness = await startInferenceHarness();
  return { harness, sql: database(harness.server.databaseUrl) };
}

/** Its teardown: the clients `database` opened, then the harness. */
export async function stopMeteringHarness(harness: InferenceHarness): Promise<void> {
  await closeClients();
  await harness.close();
}

/** Writes every buffered metering row now. */
export function flush(harness: InferenceHarness): Promise<void> {
  return harness.server.server.services.writeBuffer.flush();
}

/** The request records with this client-visible id (normally exactly one). */
export async function recordsFor(sql: postgres.Sql, requestId: string): Promise<any[]> {
  const rows = await sql`select * from requests where request_id = ${requestId}`;
  return rows.map(normaliseRow);
}

/** Metering documents are stored as JSON text (migration 0009). */
const JSON_TEXT_COLUMNS = new Set(["attempts", "usage_evidence", "warnings", "charge_audit", "usage", "pricing", "buckets"]);

/** bigint columns as numbers (all far below 2^53 here), JSON text columns parsed. */
export function normaliseRow(row: Record<string, unknown>): any {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    out[key] = typeof value === "bigint" ? Number(value) : JSON_TEXT_COLUMNS.has(key) && typeof value === "string" ? JSON.parse(value) : value;
  }
  return out;
}

export async function wallet(sql: postgres.Sql, accountId: string): Promise<{ balance: number; reserved: number }> {
  const [row] = await sql`select balance_micro_usd, reserved_micro_usd from wallets where account_id = ${accountId}`;
  return { balance: Number(row!.balance_micro_usd), reserved: Number(row!.reserved_micro_usd) };
}

/**
 * Lets the gateway give back what admission still holds for idle accounts, as it does on
 * its own once they have been idle a while: the wallet leases (src/admission/wallet-leases.ts)
 * are returned by a maintenance tick run as if an hour had passed. No-op without leases.
 */
export async function returnIdleReservations(harness: InferenceHarness): Promise<void> {
  const leases = (harness.server.server.services as { walletLeases?: { tick(now?: number): Promise<void> } }).walletLeases;
  await leases?.tick(Date.now() + 3_600_000);
}

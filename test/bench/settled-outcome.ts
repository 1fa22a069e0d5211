/** The finished requests the write-path benchmarks settle (test/bench/write-path.ts, partition-load.ts). */
import { arrivingRequest, type RequestOutcome } from "../../src/metering/request-outcome";
import type { AttemptRecord } from "../../src/routing/attempt-record";
import type { AttemptCandidate } from "../../src/routing/attempt-candidate";

const candidate: AttemptCandidate = {
  protocol: "openai-chat",
  baseUrl: "https://api.openai.example/v1",
  providerModelId: "gpt-4.1-mini",
  apiKey: "unused",
  modelId: "openai/gpt-4.1-mini",
  providerId: "openai",
  statsKey: "openai/gpt-4.1-mini",
  pricing: { input: 0.4, output: 1.6, cacheRead: 0.1, contextTiers: [] },
  limits: {},
  funding: "cloud_credit",
  routingProfile: "balanced",
};

/**
 * Request `i` of a benchmark, finished with a single successful attempt, as the pipeline
 * hands it to settleRequest: tokens vary with `i`, one of `accounts` accounts (`acct_bench_<n>`,
 * namespace `ns_bench_<n>`), created now unless `createdAt` says when.
 */
export function outcomeFor(i: number, accounts: number, createdAt = new Date()): RequestOutcome {
  const now = performance.now();
  const prompt = 200 + (i % 1_800);
  const completion = 20 + (i % 700);
  const attempt: AttemptRecord = {
    ordinal: 1,
    candidate,
    outcome: "success",
    status: 200,
    signals: [
      {
        usageFrames: [{ promptTokens: prompt, completionTokens: completion, cacheReadTokens: i % 7 === 0 ? 128 : 0 }],
        outputBytes: completion * 4,
        toolCalls: 0,
        firstToken: "text",
        finish: { reason: "stop" },
      },
    ],
    startedAt: now - 900,
    firstTokenAt: now - 400,
    endedAt: now - 5,
  };
  const account = `acct_bench_${i % accounts}`;
  const principal = { kind: "api_key" as const, id: `k_bench_${i % accounts}`, accountId: account, namespaceId: null, scopes: ["inference:invoke"], oauthClientId: null, expiresAt: null };
  return {
    ...arrivingRequest({ requestId: Bun.randomUUIDv7(), principal, clientProtocol: "openai-chat", createdAt, startedAt: now - 1_000 }),
    namespaceId: `ns_bench_${i % accounts}`,
    streamed: i % 2 === 0,
    status: "succeeded",
    statusCode: 200,
    requestedModel: "openai/gpt-4.1-mini",
    routingProfile: "balanced",
    attempts: [attempt],
    serving: attempt,
    promptChars: prompt * 4,
    usedCapabilities: i % 5 === 0 ? ["tools"] : [],
  };
}

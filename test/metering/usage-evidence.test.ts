import { describe, expect, test } from "bun:test";
import { computeCharge } from "../../src/metering/compute-charge";
import { ESTIMATOR } from "../../src/metering/estimate-tokens";
import { buildUsageEvidence, settlementUsage, type AttemptUsage } from "../../src/metering/usage-evidence";
import type { CatalogPricing } from "../../src/providers/pricing";

const anthropicRates: CatalogPricing = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, contextTiers: [] };

const failedFallback: AttemptUsage = {
  ordinal: 1,
  providerId: "openai",
  providerModelId: "gpt-4o-mini",
  accountLabel: "byok",
  usageFrames: [{ promptTokens: 40, completionTokens: 3 }],
};

/** Anthropic reports input (with the cache split) at message_start and the final output at message_delta. */
const servingAnthropic: AttemptUsage = {
  ordinal: 2,
  providerId: "anthropic",
  providerModelId: "claude-sonnet-4-5",
  accountLabel: "platform",
  usageFrames: [
    { promptTokens: 125, cacheReadTokens: 100, cacheWriteTokens: 20, completionTokens: 1 },
    { completionTokens: 10, webSearchCount: 1 },
  ],
};

describe("buildUsageEvidence", () => {
  test("records every usage frame of every attempt, failed fallbacks included, with 1-based ordinals", () => {
    const { evidence } = buildUsageEvidence({ attempts: [servingAnthropic, failedFallback], servingAttemptOrdinal: 2 });
    expect(evidence.raw_usage_frames).toEqual([
      {
        account_label: "byok",
        attempt_ordinal: 1,
        frame_kind: "usage",
        frame_ordinal: 1,
        provider_id: "openai",
        provider_model_id: "gpt-4o-mini",
        usage: { cache_read_tokens: 0, cache_write_tokens: 0, completion_tokens: 3, prompt_tokens: 40, reasoning_tokens: 0, web_search_count: 0 },
      },
      {
        account_label: "platform",
        attempt_ordinal: 2,
        frame_kind: "usage",
        frame_ordinal: 1,
        provider_id: "anthropic",
        provider_model_id: "claude-sonnet-4-5",
        usage: { cache_read_tokens: 100, cache_write_tokens: 20, completion_tokens: 1, prompt_tokens: 125, reasoning_tokens: 0, web_search_count: 0 },
      },
      {
        account_label: "platform",
        attempt_ordinal: 2,
        frame_kind: "usage",
        frame_ordinal: 2,
        provider_id: "anthropic",
        provider_model_id: "claude-sonnet-4-5",
        usage: { cache_read_tokens: 0, cache_write_tokens: 0, completion_tokens: 10, prompt_tokens: 0, reasoning_tokens: 0, web_search_count: 1 },
      },
    ]);
  });

  test("merges the serving attempt's frames field by field, later frames winning, and ignores the failed attempt", () => {
    const { evidence, usage } = buildUsageEvidence({ attempts: [failedFallback, servingAnthropic], servingAttemptOrdinal: 2 });
    expect(evidence.source).toBe("provider_reported");
    expect(evidence.effective_usage).toEqual({
      cache_read_tokens: 100,
      cache_write_tokens: 20,
      completion_tokens: 10,
      media_input_count: 0,
      media_output_count: 0,
      prompt_tokens: 125,
      reasoning_tokens: 0,
      web_search_count: 1,
    });
    expect(evidence.raw_usage).toEqual({ cache_read_tokens: 100, cache_write_tokens: 20, completion_tokens: 10, prompt_tokens: 125, reasoning_tokens: 0, web_search_count: 1 });
    expect(usage).toEqual({ promptTokens: 125, cacheReadTokens: 100, cacheWriteTokens: 20, completionTokens: 10, webSearchCount: 1 });
    // 5 × 3 + 100 × 0.3 + 20 × 3.75 + 10 × 15 = 270
    expect(computeCharge(usage, anthropicRates).chargeMicroUsd).toBe(270);
  });

  test("always states the estimator", () => {
    const { evidence } = buildUsageEvidence({ attempts: [servingAnthropic], servingAttemptOrdinal: 2 });
    expect(evidence.estimator).toEqual({ chars_per_token: ESTIMATOR.chars_per_token, version: ESTIMATOR.version });
  });

  test("keeps a counter the provider did not report unknown for billing while the frame shows 0", () => {
    const promptOnly: AttemptUsage = { ...servingAnthropic, usageFrames: [{ promptTokens: 125 }] };
    const { evidence, usage } = buildUsageEvidence({ attempts: [promptOnly], servingAttemptOrdinal: 2 });
    expect(evidence.source).toBe("provider_reported");
    expect(evidence.raw_usage_frames[0]?.usage.completion_tokens).toBe(0);
    expect(usage.completionTokens).toBeUndefined();
    expect(computeCharge(usage, anthropicRates)).toMatchObject({ status: "unknown", chargeMicroUsd: null });
  });

  test("treats negative or fractional counters from an upstream as not reported", () => {
    const broken: AttemptUsage = { ...servingAnthropic, usageFrames: [{ promptTokens: -5, completionTokens: 2.5, cacheReadTokens: Number.NaN }] };
    const { evidence, usage } = buildUsageEvidence({ attempts: [broken], servingAttemptOrdinal: 2 });
    expect(usage).toEqual({});
    expect(evidence.source).toBe("unknown");
    expect(evidence.raw_usage_frames[0]?.usage).toEqual({ cache_read_tokens: 0, cache_write_tokens: 0, completion_tokens: 0, prompt_tokens: 0, reasoning_tokens: 0, web_search_count: 0 });
  });

  test("reports unknown usage when no attempt served and nothing was estimated", () => {
    const { evidence, usage } = buildUsageEvidence({ attempts: [failedFallback], servingAttemptOrdinal: undefined });
    expect(evidence.source).toBe("unknown");
    expect(evidence.raw_usage_frames).toHaveLength(1);
    expect(evidence.effective_usage.prompt_tokens).toBe(0);
    expect(computeCharge(usage, anthropicRates)).toMatchObject({ status: "unknown", chargeMicroUsd: null });
  });

  test("bills the given upper bounds when the serving attempt reported none", () => {
    const silent: AttemptUsage = { ...servingAnthropic, usageFrames: [] };
    const { evidence, usage } = buildUsageEvidence({
      attempts: [silent],
      servingAttemptOrdinal: 2,
      estimate: { reason: "usage_missing", promptTokens: 101, completionTokens: 10 },
    });
    expect(evidence.source).toBe("estimated");
    expect(usage).toMatchObject({ promptTokens: 101, completionTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
    expect(evidence.effective_usage).toMatchObject({ prompt_tokens: 101, completion_tokens: 10 });
    expect(evidence.raw_usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0 });
    // 101 × 3 + 10 × 15 = 453
    expect(computeCharge(usage, anthropicRates).chargeMicroUsd).toBe(453);
  });

  test("keeps the reported prompt and its cache split but estimates the output when the client disconnected mid-stream", () => {
    const startedOnly: AttemptUsage = { ...servingAnthropic, usageFrames: [servingAnthropic.usageFrames[0] ?? {}] };
    const { evidence, usage } = buildUsageEvidence({
      attempts: [startedOnly],
      servingAttemptOrdinal: 2,
      estimate: { reason: "client_disconnected", promptTokens: 10, completionTokens: 10 },
    });
    // message_start's completion count (1) is not final; the bound, 10 output tokens, instead.
    expect(evidence.source).toBe("estimated");
    expect(usage).toMatchObject({ promptTokens: 125, cacheReadTokens: 100, cacheWriteTokens: 20, completionTokens: 10, reasoningTokens: 0 });
    expect(evidence.raw_usage.completion_tokens).toBe(1);
    expect(evidence.effective_usage.completion_tokens).toBe(10);
    expect(computeCharge(usage, anthropicRates).chargeMicroUsd).toBe(270);
  });

  test("prefers complete provider usage over an estimate offered for missing usage", () => {
    const { evidence, usage } = buildUsageEvidence({
      attempts: [servingAnthropic],
      servingAttemptOrdinal: 2,
      estimate: { reason: "usage_missing", promptTokens: 4_000, completionTokens: 4_000 },
    });
    expect(evidence.source).toBe("provider_reported");
    expect(usage.promptTokens).toBe(125);
  });
});

describe("settlementUsage", () => {
  test("renders the receipt's non-overlapping buckets", () => {
    expect(settlementUsage({ promptTokens: 125, cacheReadTokens: 100, cacheWriteTokens: 20, completionTokens: 10, reasoningTokens: 4 })).toEqual({
      uncached_input_tokens: 5,
      cache_read_tokens: 100,
      cache_write_tokens: 20,
      output_tokens: 6,
      reasoning_tokens: 4,
    });
  });

  test("clamps contradictory or unknown counters to 0", () => {
    expect(settlementUsage({ promptTokens: 10, cacheReadTokens: 20, completionTokens: 3, reasoningTokens: 5 })).toEqual({
      uncached_input_tokens: 0,
      cache_read_tokens: 20,
      cache_write_tokens: 0,
      output_tokens: 0,
      reasoning_tokens: 5,
    });
    expect(settlementUsage({})).toEqual({ uncached_input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 });
  });
});

import { describe, expect, test } from "bun:test";
import { computeCharge, type NormalisedUsage } from "../../src/metering/compute-charge";
import type { CatalogPricing } from "../../src/providers/pricing";

const anthropicRates: CatalogPricing = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, contextTiers: [] };

describe("computeCharge", () => {
  test("bills one million prompt tokens at $0.15/M as 150,000 micro-USD", () => {
    const pricing: CatalogPricing = { input: 0.15, output: 0.6, contextTiers: [] };
    expect(computeCharge({ promptTokens: 1_000_000, completionTokens: 0 }, pricing)).toEqual({
      status: "computed",
      chargeMicroUsd: 150_000,
      buckets: { uncachedInput: 1_000_000, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
      rates: { input: 0.15, output: 0.6 },
    });
  });

  test("splits Anthropic-style usage into non-overlapping buckets and prices each at its own rate", () => {
    // prompt 125 includes cache read 100 and cache write 20, so uncached input = 5.
    //   uncached input   5 × 3     =  15
    //   cache read     100 × 0.3   =  30
    //   cache write     20 × 3.75  =  75
    //   output          10 × 15    = 150
    //   total                      = 270 micro-USD
    const usage: NormalisedUsage = { promptTokens: 125, completionTokens: 10, cacheReadTokens: 100, cacheWriteTokens: 20 };
    const result = computeCharge(usage, anthropicRates);
    expect(result).toMatchObject({ status: "computed", chargeMicroUsd: 270 });
    expect(result.status === "computed" && result.buckets).toEqual({ uncachedInput: 5, cacheRead: 100, cacheWrite: 20, output: 10, reasoning: 0 });
  });

  test("rounds once over the whole sum, not once per bucket", () => {
    // One token in each of the five buckets at 0.4 µUSD: per-bucket rounding gives 0 + 0 + 0 + 0 + 0 = 0,
    // the exact sum is 2.0, so the charge is 2.
    const pricing: CatalogPricing = { input: 0.4, output: 0.4, cacheRead: 0.4, cacheWrite: 0.4, contextTiers: [] };
    const usage: NormalisedUsage = { promptTokens: 3, cacheReadTokens: 1, cacheWriteTokens: 1, completionTokens: 2, reasoningTokens: 1 };
    expect(computeCharge(usage, pricing).chargeMicroUsd).toBe(2);
  });

  test("rounds a half micro-USD away from zero, once", () => {
    // Five buckets at 0.5 µUSD: per-bucket half-up rounding would give 5; the sum 2.5 rounds to 3.
    const pricing: CatalogPricing = { input: 0.5, output: 0.5, cacheRead: 0.5, cacheWrite: 0.5, contextTiers: [] };
    const usage: NormalisedUsage = { promptTokens: 3, cacheReadTokens: 1, cacheWriteTokens: 1, completionTokens: 2, reasoningTokens: 1 };
    expect(computeCharge(usage, pricing).chargeMicroUsd).toBe(3);
  });

  test("uses the catalog's decimal rate exactly, where binary floats would round a half down", () => {
    // 100 × 1.005 = 100.5 exactly, which rounds to 101; in doubles 100 * 1.005 is 100.49999999999999.
    expect(100 * 1.005).toBeLessThan(100.5);
    const pricing: CatalogPricing = { input: 1.005, output: 1, contextTiers: [] };
    expect(computeCharge({ promptTokens: 100, completionTokens: 0 }, pricing).chargeMicroUsd).toBe(101);
  });

  test("handles rates that print in exponent form", () => {
    // 10,000,000 × 1.5e-7 = 1.5 → 2; 10,000,000 × 2e-7 = 2 → total 3.5 → 4.
    const pricing: CatalogPricing = { input: 1.5e-7, output: 2e-7, contextTiers: [] };
    expect(computeCharge({ promptTokens: 10_000_000, completionTokens: 10_000_000 }, pricing).chargeMicroUsd).toBe(4);
  });

  test("bills reasoning tokens at the output rate", () => {
    // completion 100 includes reasoning 60: output 40 × 10 + reasoning 60 × 10 + input 7 × 1 = 1,007.
    const pricing: CatalogPricing = { input: 1, output: 10, contextTiers: [] };
    const result = computeCharge({ promptTokens: 7, completionTokens: 100, reasoningTokens: 60 }, pricing);
    expect(result).toMatchObject({ status: "computed", chargeMicroUsd: 1_007, buckets: { output: 40, reasoning: 60 } });
  });

  describe("context tiers", () => {
    const tiered: CatalogPricing = { input: 1, output: 2, contextTiers: [{ aboveInputTokens: 1_000, input: 3, output: 4 }] };

    test("bills a prompt of exactly the tier bound at the base rates, because the bound is exclusive", () => {
      // 1,000 × 1 + 10 × 2 = 1,020
      expect(computeCharge({ promptTokens: 1_000, completionTokens: 10 }, tiered).chargeMicroUsd).toBe(1_020);
    });

    test("bills the whole request at the tier one token above the bound, output and reasoning included", () => {
      // 1,001 × 3 + (6 output + 4 reasoning) × 4 = 3,003 + 40 = 3,043
      expect(computeCharge({ promptTokens: 1_001, completionTokens: 10, reasoningTokens: 4 }, tiered).chargeMicroUsd).toBe(3_043);
    });

    test("chooses the tier from total prompt tokens, cached tokens included", () => {
      // prompt 1,001 = 1 uncached + 1,000 cache read; the tier applies: 1 × 3 + 1,000 × 0.5 + 0 = 503
      const pricing: CatalogPricing = { ...tiered, cacheRead: 0.5 };
      expect(computeCharge({ promptTokens: 1_001, cacheReadTokens: 1_000, completionTokens: 0 }, pricing).chargeMicroUsd).toBe(503);
    });

    test("lets a tier that omits a rate inherit the base rate", () => {
      // tier sets input only: 2,000 × 5 + 10 × 2 (base output) = 10,020
      const inputOnly: CatalogPricing = { input: 1, output: 2, contextTiers: [{ aboveInputTokens: 1_000, input: 5 }] };
      expect(computeCharge({ promptTokens: 2_000, completionTokens: 10 }, inputOnly).chargeMicroUsd).toBe(10_020);
    });
  });

  test("reports a non-zero bucket without a rate as unknown, never as zero", () => {
    const noCacheWrite: CatalogPricing = { input: 3, output: 15, cacheRead: 0.3, contextTiers: [] };
    const usage: NormalisedUsage = { promptTokens: 125, completionTokens: 10, cacheReadTokens: 100, cacheWriteTokens: 20 };
    expect(computeCharge(usage, noCacheWrite)).toEqual({ status: "unknown", chargeMicroUsd: null, reason: "missing_rate:cache_write" });
  });

  test("needs no rate for a bucket that is zero", () => {
    const noCacheRates: CatalogPricing = { input: 3, output: 15, contextTiers: [] };
    expect(computeCharge({ promptTokens: 10, completionTokens: 2, cacheReadTokens: 0 }, noCacheRates)).toMatchObject({ status: "computed", chargeMicroUsd: 60 });
  });

  test("reports cache reads above the prompt total as invalid input buckets", () => {
    expect(computeCharge({ promptTokens: 10, completionTokens: 1, cacheReadTokens: 8, cacheWriteTokens: 3 }, anthropicRates)).toEqual({
      status: "unknown",
      chargeMicroUsd: null,
      reason: "invalid_input_buckets",
    });
  });

  test("reports reasoning above the completion total as invalid output buckets", () => {
    expect(computeCharge({ promptTokens: 10, completionTokens: 5, reasoningTokens: 6 }, anthropicRates)).toEqual({
      status: "unknown",
      chargeMicroUsd: null,
      reason: "invalid_output_buckets",
    });
  });

  test("reports usage without a prompt or completion count as unknown", () => {
    expect(computeCharge({ promptTokens: 10 }, anthropicRates)).toEqual({ status: "unknown", chargeMicroUsd: null, reason: "usage_not_reported" });
    expect(computeCharge({ completionTokens: 10 }, anthropicRates)).toEqual({ status: "unknown", chargeMicroUsd: null, reason: "usage_not_reported" });
  });

  test("reports negative, fractional or non-finite token counts as unknown", () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(computeCharge({ promptTokens: bad, completionTokens: 1 }, anthropicRates)).toMatchObject({ status: "unknown", reason: "invalid_token_count" });
      expect(computeCharge({ promptTokens: 10, completionTokens: 1, cacheReadTokens: bad }, anthropicRates)).toMatchObject({ status: "unknown", reason: "invalid_token_count" });
    }
  });

  test("reports a negative rate as unknown instead of clamping it away", () => {
    const negative: CatalogPricing = { input: -1, output: 15, contextTiers: [] };
    expect(computeCharge({ promptTokens: 10, completionTokens: 0 }, negative)).toMatchObject({ status: "unknown", reason: "invalid_rate:uncached_input" });
  });

  test("marks zero usage as not charged with a charge of 0", () => {
    expect(computeCharge({ promptTokens: 0, completionTokens: 0 }, anthropicRates)).toEqual({ status: "not_charged", chargeMicroUsd: 0 });
  });

  test("returns integer micro-USD for a large request", () => {
    // 150,000 × 3 + 1,850,000 × 0.3 + 4,321 × 15 = 450,000 + 555,000 + 64,815 = 1,069,815
    const usage: NormalisedUsage = { promptTokens: 2_000_000, cacheReadTokens: 1_850_000, completionTokens: 4_321 };
    const charge = computeCharge(usage, anthropicRates).chargeMicroUsd;
    expect(charge).toBe(1_069_815);
    expect(Number.isInteger(charge)).toBe(true);
  });

  /** The charge computed independently: rates as written in decimal, big integers throughout, halves up. */
  function referenceCharge(tokens: { input: number; output: number }, rates: { input: string; output: string }): number {
    const parse = (text: string) => {
      const [whole = "0", fraction = ""] = text.split(".");
      return { units: BigInt(whole + fraction), scale: fraction.length };
    };
    const input = parse(rates.input);
    const output = parse(rates.output);
    const scale = Math.max(input.scale, output.scale);
    const numerator =
      BigInt(tokens.input) * input.units * 10n ** BigInt(scale - input.scale) + BigInt(tokens.output) * output.units * 10n ** BigInt(scale - output.scale);
    const denominator = 10n ** BigInt(scale);
    return Number((2n * numerator + denominator) / (2n * denominator));
  }

  test("matches an independent big-integer computation for 5,000 random requests and rates (the fast integer path is exact)", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    const rateText = () => `${Math.floor(random() * 100)}.${String(Math.floor(random() * 1_000_000)).padStart(6, "0").replace(/0+$/, "") || "0"}`;
    for (let i = 0; i < 5_000; i++) {
      const rates = { input: rateText(), output: rateText() };
      const tokens = { input: Math.floor(random() * 3_000_000), output: Math.floor(random() * 200_000) };
      const pricing: CatalogPricing = { input: Number(rates.input), output: Number(rates.output), contextTiers: [] };
      const charge = computeCharge({ promptTokens: tokens.input, completionTokens: tokens.output }, pricing).chargeMicroUsd;
      if (charge !== referenceCharge(tokens, rates)) throw new Error(`mismatch for ${JSON.stringify({ tokens, rates })}: ${charge}`);
    }
  });

  test("stays exact beyond 2^53 in the intermediate sum (the big-integer path)", () => {
    // 9e15 tokens at $123.456789/M: the scaled sum is far above 2^53.
    const tokens = { input: 9_000_000_000_000_000, output: 0 };
    const pricing: CatalogPricing = { input: 123.456789, output: 1, contextTiers: [] };
    const charge = computeCharge({ promptTokens: tokens.input, completionTokens: 0 }, pricing).chargeMicroUsd;
    expect(charge).toBe(referenceCharge(tokens, { input: "123.456789", output: "1" }));
  });
});

import type { IrUsage } from "../ir";
import { pricingForPromptTokens, type CatalogPricing, type TokenRates } from "../providers/pricing";

/**
 * Usage as metering bills it: prompt includes cache read and write,
 * completion includes reasoning. An absent prompt or completion count is unknown, and so
 * is the charge. An absent reasoning or cache counter counts as 0 (OpenAI and Gemini have
 * no cache-write counter): the inclusive totals still carry those tokens, so they bill at
 * the uncached-input or output rate, never for free. The counters are the IR's (IrUsage),
 * without the provider's raw object; `webSearchCount` is kept for the record but does not
 * bill (the catalog has no per-search price).
 */
export type NormalisedUsage = Omit<IrUsage, "raw">;

/** The non-overlapping billing buckets, in tokens. */
export interface ChargeBuckets {
  uncachedInput: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

export type BucketName = "uncached_input" | "cache_read" | "cache_write" | "output" | "reasoning";

export type ChargeUnknownReason =
  | "usage_not_reported"
  | "invalid_token_count"
  | "invalid_input_buckets"
  | "invalid_output_buckets"
  | `missing_rate:${BucketName}`
  | `invalid_rate:${BucketName}`;

export type ChargeResult =
  | { status: "computed"; chargeMicroUsd: number; buckets: ChargeBuckets; rates: TokenRates }
  | { status: "not_charged"; chargeMicroUsd: 0 }
  | { status: "unknown"; chargeMicroUsd: null; reason: ChargeUnknownReason };

/**
 * Splits usage into the billing buckets. The result may be negative when
 * the provider's counters contradict each other; callers decide what that means.
 */
export function billingBuckets(usage: NormalisedUsage): ChargeBuckets {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const reasoning = usage.reasoningTokens ?? 0;
  return {
    uncachedInput: (usage.promptTokens ?? 0) - cacheRead - cacheWrite,
    cacheRead,
    cacheWrite,
    output: (usage.completionTokens ?? 0) - reasoning,
    reasoning,
  };
}

/**
 * The charge for one request in integer micro-USD. Rates are USD per 1M
 * tokens, i.e. micro-USD per token. The context tier is chosen from the total prompt
 * tokens and bills the whole request; reasoning bills at the output rate.
 *
 * Rounding: the sum is exact (each rate is taken as the decimal the catalog wrote, and
 * summed as a big-integer fraction), then rounded once to the nearest micro-USD, halves
 * away from zero. Because the sum is exact, summing equal-rate buckets first
 * (a float-error guard) changes nothing and is not needed. Every term is ≥ 0 (negative
 * counts and rates are rejected as unknown), so the charge is ≥ 0.
 */
export function computeCharge(usage: NormalisedUsage, pricing: CatalogPricing): ChargeResult {
  if (usage.promptTokens === undefined || usage.completionTokens === undefined) return unknown("usage_not_reported");
  const counts = [usage.promptTokens, usage.completionTokens, usage.reasoningTokens, usage.cacheReadTokens, usage.cacheWriteTokens];
  if (!counts.every((count) => count === undefined || isTokenCount(count))) return unknown("invalid_token_count");

  const buckets = billingBuckets(usage);
  if (buckets.uncachedInput < 0) return unknown("invalid_input_buckets");
  if (buckets.output < 0) return unknown("invalid_output_buckets");
  if (usage.promptTokens === 0 && usage.completionTokens === 0) return { status: "not_charged", chargeMicroUsd: 0 };

  const rates = pricingForPromptTokens(pricing, usage.promptTokens);
  const terms: [BucketName, number, number | undefined][] = [
    ["uncached_input", buckets.uncachedInput, rates.input],
    ["cache_read", buckets.cacheRead, rates.cacheRead],
    ["cache_write", buckets.cacheWrite, rates.cacheWrite],
    ["output", buckets.output, rates.output],
    ["reasoning", buckets.reasoning, rates.output],
  ];

  const priced: { tokens: number; rate: ExactDecimal }[] = [];
  for (const [bucket, tokens, rate] of terms) {
    if (tokens === 0) continue; // a zero bucket needs no rate
    if (rate === undefined) return unknown(`missing_rate:${bucket}`);
    if (!Number.isFinite(rate) || rate < 0) return unknown(`invalid_rate:${bucket}`);
    priced.push({ tokens, rate: exactDecimal(rate) });
  }
  const chargeMicroUsd = exactSum(priced) ?? exactSumBig(priced);
  return { status: "computed", chargeMicroUsd, buckets, rates };
}

/**
 * Σ tokens × rate rounded once, in plain integers: every product and partial sum is
 * checked to stay below 2^53, where double arithmetic on integers is exact. Undefined
 * when a term does not fit (then the big-integer path below computes it).
 */
function exactSum(priced: readonly { tokens: number; rate: ExactDecimal }[]): number | undefined {
  let scale = 0;
  for (const term of priced) if (term.rate.scale > scale) scale = term.rate.scale;
  const denominator = POWERS_OF_TEN[scale];
  if (denominator === undefined) return undefined;
  let numerator = 0;
  for (const term of priced) {
    const units = term.rate.unitsNumber * POWERS_OF_TEN[scale - term.rate.scale]!;
    const product = term.tokens * units;
    numerator += product;
    if (!Number.isSafeInteger(units) || !Number.isSafeInteger(product) || !Number.isSafeInteger(numerator)) return undefined;
  }
  // floor((2n + d) / 2d): halves go up, which for a non-negative sum is away from zero.
  const top = 2 * numerator + denominator;
  const bottom = 2 * denominator;
  if (!Number.isSafeInteger(top) || !Number.isSafeInteger(bottom)) return undefined;
  let quotient = Math.floor(top / bottom);
  // The float division may land one off; integers below 2^53 make the correction exact.
  if (quotient * bottom > top) quotient--;
  else if ((quotient + 1) * bottom <= top) quotient++;
  return quotient;
}

function exactSumBig(priced: readonly { tokens: number; rate: ExactDecimal }[]): number {
  const scale = priced.reduce((max, term) => Math.max(max, term.rate.scale), 0);
  const numerator = priced.reduce((sum, term) => sum + BigInt(term.tokens) * term.rate.units * 10n ** BigInt(scale - term.rate.scale), 0n);
  return Number(roundHalfAwayFromZero(numerator, 10n ** BigInt(scale)));
}

/** 10^0 … 10^15, each exact as a double. */
const POWERS_OF_TEN: readonly number[] = Array.from({ length: 16 }, (_, i) => 10 ** i);

function unknown(reason: ChargeUnknownReason): ChargeResult {
  return { status: "unknown", chargeMicroUsd: null, reason };
}

function isTokenCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

/** value = units / 10^scale, exactly; `unitsNumber` is `units` as a double (exact only below 2^53, which exactSum checks). */
interface ExactDecimal {
  units: bigint;
  unitsNumber: number;
  scale: number;
}

/** A catalog has a few dozen distinct rates; each is parsed once. */
const decimals = new Map<number, ExactDecimal>();

/**
 * A rate as the exact decimal it was written as. `Number#toString` yields the shortest
 * decimal that round-trips, which is the catalog's own "0.15" rather than the binary
 * 0.1499999999999999944…; it may use exponent form ("1.5e-7", "1e+21").
 */
function exactDecimal(rate: number): ExactDecimal {
  let decimal = decimals.get(rate);
  if (decimal === undefined) {
    decimal = parseDecimal(rate);
    if (decimals.size < 10_000) decimals.set(rate, decimal);
  }
  return decimal;
}

function parseDecimal(rate: number): ExactDecimal {
  const [mantissa = "0", exponentText = "0"] = rate.toString().split("e");
  const [whole = "0", fraction = ""] = mantissa.split(".");
  const scale = fraction.length - Number(exponentText);
  const digits = BigInt(whole + fraction);
  const units = scale >= 0 ? digits : digits * 10n ** BigInt(-scale);
  return { units, unitsNumber: Number(units), scale: Math.max(scale, 0) };
}

/** floor(n/d + 1/2) for n ≥ 0, d > 0: halves go up, which for a non-negative sum is away from zero. */
function roundHalfAwayFromZero(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

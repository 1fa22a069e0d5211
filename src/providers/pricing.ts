/**
 * Endpoint prices as the catalog states them.
 *
 * Unit: USD per 1M tokens, which is numerically the same as micro-USD per token,
 * so a rate multiplies a token count straight into micro-USD.
 * A rate that is absent is unknown, not zero: metering must report an unknown
 * charge for a non-zero bucket without a rate.
 */
export interface TokenRates {
  /** Uncached input tokens. */
  readonly input: number;
  /** Output tokens; reasoning tokens are billed at this rate too. */
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/**
 * A price step for long prompts: applies when the request's total prompt tokens are
 * strictly above `aboveInputTokens`. Rates it leaves out inherit the base rates.
 */
export interface ContextTier {
  readonly aboveInputTokens: number;
  readonly input?: number;
  readonly output?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

export interface CatalogPricing extends TokenRates {
  /** Sorted by `aboveInputTokens`, ascending, no duplicates (the loader guarantees it). */
  readonly contextTiers: readonly ContextTier[];
}

/**
 * The rates that bill a request with `promptTokens` total prompt tokens (inclusive of
 * cache read and write): choose the context tier with the largest
 * `above_input_tokens` strictly below the prompt tokens; the whole request is billed at
 * that tier; a rate the tier leaves out inherits the base rate. No tier applies at
 * exactly `above_input_tokens` (the bound is exclusive).
 */
export function pricingForPromptTokens(pricing: CatalogPricing, promptTokens: number): TokenRates {
  let chosen: ContextTier | undefined;
  for (const tier of pricing.contextTiers) {
    if (tier.aboveInputTokens < promptTokens && (chosen === undefined || tier.aboveInputTokens > chosen.aboveInputTokens)) {
      chosen = tier;
    }
  }
  const base: TokenRates = withoutUndefined({
    input: pricing.input,
    output: pricing.output,
    cacheRead: pricing.cacheRead,
    cacheWrite: pricing.cacheWrite,
  });
  if (chosen === undefined) return base;
  return withoutUndefined({
    input: chosen.input ?? base.input,
    output: chosen.output ?? base.output,
    cacheRead: chosen.cacheRead ?? base.cacheRead,
    cacheWrite: chosen.cacheWrite ?? base.cacheWrite,
  });
}

function withoutUndefined(rates: { input: number; output: number; cacheRead: number | undefined; cacheWrite: number | undefined }): TokenRates {
  const result: { input: number; output: number; cacheRead?: number; cacheWrite?: number } = { input: rates.input, output: rates.output };
  if (rates.cacheRead !== undefined) result.cacheRead = rates.cacheRead;
  if (rates.cacheWrite !== undefined) result.cacheWrite = rates.cacheWrite;
  return result;
}

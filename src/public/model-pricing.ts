import type { CatalogEndpoint } from "../providers/catalog";
import type { CatalogPricing, ContextTier } from "../providers/pricing";

/**
 * Catalog prices in the public `ModelPricing` shape of `GET /v1/models`: USD per 1M tokens.
 * Reasoning tokens are billed at the output rate, so
 * `output_tokens.reasoning` repeats it. Rates the catalog does not state are omitted
 * (unknown, not free).
 */
export interface InputRates {
  no_cache?: number;
  cache_read?: number;
  cache_write?: number;
}

export interface OutputRates {
  text: number;
  reasoning: number;
}

export interface PricingTierBody {
  above_input_tokens: number;
  input_tokens?: InputRates;
  output_tokens?: OutputRates;
}

export interface PricingBody {
  input_tokens: InputRates;
  output_tokens: OutputRates;
  context_tiers?: PricingTierBody[];
}

export function pricingBody(pricing: CatalogPricing): PricingBody {
  const body: PricingBody = {
    input_tokens: inputRates(pricing.input, pricing.cacheRead, pricing.cacheWrite),
    output_tokens: { text: pricing.output, reasoning: pricing.output },
  };
  if (pricing.contextTiers.length > 0) body.context_tiers = pricing.contextTiers.map(tierBody);
  return body;
}

function tierBody(tier: ContextTier): PricingTierBody {
  const body: PricingTierBody = { above_input_tokens: tier.aboveInputTokens };
  const input = inputRates(tier.input, tier.cacheRead, tier.cacheWrite);
  if (Object.keys(input).length > 0) body.input_tokens = input;
  if (tier.output !== undefined) body.output_tokens = { text: tier.output, reasoning: tier.output };
  return body;
}

function inputRates(noCache: number | undefined, cacheRead: number | undefined, cacheWrite: number | undefined): InputRates {
  const rates: InputRates = {};
  if (noCache !== undefined) rates.no_cache = noCache;
  if (cacheRead !== undefined) rates.cache_read = cacheRead;
  if (cacheWrite !== undefined) rates.cache_write = cacheWrite;
  return rates;
}

/**
 * The endpoint whose prices a model lists when several providers serve it: the lowest
 * uncached input rate, then the lowest output rate, then catalog order. Its prices are
 * reported together, never mixed across endpoints.
 */
export function cheapestEndpoint(endpoints: readonly CatalogEndpoint[]): CatalogEndpoint | undefined {
  let best: CatalogEndpoint | undefined;
  for (const endpoint of endpoints) {
    if (
      best === undefined ||
      endpoint.pricing.input < best.pricing.input ||
      (endpoint.pricing.input === best.pricing.input && endpoint.pricing.output < best.pricing.output)
    ) {
      best = endpoint;
    }
  }
  return best;
}

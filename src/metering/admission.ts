import type { IrRequest } from "../ir";
import { pricingForPromptTokens } from "../providers/pricing";
import type { AttemptCandidate } from "../routing/plan-attempts";

/** Output tokens reserved for a request that sets no max tokens. */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 4096;

/**
 * The most this request can cost on any of its candidates: the reservation that
 * admission takes from the wallet. Prompt tokens come from the 4-chars estimate,
 * output from the request's max tokens (or DEFAULT_RESERVED_OUTPUT_TOKENS).
 */
export function reservationFor(request: IrRequest, candidates: AttemptCandidate[], estimatedPromptTokens: number): number {
  const outputTokens = request.params.maxTokens ?? DEFAULT_RESERVED_OUTPUT_TOKENS;
  let ceiling = 0;
  for (const candidate of candidates) {
    const rates = pricingForPromptTokens(candidate.pricing, estimatedPromptTokens);
    // Input at the highest input-side rate, output at the output rate (reasoning bills as output).
    const inputRate = Math.max(rates.input, rates.cacheWrite ?? 0);
    ceiling = Math.max(ceiling, estimatedPromptTokens * inputRate + outputTokens * rates.output);
  }
  // Float products of decimal rates land a hair above exact values (10 × 1.1 + 100 × 4.4 =
  // 451.00000000000006): drop that noise before rounding up, or an affordable request is refused.
  return Math.max(1, Math.ceil(Number(ceiling.toPrecision(12))));
}

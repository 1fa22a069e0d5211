import type { IrRequest } from "../ir";
import type { CatalogPricing } from "../providers/pricing";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import { promptShape, promptTokenCeiling, type PromptShape } from "./prompt-token-ceiling";

/**
 * The output limit sent upstream when the client set none and the catalog does not know
 * the model's maximum (and always towards Messages, which requires one): the Messages
 * default, plus the thinking budget when there is one, since the budget must fit below it.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

type Limits = Pick<AttemptCandidate, "protocol" | "limits">;

/**
 * The output limit admission sends upstream for this candidate, or undefined when the
 * request's own (or the model's maximum, which no upstream default exceeds) already
 * bounds the output. Encoders send it as max_tokens / max_output_tokens / maxOutputTokens.
 */
export function upstreamMaxTokens(request: IrRequest, candidate: Limits): number | undefined {
  if (request.params.maxTokens !== undefined) return undefined;
  if (candidate.limits.maxOutputTokens !== undefined && candidate.protocol !== "anthropic-messages") return undefined;
  const fallback = (request.params.thinkingBudgetTokens ?? 0) + DEFAULT_MAX_OUTPUT_TOKENS;
  return candidate.limits.maxOutputTokens === undefined ? fallback : Math.min(fallback, candidate.limits.maxOutputTokens);
}

/**
 * The most completion tokens (reasoning included) the request can be billed on this
 * candidate: its output limit (the client's, the one admission sends, or the model's
 * maximum), times the completions it asks for. Every upstream counts reasoning within
 * that limit (OpenAI's max_completion_tokens / max_output_tokens, Anthropic's budget below
 * max_tokens, Gemini's maxOutputTokens).
 */
export function outputTokenCeiling(request: IrRequest, candidate: Limits): number {
  const modelMax = candidate.limits.maxOutputTokens;
  const requested = request.params.maxTokens ?? upstreamMaxTokens(request, candidate) ?? modelMax ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const limit = modelMax === undefined ? requested : Math.min(requested, modelMax);
  return limit * completionsRequested(request);
}

/** OpenAI `n`, Gemini `candidateCount`: each completion bills its own output. They ride in extras. */
function completionsRequested(request: IrRequest): number {
  const fields = request.extras?.fields;
  if (fields === undefined) return 1;
  const config = fields.generationConfig;
  const counts = [fields.n, typeof config === "object" && config !== null ? (config as Record<string, unknown>).candidateCount : undefined];
  return Math.max(1, ...counts.map((count) => (typeof count === "number" && Number.isSafeInteger(count) ? count : 1)));
}

/**
 * The highest input-side and output rates any prompt of up to `promptTokens` can be billed
 * at: the base rates and every context tier that such a prompt can reach. Cache reads and
 * writes are input tokens, so the input rate is the highest of the three.
 */
export function highestRates(pricing: CatalogPricing, promptTokens: number): { input: number; output: number } {
  let input = Math.max(pricing.input, pricing.cacheRead ?? 0, pricing.cacheWrite ?? 0);
  let output = pricing.output;
  for (const tier of pricing.contextTiers) {
    if (tier.aboveInputTokens >= promptTokens) continue; // no prompt within the bound reaches it
    input = Math.max(input, tier.input ?? 0, tier.cacheRead ?? 0, tier.cacheWrite ?? 0);
    output = Math.max(output, tier.output ?? 0);
  }
  return { input, output };
}

/**
 * The most this request can cost on any of its candidates: the reservation admission takes
 * from the wallet, a ceiling and not an estimate (src/admission/README.md). Settlement never
 * debits more than it.
 */
export function reservationFor(request: IrRequest, candidates: readonly AttemptCandidate[]): number {
  const shape = promptShape(request);
  let ceiling = 0;
  for (const candidate of candidates) ceiling = Math.max(ceiling, candidateCeiling(request, shape, candidate));
  return wholeMicroUsd(ceiling);
}

/**
 * The most `request` can cost on one candidate, unrounded: the part of reservationFor the
 * console also uses to say which requests a budget can still admit, from the catalog alone.
 */
export function candidateCeiling(request: IrRequest, shape: PromptShape, candidate: Pick<AttemptCandidate, "protocol" | "limits" | "pricing">): number {
  const promptTokens = promptTokenCeiling(shape, candidate.limits);
  const rates = highestRates(candidate.pricing, promptTokens);
  return promptTokens * rates.input + outputTokenCeiling(request, candidate) * rates.output;
}

/**
 * A ceiling in whole micro-USD, at least 1. Float products of decimal rates land a hair
 * above exact values (10 × 1.1 + 100 × 4.4 = 451.00000000000006): that noise is dropped
 * before rounding up, or an affordable request is refused.
 */
export function wholeMicroUsd(ceiling: number): number {
  return Math.max(1, Math.ceil(twelveDigits(ceiling)));
}

/**
 * `x` rounded to 12 significant digits, as `Number(x.toPrecision(12))`, where that can change
 * its ceiling. The rounding moves `x` by at most |x| × 5e-12, so it matters only within that
 * of an integer; elsewhere `x` itself is returned, without the string round trip
 * (`toPrecision` was 1.3 % of the request thread in a profile of the metered path, 2026-11-29).
 */
function twelveDigits(x: number): number {
  // Integers below 10^12 have 12 digits or fewer: the rounding leaves them as they are.
  if (Number.isInteger(x) && Math.abs(x) < 1e12) return x;
  const slack = Math.abs(x) * 1e-11;
  const up = Math.ceil(x);
  if (up - x > slack && x - (up - 1) > slack) return x;
  return Number(x.toPrecision(12));
}

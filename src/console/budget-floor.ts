import { candidateCeiling, outputTokenCeiling, wholeMicroUsd } from "../admission/cost-ceiling";
import { promptShape } from "../admission/prompt-token-ceiling";
import type { IrRequest } from "../ir";
import type { Catalog, CatalogEndpoint, CatalogModel } from "../providers/catalog";

/**
 * The least a request can reserve against a budget, from the catalog alone.
 *
 * Admission reserves a request's ceiling (src/admission/cost-ceiling.ts), not an estimate:
 * the prompt's byte bound plus its output limit (the client's `max_tokens`, else the
 * model's maximum or the default admission sends) at the highest rates. A budget whose
 * room is below the ceiling of the smallest possible request (one empty message) on the
 * cheapest model refuses every request that does not lower `max_tokens`, whatever its
 * bar shows. The page has no request to measure, so this is a lower bound: a real prompt
 * only adds to it, and a guardrail's model list can only rule the cheapest model out
 * (docs/console-and-cli.md "Blocked budgets").
 */
export interface BudgetFloor {
  modelId: string;
  /** The smallest request's reservation on that model without `max_tokens`, micro-USD. */
  microUsd: number;
  /** The output tokens that reservation counts (the limit admission assumes). */
  outputTokens: number;
  /**
   * Each endpoint of that model: what the smallest request reserves for its prompt and per
   * `max_tokens`. Admission reserves the dearest of the candidates it may try, so a
   * `max_tokens` is said to fit only when it fits on every endpoint.
   */
  endpoints: { promptMicroUsd: number; outputRate: number; outputTokens: number }[];
}

/** One empty user message: every real request's prompt bound is at least this one's. */
const smallestRequest = (maxTokens?: number): IrRequest => ({
  model: "",
  messages: [{ role: "user", content: [{ type: "text", text: "" }] }],
  params: maxTokens === undefined ? {} : { maxTokens },
  stream: false,
});

function candidateOf(model: CatalogModel, endpoint: CatalogEndpoint) {
  return {
    protocol: endpoint.protocol,
    pricing: endpoint.pricing,
    limits: { maxInputTokens: model.maxInputTokens, maxOutputTokens: model.maxOutputTokens, maxTokensPerImage: model.maxTokensPerImage, maxTokensPerFile: model.maxTokensPerFile },
  };
}

/**
 * The cheapest reservation any catalog endpoint gives the smallest request (a lower bound:
 * admission may only try dearer ones); undefined for an empty catalog.
 */
export function budgetFloor(catalog: Catalog): BudgetFloor | undefined {
  const request = smallestRequest();
  const shape = promptShape(request);
  let floor: BudgetFloor | undefined;
  for (const model of catalog.listModels()) {
    for (const endpoint of model.endpoints) {
      const candidate = candidateOf(model, endpoint);
      const microUsd = wholeMicroUsd(candidateCeiling(request, shape, candidate));
      if (floor !== undefined && microUsd >= floor.microUsd) continue;
      floor = { modelId: model.id, microUsd, outputTokens: outputTokenCeiling(request, candidate), endpoints: [] };
    }
  }
  if (floor === undefined) return undefined;
  for (const endpoint of catalog.getModel(floor.modelId)!.endpoints) {
    const candidate = candidateOf(catalog.getModel(floor.modelId)!, endpoint);
    const outputTokens = outputTokenCeiling(request, candidate);
    const promptMicroUsd = candidateCeiling(smallestRequest(0), shape, candidate);
    const outputRate = (candidateCeiling(request, shape, candidate) - promptMicroUsd) / Math.max(1, outputTokens);
    floor.endpoints.push({ promptMicroUsd, outputRate, outputTokens });
  }
  return floor;
}

/**
 * The largest `max_tokens` whose smallest request still fits in `leftMicroUsd` on every
 * endpoint of the floor's model (0 when not even one output token fits).
 */
export function maxTokensThatFit(floor: BudgetFloor, leftMicroUsd: number): number {
  let fits = Number.MAX_SAFE_INTEGER;
  for (const endpoint of floor.endpoints) {
    let tokens = endpoint.outputRate <= 0 ? endpoint.outputTokens : Math.min(endpoint.outputTokens, Math.max(0, Math.floor((leftMicroUsd - endpoint.promptMicroUsd) / endpoint.outputRate)));
    // Admission rounds the ceiling up to whole micro-USD: step down until that fits too.
    while (tokens > 0 && wholeMicroUsd(endpoint.promptMicroUsd + tokens * endpoint.outputRate) > leftMicroUsd) tokens--;
    fits = Math.min(fits, tokens);
  }
  return fits === Number.MAX_SAFE_INTEGER ? 0 : fits;
}

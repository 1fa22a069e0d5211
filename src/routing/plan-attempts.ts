import { irError, type IrError, type IrRequest } from "../ir";
import type { Catalog, CatalogEndpoint, CatalogModel, ModelTokenLimits } from "../providers/catalog";
import type { EndpointStats } from "./endpoint-stats";
import { parseModelRef, ModelRefError, type RoutingProfile } from "./parse-model-ref";
import { rankEndpoints } from "./select-endpoints";

/** One endpoint that could serve the request, before a credential is chosen for it. */
export interface RankedEndpoint {
  endpoint: CatalogEndpoint;
  profile: RoutingProfile;
  /** The served model's token limits from the catalog: admission's ceilings (src/metering/admission.ts). */
  limits: ModelTokenLimits;
}

/** Per requested model, in the client's order, its endpoints ranked best first. */
export type RoutePlan =
  | { ok: true; requestedModel: string; byModel: RankedEndpoint[][] }
  | { ok: false; error: IrError };

export interface PlanDeps {
  catalog: Pick<Catalog, "getModel" | "endpointsFor">;
  endpointStats: EndpointStats;
}

/** Output estimate used only to rank by price when the request sets no max tokens. */
const DEFAULT_OUTPUT_ESTIMATE = 512;

/**
 * Resolves the requested model(s) to their ranked endpoints: the
 * body's `models` list (max 8) replaces `model`, its first entry being primary; per model
 * the ranked endpoints come first, then the next model. An unknown primary model is 404;
 * an unknown entry in `models` is 400 before any attempt. Which of them can be paid for is
 * the funding stage's choice (src/pipeline/fund.ts). `estimatedPromptTokens` (4
 * chars/token) prices endpoints for the cost ranking.
 */
export function planAttempts(deps: PlanDeps, request: IrRequest, estimatedPromptTokens: number): RoutePlan {
  const fromList = request.models !== undefined && request.models.length > 0;
  const requested = fromList ? request.models! : [request.model];
  const refs: Array<{ modelId: string; profile: RoutingProfile }> = [];
  for (const model of requested) {
    const ref = parseModelRef(model);
    if (ref instanceof ModelRefError) return { ok: false, error: irError(fromList ? "invalid_request" : "not_found", ref.message) };
    if (ref.kind === "preset") return { ok: false, error: irError("invalid_request", `unknown routing preset "@${ref.preset}"`) };
    if (!deps.catalog.getModel(ref.modelId)) {
      return fromList
        ? { ok: false, error: irError("invalid_request", `unknown model in models: ${model}`) }
        : { ok: false, error: irError("not_found", `unknown model: ${model}`) };
    }
    refs.push({ modelId: ref.modelId, profile: ref.profile ?? "balanced" });
  }

  const estimatedOutputTokens = request.params.maxTokens ?? DEFAULT_OUTPUT_ESTIMATE;
  const byModel = refs.map(({ modelId, profile }) => {
    const endpoints = deps.catalog.endpointsFor(modelId);
    // Profiles only re-rank when there is a choice.
    const ordered =
      endpoints.length < 2
        ? endpoints
        : rankEndpoints(endpoints, profile, { stats: deps.endpointStats, estimatedPromptTokens, estimatedOutputTokens }).map((r) => r.endpoint);
    return ordered.map((endpoint) => ({ endpoint, profile, limits: limitsOf(deps.catalog.getModel(endpoint.modelId)) }));
  });
  return { ok: true, requestedModel: requested[0]!, byModel };
}

function limitsOf(model: CatalogModel | undefined): ModelTokenLimits {
  if (model === undefined) return {};
  return {
    ...(model.maxInputTokens === undefined ? {} : { maxInputTokens: model.maxInputTokens }),
    ...(model.maxOutputTokens === undefined ? {} : { maxOutputTokens: model.maxOutputTokens }),
    ...(model.maxTokensPerImage === undefined ? {} : { maxTokensPerImage: model.maxTokensPerImage }),
    ...(model.maxTokensPerFile === undefined ? {} : { maxTokensPerFile: model.maxTokensPerFile }),
  };
}

import { irError, type IrError, type IrRequest } from "../ir";
import type { Catalog, CatalogEndpoint, ModelTokenLimits } from "../providers/catalog";
import type { EndpointStats } from "./endpoint-stats";
import type { AttemptCandidate } from "./attempt-candidate";
import { parseModelRef, ModelRefError, type RoutingProfile } from "./parse-model-ref";
import { rankEndpoints } from "./select-endpoints";

export type AttemptPlan =
  | { ok: true; requestedModel: string; candidates: AttemptCandidate[] }
  | { ok: false; error: IrError };

/** Never more attempts than this for one request, whatever the fallback list. */
const MAX_ATTEMPTS = 16;
/** Output estimate used only to rank by price when the request sets no max tokens. */
const DEFAULT_OUTPUT_ESTIMATE = 512;

/**
 * Resolves the requested model(s) to an ordered list of upstream attempts
 * (reference §8.3–8.4): the body's `models` list (max 8) replaces `model`, its
 * first entry being primary; per model the ranked endpoints come first, then the
 * next model. An unknown primary model is 404; an unknown entry in `models` is 400
 * before any attempt. Endpoints without a platform key are not eligible (BYOK
 * comes with the provider-keys feature); no eligible endpoint at all is 402.
 * `estimatedPromptTokens` (4 chars/token) prices candidates for the cost ranking.
 */
export function planAttempts(services: { catalog: Catalog; endpointStats: EndpointStats }, request: IrRequest, estimatedPromptTokens: number): AttemptPlan {
  const fromList = request.models !== undefined && request.models.length > 0;
  const requested = fromList ? request.models! : [request.model];
  const refs: Array<{ modelId: string; profile: RoutingProfile }> = [];
  for (const model of requested) {
    const ref = parseModelRef(model);
    if (ref instanceof ModelRefError) return { ok: false, error: irError(fromList ? "invalid_request" : "not_found", ref.message) };
    if (ref.kind === "preset") return { ok: false, error: irError("invalid_request", `unknown routing preset "@${ref.preset}"`) };
    if (!services.catalog.getModel(ref.modelId)) {
      return fromList
        ? { ok: false, error: irError("invalid_request", `unknown model in models: ${model}`) }
        : { ok: false, error: irError("not_found", `unknown model: ${model}`) };
    }
    refs.push({ modelId: ref.modelId, profile: ref.profile ?? "balanced" });
  }

  const estimatedOutputTokens = request.params.maxTokens ?? DEFAULT_OUTPUT_ESTIMATE;
  const candidates: AttemptCandidate[] = [];
  const unfunded = new Set<string>();
  for (const { modelId, profile } of refs) {
    const endpoints = services.catalog.endpointsFor(modelId);
    // Profiles only re-rank when there is a choice (reference §8.3).
    const ordered =
      endpoints.length < 2
        ? endpoints
        : rankEndpoints(endpoints, profile, { stats: services.endpointStats, estimatedPromptTokens, estimatedOutputTokens }).map((r) => r.endpoint);
    for (const endpoint of ordered) {
      const apiKey = services.catalog.platformKeyFor(endpoint.provider);
      if (!apiKey) {
        unfunded.add(endpoint.provider);
        continue;
      }
      candidates.push(candidateFor(endpoint, apiKey, profile, services.catalog.getModel(endpoint.modelId) ?? {}));
      if (candidates.length >= MAX_ATTEMPTS) break;
    }
  }
  if (candidates.length === 0) {
    const providers = [...unfunded].join(", ");
    return { ok: false, error: irError("payment_required", `no credential is configured for ${providers || "any provider of this model"}`) };
  }
  return { ok: true, requestedModel: requested[0]!, candidates };
}

function candidateFor(endpoint: CatalogEndpoint, apiKey: string, profile: RoutingProfile, model: ModelTokenLimits): AttemptCandidate {
  return {
    protocol: endpoint.protocol,
    baseUrl: endpoint.baseUrl,
    providerModelId: endpoint.providerModelId,
    apiKey,
    modelId: endpoint.modelId,
    providerId: endpoint.provider,
    statsKey: endpoint.key,
    pricing: endpoint.pricing,
    limits: {
      ...(model.maxInputTokens === undefined ? {} : { maxInputTokens: model.maxInputTokens }),
      ...(model.maxOutputTokens === undefined ? {} : { maxOutputTokens: model.maxOutputTokens }),
      ...(model.maxTokensPerImage === undefined ? {} : { maxTokensPerImage: model.maxTokensPerImage }),
      ...(model.maxTokensPerFile === undefined ? {} : { maxTokensPerFile: model.maxTokensPerFile }),
    },
    funding: "platform",
    routingProfile: profile,
  };
}

import { irError, type IrError, type IrRequest } from "../ir";
import type { Catalog, CatalogEndpoint, CatalogModel, ModelTokenLimits } from "../providers/catalog";
import type { EndpointStats } from "./endpoint-stats";
import { parseModelRef, ModelRefError, type ModelIdRef, type RoutingProfile } from "./parse-model-ref";
import { rankEndpoints } from "./select-endpoints";

/** One endpoint that could serve the request, before a credential is chosen for it. */
export interface RankedEndpoint {
  endpoint: CatalogEndpoint;
  profile: RoutingProfile;
  /** The served model's token limits from the catalog: admission's ceilings (src/admission/cost-ceiling.ts). */
  limits: ModelTokenLimits;
}

/** Per requested model, in the client's order, its endpoints ranked best first. */
export type RoutePlan =
  | { ok: true; requestedModel: string; byModel: RankedEndpoint[][] }
  | { ok: false; error: IrError };

/** What a `@preset` requested model resolved to (src/pipeline/resolve-presets.ts). */
export interface PresetTarget {
  modelId: string;
  profile: RoutingProfile;
  presetName: string;
  /** Provider allow-list and deny-list: they only ever remove endpoints. */
  only?: readonly string[];
  ignore?: readonly string[];
}

/** Resolved presets by the requested model string that named them. */
export type PresetTargets = ReadonlyMap<string, PresetTarget>;

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
 * chars/token) prices endpoints for the cost ranking. A `@preset` entry is served as its
 * resolved target from `presets`: its model, its profile, and only the endpoints its
 * provider lists leave (none left is a 400).
 */
export function planAttempts(deps: PlanDeps, request: IrRequest, estimatedPromptTokens: number, presets?: PresetTargets): RoutePlan {
  const fromList = request.models !== undefined && request.models.length > 0;
  const requested = fromList ? request.models! : [request.model];
  const refs: Array<{ profile: RoutingProfile; endpoints: readonly CatalogEndpoint[] }> = [];
  for (const model of requested) {
    const ref = parseModelRef(model);
    if (ref instanceof ModelRefError) return { ok: false, error: irError(fromList ? "invalid_request" : "not_found", ref.message) };
    const preset = ref.kind === "preset" ? presets?.get(model) : undefined;
    if (ref.kind === "preset" && preset === undefined) return { ok: false, error: irError("invalid_request", `unknown or disabled routing preset "@${ref.preset}"`) };
    const modelId = preset?.modelId ?? (ref as ModelIdRef).modelId;
    if (!deps.catalog.getModel(modelId)) {
      const named = preset ? `${modelId} (from ${model})` : model;
      return fromList
        ? { ok: false, error: irError("invalid_request", `unknown model in models: ${named}`) }
        : { ok: false, error: irError("not_found", `unknown model: ${named}`) };
    }
    const endpoints = preset ? narrowed(deps.catalog.endpointsFor(modelId), preset) : deps.catalog.endpointsFor(modelId);
    if (endpoints.length === 0) {
      return { ok: false, error: irError("invalid_request", `routing preset "@${preset!.presetName}" leaves no provider for ${modelId}: its only/ignore lists exclude every provider serving it`) };
    }
    refs.push({ profile: preset?.profile ?? (ref as ModelIdRef).profile ?? "balanced", endpoints });
  }

  const estimatedOutputTokens = request.params.maxTokens ?? DEFAULT_OUTPUT_ESTIMATE;
  const byModel = refs.map(({ profile, endpoints }) => {
    // Profiles only re-rank when there is a choice.
    const ordered =
      endpoints.length < 2
        ? endpoints
        : rankEndpoints(endpoints, profile, { stats: deps.endpointStats, estimatedPromptTokens, estimatedOutputTokens }).map((r) => r.endpoint);
    return ordered.map((endpoint) => ({ endpoint, profile, limits: limitsOf(deps.catalog.getModel(endpoint.modelId)) }));
  });
  return { ok: true, requestedModel: requested[0]!, byModel };
}

/** The endpoints a preset's provider lists leave: an allow-list keeps only its providers, a deny-list drops its own. */
function narrowed(endpoints: readonly CatalogEndpoint[], target: PresetTarget): readonly CatalogEndpoint[] {
  return endpoints.filter(
    (endpoint) => (target.only === undefined || target.only.includes(endpoint.provider)) && (target.ignore === undefined || !target.ignore.includes(endpoint.provider)),
  );
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

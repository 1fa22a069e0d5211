import { Elysia } from "elysia";
import type { Services } from "../services";
import type { CatalogEndpoint, CatalogModel, CatalogProvider } from "../providers/catalog";
import type { EndpointStatsSnapshot } from "../routing/endpoint-stats";
import { groupMetrics, round4, roundMs } from "./endpoint-metrics";
import { providerWindow, type ProviderRecentTraffic } from "./public-figures-service";
import { cheapestEndpoint, pricingBody, type PricingBody } from "./model-pricing";
import { ttlCachePerOwner } from "./ttl-cache";

/**
 * Public discovery: GET /v1/models and GET /v1/providers.
 *
 * Live figures (request count, success rate, medians) come from the per-process endpoint
 * telemetry over its rolling window (services.endpointStats, one hour by default), which
 * counts upstream attempts of every outcome — the same numbers routing ranks by. The
 * requests table supplies what that telemetry does not keep: requests in the last minute
 * and cache reads. The upstream provider_model_id is never part of a response.
 */

const MINUTE_MS = 60 * 1000;

/**
 * Lifetime of the providers' figures (10 seconds). Computing them reads every account's
 * requests of the last hour, and the route needs no credential: cached, a burst of callers
 * costs one read per lifetime, while `current_rpm` (a one-minute figure) stays current.
 */
export const PROVIDERS_TTL_MS = 10 * 1000;

/**
 * The providers' figures of one running app (one per Services), one entry for all callers;
 * concurrent callers during a computation share it. Exposed so tests can clear it.
 */
export const providersCache = ttlCachePerOwner<ProviderBody[]>(PROVIDERS_TTL_MS);

export interface ModelMetricsBody {
  window_seconds: number;
  request_count: number;
  success_rate: number;
  /** Medians over successful attempts; null when none reported the figure. */
  p50_latency_ms: number | null;
  p50_ttft_ms: number | null;
  output_tokens_per_second: number | null;
}

export interface ModelBody {
  id: string;
  name: string;
  description?: string;
  input_modalities: string[];
  output_modalities: string[];
  capabilities: string[];
  max_input_tokens?: number;
  max_output_tokens?: number;
  pricing: PricingBody;
  providers: { total_online: number };
  open_weights: boolean;
  /** Present only when the model's endpoints saw attempts in the window. */
  metrics?: ModelMetricsBody;
}

export interface ProviderModelBody {
  id: string;
  pricing: PricingBody;
  metrics: { request_count: number; success_rate: number; p50_latency_ms: number };
}

export interface ProviderBody {
  id: string;
  name: string;
  community: boolean;
  byok: boolean;
  status: "active";
  rate_limit: { current_rpm: number; declared_rpm: null };
  metrics_window_seconds: number;
  aggregate: { request_count: number; success_rate: number; p50_latency_ms: number; cache_hit_rate: number };
  models: ProviderModelBody[];
}

interface ModelFilters {
  provider?: string;
  id?: string;
  inputModality?: string;
  outputModality?: string;
}

/** Query filters of GET /v1/models; an empty value is the same as no filter. */
function modelFilters(params: URLSearchParams): ModelFilters {
  const value = (name: string) => {
    const text = params.get(name);
    return text === null || text === "" ? undefined : text;
  };
  const filters: ModelFilters = {};
  const provider = value("provider");
  const id = value("id");
  const inputModality = value("input_modality");
  const outputModality = value("output_modality");
  if (provider !== undefined) filters.provider = provider;
  if (id !== undefined) filters.id = id.toLowerCase();
  if (inputModality !== undefined) filters.inputModality = inputModality;
  if (outputModality !== undefined) filters.outputModality = outputModality;
  return filters;
}

function matches(model: CatalogModel, filters: ModelFilters): boolean {
  if (filters.provider !== undefined && !model.endpoints.some((e) => e.provider === filters.provider)) return false;
  if (filters.id !== undefined && !model.id.toLowerCase().includes(filters.id)) return false;
  if (filters.inputModality !== undefined && !model.inputModalities.includes(filters.inputModality)) return false;
  if (filters.outputModality !== undefined && !model.outputModalities.includes(filters.outputModality)) return false;
  return true;
}

function modelMetrics(metrics: EndpointStatsSnapshot, windowSeconds: number): ModelMetricsBody {
  return {
    window_seconds: windowSeconds,
    request_count: metrics.requestCount,
    success_rate: round4(metrics.successRate),
    p50_latency_ms: roundMs(metrics.p50LatencyMs) ?? null,
    p50_ttft_ms: roundMs(metrics.p50TtftMs) ?? null,
    output_tokens_per_second: metrics.outputTokensPerSecond === undefined ? null : Math.round(metrics.outputTokensPerSecond * 100) / 100,
  };
}

/**
 * One model of the catalog. Pricing is that of the cheapest endpoint (model-pricing.ts);
 * `providers.total_online` counts the distinct catalog providers serving it (every
 * catalog provider is active: there is no provider health state to subtract).
 */
function modelBody(services: Services, model: CatalogModel, windowSeconds: number): ModelBody {
  const body: ModelBody = {
    id: model.id,
    name: model.name,
    ...(model.description === undefined ? {} : { description: model.description }),
    input_modalities: [...model.inputModalities],
    output_modalities: [...model.outputModalities],
    capabilities: [...model.capabilities],
    ...(model.maxInputTokens === undefined ? {} : { max_input_tokens: model.maxInputTokens }),
    ...(model.maxOutputTokens === undefined ? {} : { max_output_tokens: model.maxOutputTokens }),
    pricing: pricingBody(cheapestEndpoint(model.endpoints)!.pricing),
    providers: { total_online: new Set(model.endpoints.map((e) => e.provider)).size },
    open_weights: model.openWeights,
  };
  const metrics = groupMetrics(services.endpointStats, model.endpoints);
  if (metrics.requestCount > 0) body.metrics = modelMetrics(metrics, windowSeconds);
  return body;
}

/**
 * One provider. Unknown medians are reported as 0 (the shape types them as numbers, like
 * success_rate's "0 when none"); `current_rpm` counts request records of every status
 * created in the last minute whose final provider it is; `cache_hit_rate` is cache-read
 * tokens over prompt tokens (which include them) of its succeeded requests in the window.
 */
function providerBody(
  services: Services,
  provider: CatalogProvider,
  endpoints: readonly CatalogEndpoint[],
  traffic: ProviderRecentTraffic | undefined,
  windowSeconds: number,
): ProviderBody {
  const byModel = new Map<string, CatalogEndpoint[]>();
  for (const endpoint of endpoints) {
    const list = byModel.get(endpoint.modelId);
    if (list === undefined) byModel.set(endpoint.modelId, [endpoint]);
    else list.push(endpoint);
  }
  const models: ProviderModelBody[] = [...byModel].map(([modelId, modelEndpoints]) => {
    const metrics = groupMetrics(services.endpointStats, modelEndpoints);
    return {
      id: modelId,
      pricing: pricingBody(cheapestEndpoint(modelEndpoints)!.pricing),
      metrics: { request_count: metrics.requestCount, success_rate: round4(metrics.successRate), p50_latency_ms: roundMs(metrics.p50LatencyMs) ?? 0 },
    };
  });
  const aggregate = groupMetrics(services.endpointStats, endpoints);
  const promptTokens = traffic?.promptTokens ?? 0;
  const cacheRead = traffic?.cacheReadTokens ?? 0;
  return {
    id: provider.id,
    name: provider.name,
    community: provider.community,
    byok: provider.byok,
    status: "active",
    rate_limit: { current_rpm: traffic?.lastMinuteRequests ?? 0, declared_rpm: null },
    metrics_window_seconds: windowSeconds,
    aggregate: {
      request_count: aggregate.requestCount,
      success_rate: round4(aggregate.successRate),
      p50_latency_ms: roundMs(aggregate.p50LatencyMs) ?? 0,
      cache_hit_rate: promptTokens > 0 ? round4(Math.min(1, cacheRead / promptTokens)) : 0,
    },
    models,
  };
}

function metricsWindowSeconds(services: Services): number {
  return Math.round(services.endpointStats.windowMs / 1000);
}

/** Every model of the catalog as GET /v1/models lists it (the console's models page shows the same). */
export function modelBodies(services: Services, filters: ModelFilters = {}): ModelBody[] {
  const windowSeconds = metricsWindowSeconds(services);
  return services.catalog
    .listModels()
    .filter((model) => matches(model, filters))
    .map((model) => modelBody(services, model, windowSeconds));
}

/**
 * Every provider as GET /v1/providers lists it, with its live figures (the console's models
 * page shows the same), and when they expire: computed at most once per PROVIDERS_TTL_MS.
 */
export async function cachedProviderBodies(services: Services): Promise<{ value: ProviderBody[]; expiresAt: number }> {
  return providersCache(services).get("providers", () => providerBodies(services));
}

async function providerBodies(services: Services): Promise<ProviderBody[]> {
  const windowSeconds = metricsWindowSeconds(services);
  const now = Date.now();
  const traffic = await providerWindow(services, new Date(now - services.endpointStats.windowMs), new Date(now - MINUTE_MS));
  const byProvider = new Map(traffic.map((figures) => [figures.providerId, figures]));
  const endpointsByProvider = new Map<string, CatalogEndpoint[]>();
  for (const model of services.catalog.listModels()) {
    for (const endpoint of model.endpoints) {
      const list = endpointsByProvider.get(endpoint.provider);
      if (list === undefined) endpointsByProvider.set(endpoint.provider, [endpoint]);
      else list.push(endpoint);
    }
  }
  return services.catalog
    .listProviders()
    .map((provider) => providerBody(services, provider, endpointsByProvider.get(provider.id) ?? [], byProvider.get(provider.id), windowSeconds));
}

export function discoveryRoutes(services: Services) {
  return new Elysia({ name: "discovery", normalize: false })
    .get(
      "/v1/models",
      ({ request }) => ({ object: "list" as const, data: modelBodies(services, modelFilters(new URL(request.url).searchParams)) }),
      {
        detail: {
          summary: "The model catalog with prices (USD per 1M tokens) and live metrics; filters provider, id, input_modality, output_modality",
          tags: ["public"],
          parameters: [
            stringQuery("provider", "only models served by this provider id (exact)"),
            stringQuery("id", "only models whose id contains this text (case-insensitive)"),
            stringQuery("input_modality", "only models accepting this input modality"),
            stringQuery("output_modality", "only models producing this output modality"),
          ],
        },
      },
    )
    .get(
      "/v1/providers",
      async ({ set }) => {
        const { value, expiresAt } = await cachedProviderBodies(services);
        // Shared caches may keep it only for what is left of our own lifetime.
        const remaining = Math.max(0, Math.ceil((expiresAt - providersCache(services).now()) / 1000));
        set.headers["cache-control"] = `public, max-age=${remaining}`;
        return { data: value };
      },
      {
        detail: {
          summary: "Providers with their models, prices, request rate and live success and latency figures (cached 10 seconds)",
          tags: ["public"],
        },
      },
    );
}

function stringQuery(name: string, description: string) {
  return { name, in: "query" as const, required: false, description, schema: { type: "string" as const } };
}

import { readFileSync } from "node:fs";
import type { ProtocolId } from "../ir/protocol-id";
import builtinCatalogJson from "./builtin-catalog.json";
import { catalogShapeIssues, type CatalogFile, type CatalogFileModel, type CatalogFilePricing } from "./catalog-schema";
import type { CatalogPricing, ContextTier } from "./pricing";

/**
 * The provider and model catalog: the built-in one (`builtin-catalog.json`) or the file
 * named by PROVIDERS_FILE, which replaces it entirely (docs/configuration.md "Catalog file"). It is
 * validated once at startup; every problem names the entry it is in.
 */

export interface CatalogProvider {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly protocol: ProtocolId;
  /** Without a trailing slash. */
  readonly baseUrl: string;
  /** The environment variable that holds the platform key for this provider. */
  readonly apiKeyEnv: string;
  /** Whether callers may bring their own key for this provider (default true). */
  readonly byok: boolean;
  readonly community: boolean;
}

/** One provider serving one model, with everything needed to call and price it. */
export interface CatalogEndpoint {
  /** `${provider}/${providerModelId}`: the key for per-endpoint telemetry. */
  readonly key: string;
  readonly modelId: string;
  /** The provider id. */
  readonly provider: string;
  readonly providerModelId: string;
  /** The endpoint's own protocol, else its provider's. */
  readonly protocol: ProtocolId;
  readonly baseUrl: string;
  readonly apiKeyEnv: string;
  readonly byok: boolean;
  readonly pricing: CatalogPricing;
}

export interface CatalogModel {
  /** Canonical `<vendor>/<model>`. */
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly openWeights: boolean;
  readonly inputModalities: readonly string[];
  readonly outputModalities: readonly string[];
  readonly capabilities: readonly string[];
  readonly maxInputTokens?: number;
  readonly maxOutputTokens?: number;
  /** The most prompt tokens one image / one file can bill (admission's per-item bound). */
  readonly maxTokensPerImage?: number;
  readonly maxTokensPerFile?: number;
  /** At least one, in catalog order. */
  readonly endpoints: readonly CatalogEndpoint[];
}

/** What admission needs from a model to bound a request's cost (src/admission/cost-ceiling.ts). */
export type ModelTokenLimits = Pick<CatalogModel, "maxInputTokens" | "maxOutputTokens" | "maxTokensPerImage" | "maxTokensPerFile">;

/** A catalog that failed to load; `issues` lists every problem found (each already prefixed). */
export class CatalogError extends Error {
  constructor(readonly issues: readonly string[]) {
    super(issues.join("\n"));
    this.name = "CatalogError";
  }
}

export class Catalog {
  readonly providers: ReadonlyMap<string, CatalogProvider>;
  readonly models: ReadonlyMap<string, CatalogModel>;

  constructor(providers: readonly CatalogProvider[], models: readonly CatalogModel[]) {
    this.providers = new Map(providers.map((p) => [p.id, p]));
    this.models = new Map(models.map((m) => [m.id, m]));
  }

  getModel(id: string): CatalogModel | undefined {
    return this.models.get(id);
  }

  getProvider(id: string): CatalogProvider | undefined {
    return this.providers.get(id);
  }

  /** The model's endpoints in catalog order; empty for an unknown model. */
  endpointsFor(modelId: string): readonly CatalogEndpoint[] {
    return this.models.get(modelId)?.endpoints ?? [];
  }

  /** Models in catalog order. */
  listModels(): CatalogModel[] {
    return [...this.models.values()];
  }

  listProviders(): CatalogProvider[] {
    return [...this.providers.values()];
  }

  /** The platform key for a provider from its `api_key_env`; undefined when unset or empty (then BYOK only). */
  platformKeyFor(provider: string | CatalogProvider, env: Record<string, string | undefined> = process.env): string | undefined {
    const entry = typeof provider === "string" ? this.providers.get(provider) : provider;
    if (entry === undefined) return undefined;
    const value = env[entry.apiKeyEnv];
    return value === undefined || value === "" ? undefined : value;
  }
}

/**
 * The built-in catalog, or the file at `path` (the PROVIDERS_FILE value) which replaces it.
 * Throws a CatalogError naming the file or the bad entry.
 */
export function loadCatalog(path?: string): Catalog {
  if (path === undefined || path === "") return parseCatalog(builtinCatalogJson, "built-in catalog");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new CatalogError([`PROVIDERS_FILE: cannot read ${JSON.stringify(path)}: ${errorText(error)}`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CatalogError([`PROVIDERS_FILE: ${JSON.stringify(path)} is not valid JSON: ${errorText(error)}`]);
  }
  return parseCatalog(json, "PROVIDERS_FILE");
}

/** Validates an already parsed catalog document; `source` prefixes every error message. */
export function parseCatalog(json: unknown, source: string): Catalog {
  const shapeIssues = catalogShapeIssues(json);
  if (shapeIssues.length > 0) throw new CatalogError(shapeIssues.map((issue) => `${source}: ${issue}`));
  const file = json as CatalogFile;
  const issues: string[] = [];

  const providers = new Map<string, CatalogProvider>();
  file.providers.forEach((raw, index) => {
    const where = `providers[${index}] (${JSON.stringify(raw.id)})`;
    if (providers.has(raw.id)) issues.push(`${where}.id: duplicate provider id`);
    if (!isHttpUrl(raw.base_url)) issues.push(`${where}.base_url: expected an http(s) URL, got ${JSON.stringify(raw.base_url)}`);
    providers.set(raw.id, {
      id: raw.id,
      name: raw.name,
      ...(raw.description === undefined ? {} : { description: raw.description }),
      protocol: raw.protocol,
      baseUrl: raw.base_url.replace(/\/+$/, ""),
      apiKeyEnv: raw.api_key_env,
      byok: raw.byok ?? true,
      community: raw.community ?? false,
    });
  });

  const models: CatalogModel[] = [];
  const modelIds = new Set<string>();
  file.models.forEach((raw, index) => {
    const where = `models[${index}] (${JSON.stringify(raw.id)})`;
    if (modelIds.has(raw.id)) issues.push(`${where}.id: duplicate model id`);
    modelIds.add(raw.id);
    // A `:<profile>` suffix is always read as a routing variant (`model:cost` etc.), so such an id could never be addressed.
    if (/:(cost|latency|throughput|balanced)$/.test(raw.id)) issues.push(`${where}.id: must not end in a routing profile suffix`);
    models.push(resolveModel(raw, where, providers, issues));
  });

  if (issues.length > 0) throw new CatalogError(issues.map((issue) => `${source}: ${issue}`));
  return new Catalog([...providers.values()], models);
}

function resolveModel(raw: CatalogFileModel, where: string, providers: Map<string, CatalogProvider>, issues: string[]): CatalogModel {
  const endpoints: CatalogEndpoint[] = [];
  const endpointKeys = new Set<string>();
  raw.endpoints.forEach((endpoint, index) => {
    const at = `${where}.endpoints[${index}]`;
    const provider = providers.get(endpoint.provider);
    if (provider === undefined) {
      issues.push(`${at}.provider ${JSON.stringify(endpoint.provider)} is not a provider id`);
      return;
    }
    const key = `${endpoint.provider}/${endpoint.provider_model_id}`;
    if (endpointKeys.has(key)) issues.push(`${at}: duplicate endpoint ${JSON.stringify(key)}`);
    endpointKeys.add(key);
    endpoints.push({
      key,
      modelId: raw.id,
      provider: provider.id,
      providerModelId: endpoint.provider_model_id,
      protocol: endpoint.protocol ?? provider.protocol,
      baseUrl: provider.baseUrl,
      apiKeyEnv: provider.apiKeyEnv,
      byok: provider.byok,
      pricing: resolvePricing(endpoint.pricing, `${at}.pricing`, issues),
    });
  });
  return {
    id: raw.id,
    name: raw.name ?? raw.id,
    ...(raw.description === undefined ? {} : { description: raw.description }),
    openWeights: raw.open_weights ?? false,
    inputModalities: raw.input_modalities ?? ["text"],
    outputModalities: raw.output_modalities ?? ["text"],
    capabilities: raw.capabilities ?? [],
    ...(raw.max_input_tokens === undefined ? {} : { maxInputTokens: raw.max_input_tokens }),
    ...(raw.max_output_tokens === undefined ? {} : { maxOutputTokens: raw.max_output_tokens }),
    ...(raw.max_tokens_per_image === undefined ? {} : { maxTokensPerImage: raw.max_tokens_per_image }),
    ...(raw.max_tokens_per_file === undefined ? {} : { maxTokensPerFile: raw.max_tokens_per_file }),
    endpoints,
  };
}

function resolvePricing(raw: CatalogFilePricing, where: string, issues: string[]): CatalogPricing {
  const tiers: ContextTier[] = [];
  const bounds = new Set<number>();
  (raw.context_tiers ?? []).forEach((tier, index) => {
    if (bounds.has(tier.above_input_tokens)) {
      issues.push(`${where}.context_tiers[${index}].above_input_tokens: duplicate bound ${tier.above_input_tokens}`);
    }
    bounds.add(tier.above_input_tokens);
    tiers.push({
      aboveInputTokens: tier.above_input_tokens,
      ...rates(tier),
    });
  });
  tiers.sort((a, b) => a.aboveInputTokens - b.aboveInputTokens);
  return { input: raw.input, output: raw.output, ...rates({ cache_read: raw.cache_read, cache_write: raw.cache_write }), contextTiers: tiers };
}

function rates(raw: { input?: number; output?: number; cache_read?: number; cache_write?: number }) {
  return {
    ...(raw.input === undefined ? {} : { input: raw.input }),
    ...(raw.output === undefined ? {} : { output: raw.output }),
    ...(raw.cache_read === undefined ? {} : { cacheRead: raw.cache_read }),
    ...(raw.cache_write === undefined ? {} : { cacheWrite: raw.cache_write }),
  };
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" && url.search === "" && url.hash === "";
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A Switchyard catalog (the `PROVIDERS_FILE` format, docs/configuration.md "Catalog file") pointing at
 * the mocks: one BYOK provider per mock, a few priced models each, "@scenario" variants of
 * the first model of each provider (the catalog id is always `<provider>/<upstream id>`,
 * so "mock-openai/gpt-4o-mini@error429" makes the upstream answer 429), and
 * "multi/chat-model" served by mock-openai and mock-anthropic at different prices.
 * Prices are USD per million tokens.
 */
import type { MockUpstreamSet } from "./start-all-mock-upstreams";
import type { MockUpstream, UpstreamProtocol } from "./mock-types";

export interface CatalogPricing {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

export interface CatalogProvider {
  id: string;
  name: string;
  protocol: UpstreamProtocol;
  base_url: string;
  api_key_env: string;
  byok: boolean;
}

export interface CatalogEndpoint {
  provider: string;
  provider_model_id: string;
  pricing: CatalogPricing;
}

export interface CatalogModel {
  id: string;
  name: string;
  open_weights: boolean;
  input_modalities: string[];
  output_modalities: string[];
  capabilities: string[];
  endpoints: CatalogEndpoint[];
}

export interface Catalog {
  providers: CatalogProvider[];
  models: CatalogModel[];
}

interface MockModel {
  upstreamId: string;
  name: string;
  pricing: CatalogPricing;
}

interface MockProvider {
  id: string;
  name: string;
  apiKeyEnv: string;
  models: MockModel[];
}

export const MOCK_PROVIDERS: Readonly<Record<UpstreamProtocol, MockProvider>> = {
  "openai-chat": {
    id: "mock-openai",
    name: "Mock OpenAI",
    apiKeyEnv: "MOCK_OPENAI_API_KEY",
    models: [
      { upstreamId: "gpt-4o-mini", name: "GPT-4o mini", pricing: { input: 0.15, output: 0.6, cache_read: 0.075, cache_write: 0 } },
      { upstreamId: "gpt-4.1", name: "GPT-4.1", pricing: { input: 2, output: 8, cache_read: 0.5, cache_write: 0 } },
    ],
  },
  "openai-responses": {
    id: "mock-responses",
    name: "Mock OpenAI Responses",
    apiKeyEnv: "MOCK_RESPONSES_API_KEY",
    models: [
      { upstreamId: "gpt-5-mini", name: "GPT-5 mini", pricing: { input: 0.25, output: 2, cache_read: 0.025, cache_write: 0 } },
      { upstreamId: "o4-mini", name: "o4-mini", pricing: { input: 1.1, output: 4.4, cache_read: 0.275, cache_write: 0 } },
    ],
  },
  "anthropic-messages": {
    id: "mock-anthropic",
    name: "Mock Anthropic",
    apiKeyEnv: "MOCK_ANTHROPIC_API_KEY",
    models: [
      { upstreamId: "claude-sonnet-4-5", name: "Claude Sonnet 4.5", pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } },
      { upstreamId: "claude-haiku-4-5", name: "Claude Haiku 4.5", pricing: { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 } },
    ],
  },
  "google-generate-content": {
    id: "mock-google",
    name: "Mock Google",
    apiKeyEnv: "MOCK_GOOGLE_API_KEY",
    models: [
      { upstreamId: "gemini-2.5-flash", name: "Gemini 2.5 Flash", pricing: { input: 0.3, output: 2.5, cache_read: 0.03, cache_write: 0 } },
      { upstreamId: "gemini-2.5-pro", name: "Gemini 2.5 Pro", pricing: { input: 1.25, output: 10, cache_read: 0.125, cache_write: 0 } },
    ],
  },
};

/** The scenario suffixes given catalog variants (grammar in scenario-from-model.ts). */
export const CATALOG_SCENARIO_SUFFIXES = [
  "tool_call",
  "parallel_tool_calls",
  "reasoning",
  "error400",
  "error429",
  "error500",
  "stream_cut",
  "hang",
  "slow",
  "stream_error",
] as const;

/** "multi/chat-model": cheaper on mock-openai than on mock-anthropic. */
export const MULTI_MODEL_ID = "multi/chat-model";
export const MULTI_MODEL_PRICING: Readonly<Record<"mock-openai" | "mock-anthropic", CatalogPricing>> = {
  "mock-openai": { input: 1, output: 2, cache_read: 0.5, cache_write: 0 },
  "mock-anthropic": { input: 3, output: 6, cache_read: 0.3, cache_write: 3.75 },
};

function model(id: string, name: string, endpoints: CatalogEndpoint[]): CatalogModel {
  return {
    id,
    name,
    open_weights: false,
    input_modalities: ["text"],
    output_modalities: ["text"],
    capabilities: ["tools", "structured_outputs"],
    endpoints,
  };
}

export interface CatalogForOptions {
  /** Which "@scenario" variants of each provider's first model (default CATALOG_SCENARIO_SUFFIXES; none: `[]`). */
  scenarioSuffixes?: readonly string[];
}

export function catalogFor(mocks: MockUpstreamSet | readonly MockUpstream[], options: CatalogForOptions = {}): Catalog {
  const list = "list" in mocks ? mocks.list : mocks;
  const byProtocol = new Map<UpstreamProtocol, MockUpstream>();
  for (const mock of list) if (!byProtocol.has(mock.protocol)) byProtocol.set(mock.protocol, mock);

  const catalog: Catalog = { providers: [], models: [] };
  for (const [protocol, mock] of byProtocol) {
    const provider = MOCK_PROVIDERS[protocol];
    catalog.providers.push({
      id: provider.id,
      name: provider.name,
      protocol,
      base_url: mock.baseUrl,
      api_key_env: provider.apiKeyEnv,
      byok: true,
    });
    provider.models.forEach((entry, index) => {
      const upstreamIds = [entry.upstreamId];
      if (index === 0) upstreamIds.push(...(options.scenarioSuffixes ?? CATALOG_SCENARIO_SUFFIXES).map((suffix) => `${entry.upstreamId}@${suffix}`));
      for (const upstreamId of upstreamIds) {
        catalog.models.push(
          model(`${provider.id}/${upstreamId}`, `${provider.name}: ${entry.name}`, [
            { provider: provider.id, provider_model_id: upstreamId, pricing: { ...entry.pricing } },
          ]),
        );
      }
    });
  }

  if (byProtocol.has("openai-chat") && byProtocol.has("anthropic-messages")) {
    catalog.models.push(
      model(MULTI_MODEL_ID, "Multi: chat model", [
        { provider: "mock-openai", provider_model_id: "chat-model", pricing: { ...MULTI_MODEL_PRICING["mock-openai"] } },
        { provider: "mock-anthropic", provider_model_id: "chat-model", pricing: { ...MULTI_MODEL_PRICING["mock-anthropic"] } },
      ]),
    );
  }
  return catalog;
}

/** The environment that gives every mock provider a platform key (the catalog's `api_key_env`). */
export function mockProviderEnv(apiKey: string): Record<string, string> {
  return Object.fromEntries(Object.values(MOCK_PROVIDERS).map((provider) => [provider.apiKeyEnv, apiKey]));
}

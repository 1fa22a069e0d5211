/**
 * The catalog the replay gateway runs on (a PROVIDERS_FILE, docs/configuration.md "Catalog file"): the
 * built-in catalog's providers as they are, only their base URL pointing at the replay
 * upstream and their key read from a REPLAY_* variable, so whatever the gateway decides
 * from a provider entry is decided as in production; plus `azure` and `github-copilot`,
 * which have recordings but no built-in entry. One model per recording,
 * `<vendor>/<recording id>`, served by its vendor's provider with the recording's
 * protocol as the endpoint's (an OpenAI Responses recording is an `openai` endpoint
 * speaking `openai-responses`). Every endpoint has the same prices (USD per 1M tokens).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import builtinCatalog from "../../src/providers/builtin-catalog.json";
import type { CatalogEndpoint, CatalogModel, CatalogPricing, CatalogProvider, UpstreamProtocol } from "../support/mock-upstreams";
import type { Recording } from "./recording";

/** The PROVIDERS_FILE shape, with the endpoint's own `protocol`. */
export interface ReplayCatalog {
  providers: CatalogProvider[];
  models: Array<Omit<CatalogModel, "endpoints"> & { endpoints: Array<CatalogEndpoint & { protocol: UpstreamProtocol }> }>;
}

export const REPLAY_PRICING: Readonly<CatalogPricing> = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };

/** The providers the built-in catalog lacks, named as the recordings' sources name them. */
const EXTRA_PROVIDERS: readonly CatalogProvider[] = [
  { id: "azure", name: "Azure OpenAI", protocol: "openai-responses", base_url: "https://example.openai.azure.com/openai/v1", api_key_env: "AZURE_API_KEY", byok: true },
  { id: "github-copilot", name: "GitHub Copilot", protocol: "openai-responses", base_url: "https://api.githubcopilot.com", api_key_env: "GITHUB_COPILOT_API_KEY", byok: true },
];

function envName(providerId: string): string {
  return `REPLAY_${providerId.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
}

/** The catalog, and the environment that gives every provider the replay upstream's key. */
export function replayCatalog(recordings: readonly Recording[], origin: string, apiKey: string): { catalog: ReplayCatalog; env: Record<string, string> } {
  const providers = [...(builtinCatalog.providers as CatalogProvider[]), ...EXTRA_PROVIDERS].map((provider) => ({
    ...provider,
    base_url: `${origin}${provider.protocol === "google-generate-content" ? "/v1beta" : "/v1"}`,
    api_key_env: envName(provider.id),
  }));
  const known = new Set(providers.map((provider) => provider.id));
  const catalog: ReplayCatalog = {
    providers,
    models: recordings.map((recording) => {
      if (!known.has(recording.vendor)) throw new Error(`${recording.id}: no provider ${recording.vendor} in the replay catalog`);
      return {
        id: modelIdOf(recording),
        name: `Replay ${recording.id}`,
        open_weights: false,
        input_modalities: ["text"],
        output_modalities: ["text"],
        capabilities: [],
        endpoints: [{ provider: recording.vendor, provider_model_id: recording.id, protocol: recording.protocol, pricing: { ...REPLAY_PRICING } }],
      };
    }),
  };
  return { catalog, env: Object.fromEntries(providers.map((provider) => [provider.api_key_env, apiKey])) };
}

export function modelIdOf(recording: Recording): string {
  return `${recording.vendor}/${recording.id}`;
}

/** Writes the catalog as a PROVIDERS_FILE; returns its path. */
export function writeCatalogFile(catalog: ReplayCatalog): string {
  const path = join(mkdtempSync(join(tmpdir(), "switchyard-replay-")), "providers.json");
  writeFileSync(path, JSON.stringify(catalog));
  return path;
}

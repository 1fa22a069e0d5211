import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CatalogFile, CatalogFilePricing } from "../../src/providers/catalog-schema";
import builtinCatalog from "../../src/providers/builtin-catalog.json";
import { ROOT } from "./markdown";

/**
 * docs/models.md, generated from the built-in catalog. `bun test/docs/models-doc.ts` writes
 * it; test/docs/models-doc.test.ts fails when the file and the catalog disagree.
 */
export const MODELS_DOC = "docs/models.md";

const NONE = "—";

function price(value: number | undefined): string {
  return value === undefined ? NONE : `$${value}`;
}

function tokens(value: number | undefined): string {
  return value === undefined ? NONE : value.toLocaleString("en-US");
}

function tiers(pricing: CatalogFilePricing): string[] {
  return (pricing.context_tiers ?? []).map((tier) => {
    const parts = (["input", "output", "cache_read", "cache_write"] as const).filter((bucket) => tier[bucket] !== undefined).map((bucket) => `${bucket.replace("_", " ")} $${tier[bucket]}`);
    return `above ${tokens(tier.above_input_tokens)} input tokens: ${parts.join(", ")}`;
  });
}

export function renderModelsDoc(catalog: CatalogFile): string {
  const providers = new Map(catalog.providers.map((provider) => [provider.id, provider]));
  const lines = [
    "# Models and prices",
    "",
    "<!-- Generated from src/providers/builtin-catalog.json by `bun test/docs/models-doc.ts`; do not edit by hand. -->",
    "",
    "The built-in catalog: what a fresh server offers when `PROVIDERS_FILE` is not set (a",
    "catalog file replaces it whole: [configuration.md](configuration.md#catalog-file)). Name a",
    "model by its id, `<vendor>/<model>`; a suffix `:cost`, `:latency`, `:throughput` or",
    "`:balanced` ranks its endpoints ([api/inference.md](api/inference.md)). The live list,",
    "with each model's recent success rate and latency, is `GET /v1/models` (no credential",
    "needed), the console's **Models** page, or `switchyard models`.",
    "",
    "Prices are list prices in USD per million tokens, which is micro-USD per token. Input is",
    "uncached input; cache read and cache write are the cached-input prices; reasoning tokens",
    "are charged at the output price. — marks a price the catalog does not give: a request",
    "that uses that bucket gets an unknown charge, never zero. A request is charged in integer",
    "micro-USD from the prices of the endpoint that served it ([architecture.md](architecture.md#metering)).",
    "",
    "## Providers",
    "",
    "A provider serves with the platform's key when its variable is set, and with a",
    "customer's own key (BYOK) when the customer stored one; with neither, its models answer 402.",
    "",
    "| provider | name | protocol | platform key variable | BYOK |",
    "|---|---|---|---|---|",
    ...catalog.providers.map((provider) => `| \`${provider.id}\` | ${provider.name} | \`${provider.protocol}\` | \`${provider.api_key_env}\` | ${provider.byok === false ? "no" : "yes"} |`),
    "",
    "## Models",
    "",
    "| model | name | served by (upstream id) | context | max output | input | output | cache read | cache write | capabilities |",
    "|---|---|---|--:|--:|--:|--:|--:|--:|---|",
  ];
  const notes: string[] = [];
  for (const model of catalog.models) {
    for (const endpoint of model.endpoints) {
      const provider = providers.get(endpoint.provider);
      const protocol = endpoint.protocol && endpoint.protocol !== provider?.protocol ? `, \`${endpoint.protocol}\`` : "";
      const pricing = endpoint.pricing;
      lines.push(
        `| \`${model.id}\` | ${model.name} | \`${endpoint.provider}\` (\`${endpoint.provider_model_id}\`${protocol}) | ${tokens(model.max_input_tokens)} | ${tokens(model.max_output_tokens)} | ${price(pricing.input)} | ${price(pricing.output)} | ${price(pricing.cache_read)} | ${price(pricing.cache_write)} | ${(model.capabilities ?? []).join(", ")} |`,
      );
      for (const tier of tiers(pricing)) notes.push(`- \`${model.id}\` on \`${endpoint.provider}\`, ${tier}.`);
    }
  }
  lines.push("", "Context (the model's input limit) and max output are in tokens; — where the catalog names none.");
  if (notes.length > 0) lines.push("", "## Long-context prices", "", "A request whose prompt (cached tokens included) is longer than a tier's threshold is charged that tier's prices for the whole request; a price the tier leaves out stays the base one:", "", ...notes);
  return `${lines.join("\n")}\n`;
}

if (import.meta.main) {
  writeFileSync(join(ROOT, MODELS_DOC), renderModelsDoc(builtinCatalog as CatalogFile));
  console.log(`wrote ${MODELS_DOC}`);
}

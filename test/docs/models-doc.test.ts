import { expect, test } from "bun:test";
import type { CatalogFile } from "../../src/providers/catalog-schema";
import builtinCatalog from "../../src/providers/builtin-catalog.json";
import { readRepositoryFile } from "./markdown";
import { MODELS_DOC, renderModelsDoc } from "./models-doc";

test("docs/models.md is what the built-in catalog generates (regenerate with `bun test/docs/models-doc.ts`)", () => {
  expect(readRepositoryFile(MODELS_DOC)).toBe(renderModelsDoc(builtinCatalog as CatalogFile));
});

test("the generated page lists every provider and model of the catalog with its prices", () => {
  const page = renderModelsDoc(builtinCatalog as CatalogFile);
  for (const provider of builtinCatalog.providers) expect(page).toContain(`| \`${provider.id}\` | ${provider.name} |`);
  for (const model of builtinCatalog.models) {
    const row = page.split("\n").find((line) => line.startsWith(`| \`${model.id}\` |`));
    expect({ model: model.id, row: row !== undefined }).toEqual({ model: model.id, row: true });
    expect(row).toContain(`| $${model.endpoints[0]!.pricing.input} | $${model.endpoints[0]!.pricing.output} |`);
  }
});

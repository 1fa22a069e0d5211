import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROTOCOL_IDS } from "../../src/ir/protocol-id";
import { CatalogError, loadCatalog, parseCatalog } from "../../src/providers/catalog";

const directory = mkdtempSync(join(tmpdir(), "switchyard-catalog-test-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let fileCounter = 0;
function writeCatalogFile(content: unknown): string {
  fileCounter += 1;
  const path = join(directory, `catalog-${fileCounter}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

/** A small valid catalog; each test breaks one thing in a fresh copy. */
function validFile() {
  return {
    providers: [
      { id: "acme", name: "Acme", protocol: "openai-chat", base_url: "https://api.acme.test/v1/", api_key_env: "ACME_API_KEY" },
      { id: "groq", name: "Groq", protocol: "openai-chat", base_url: "http://127.0.0.1:9999/openai/v1", api_key_env: "GROQ_API_KEY", byok: false },
    ],
    models: [
      {
        id: "acme/foo",
        name: "Acme: Foo",
        capabilities: ["tools"],
        endpoints: [
          { provider: "acme", provider_model_id: "foo-1", pricing: { input: 1, output: 2 } },
          { provider: "groq", provider_model_id: "foo", protocol: "openai-responses", pricing: { input: 0.5, output: 1, cache_read: 0.1 } },
        ],
      },
      { id: "acme/bar", endpoints: [{ provider: "acme", provider_model_id: "bar", pricing: { input: 0, output: 0 } }] },
    ],
  };
}

function errorOf(run: () => unknown): CatalogError {
  try {
    run();
  } catch (error) {
    if (error instanceof CatalogError) return error;
    throw error;
  }
  throw new Error("expected a CatalogError, nothing was thrown");
}

describe("the built-in catalog", () => {
  const catalog = loadCatalog();

  test("loads the seven real providers with their documented base URLs and key variables", () => {
    expect([...catalog.providers.keys()]).toEqual(["openai", "anthropic", "google", "deepseek", "groq", "mistral", "xai"]);
    expect(catalog.getProvider("google")).toMatchObject({
      protocol: "google-generate-content",
      baseUrl: "https://generativelanguage.googleapis.com/v1beta",
      apiKeyEnv: "GEMINI_API_KEY",
    });
    expect(catalog.getProvider("groq")?.baseUrl).toBe("https://api.groq.com/openai/v1");
  });

  test("gives every model at least one endpoint with a known provider, a protocol and finite prices", () => {
    const models = catalog.listModels();
    expect(models.length).toBeGreaterThanOrEqual(17);
    for (const model of models) {
      expect(model.endpoints.length).toBeGreaterThan(0);
      for (const endpoint of model.endpoints) {
        expect(catalog.providers.has(endpoint.provider)).toBe(true);
        expect(PROTOCOL_IDS).toContain(endpoint.protocol);
        expect(Number.isFinite(endpoint.pricing.input) && endpoint.pricing.input >= 0).toBe(true);
        expect(Number.isFinite(endpoint.pricing.output) && endpoint.pricing.output > 0).toBe(true);
      }
    }
  });

  test("carries the list prices the brief names, including Gemini 2.5 Pro's long-context tier", () => {
    expect(catalog.endpointsFor("openai/gpt-4.1")[0]?.pricing).toMatchObject({ input: 2, output: 8, cacheRead: 0.5 });
    expect(catalog.endpointsFor("anthropic/claude-opus-4.1")[0]?.pricing).toMatchObject({ input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 });
    expect(catalog.endpointsFor("google/gemini-2.5-pro")[0]?.pricing.contextTiers).toEqual([
      { aboveInputTokens: 200000, input: 2.5, output: 15, cacheRead: 0.625 },
    ]);
    expect(catalog.endpointsFor("meta-llama/llama-3.3-70b")[0]).toMatchObject({ provider: "groq", providerModelId: "llama-3.3-70b-versatile" });
  });

  test("an endpoint's own protocol overrides its provider's", () => {
    expect(catalog.getProvider("openai")?.protocol).toBe("openai-chat");
    expect(catalog.endpointsFor("openai/gpt-5-codex")[0]?.protocol).toBe("openai-responses");
  });

  test("answers nothing for an unknown model", () => {
    expect(catalog.getModel("openai/gpt-4.1:floor")).toBeUndefined();
    expect(catalog.endpointsFor("nope/nothing")).toEqual([]);
  });

  test("reads a provider's platform key from its api_key_env, treating an empty value as unset", () => {
    expect(catalog.platformKeyFor("anthropic", { ANTHROPIC_API_KEY: "sk-ant-1" })).toBe("sk-ant-1");
    expect(catalog.platformKeyFor("anthropic", { ANTHROPIC_API_KEY: "" })).toBeUndefined();
    expect(catalog.platformKeyFor("anthropic", { OPENAI_API_KEY: "sk-1" })).toBeUndefined();
    expect(catalog.platformKeyFor("nope", { NOPE_API_KEY: "x" })).toBeUndefined();
  });
});

describe("PROVIDERS_FILE", () => {
  test("replaces the built-in catalog entirely", () => {
    const catalog = loadCatalog(writeCatalogFile(validFile()));
    expect([...catalog.providers.keys()]).toEqual(["acme", "groq"]);
    expect(catalog.listModels().map((m) => m.id)).toEqual(["acme/foo", "acme/bar"]);
    expect(catalog.getModel("openai/gpt-4.1")).toBeUndefined();
  });

  test("resolves endpoints with their provider's URL, key variable and BYOK flag, and fills defaults", () => {
    const catalog = loadCatalog(writeCatalogFile(validFile()));
    const [acme, groq] = catalog.endpointsFor("acme/foo");
    expect(acme).toMatchObject({ key: "acme/foo-1", protocol: "openai-chat", baseUrl: "https://api.acme.test/v1", apiKeyEnv: "ACME_API_KEY", byok: true });
    expect(groq).toMatchObject({ key: "groq/foo", protocol: "openai-responses", byok: false, pricing: { input: 0.5, output: 1, cacheRead: 0.1, contextTiers: [] } });
    expect(catalog.getModel("acme/bar")).toMatchObject({ name: "acme/bar", openWeights: false, inputModalities: ["text"], capabilities: [] });
  });

  test("accepts the catalog the mock-upstream harness writes, with @scenario model ids", () => {
    const file = validFile();
    file.models.push({ id: "mock-openai/gpt-4o-mini@error429", endpoints: [{ provider: "acme", provider_model_id: "gpt-4o-mini@error429", pricing: { input: 0.15, output: 0.6 } }] });
    expect(loadCatalog(writeCatalogFile(file)).getModel("mock-openai/gpt-4o-mini@error429")).toBeDefined();
  });

  test("names the path when the file cannot be read", () => {
    const missing = join(directory, "missing.json");
    expect(() => loadCatalog(missing)).toThrow(`PROVIDERS_FILE: cannot read ${JSON.stringify(missing)}`);
  });

  test("names the path when the file is not JSON", () => {
    const path = writeCatalogFile("{ providers: [");
    expect(() => loadCatalog(path)).toThrow(`PROVIDERS_FILE: ${JSON.stringify(path)} is not valid JSON`);
  });
});

describe("catalog validation names the bad entry", () => {
  function loadBroken(mutate: (file: ReturnType<typeof validFile>) => void): string {
    const file = validFile();
    mutate(file);
    return errorOf(() => loadCatalog(writeCatalogFile(file))).message;
  }

  test("an endpoint whose provider is not in the catalog", () => {
    expect(loadBroken((f) => (f.models[0]!.endpoints[1]!.provider = "nope"))).toBe(
      'PROVIDERS_FILE: models[0] ("acme/foo").endpoints[1].provider "nope" is not a provider id',
    );
  });

  test("a protocol outside the four protocol ids", () => {
    expect(loadBroken((f) => (f.providers[1]!.protocol = "openai"))).toBe(
      'PROVIDERS_FILE: providers[1] ("groq").protocol: expected one of "openai-chat", "openai-responses", "anthropic-messages", "google-generate-content", got "openai"',
    );
  });

  test("a base_url that is not an http(s) URL", () => {
    expect(loadBroken((f) => (f.providers[0]!.base_url = "ftp://api.acme.test"))).toContain('providers[0] ("acme").base_url: expected an http(s) URL');
    expect(loadBroken((f) => (f.providers[0]!.base_url = "https://"))).toContain('providers[0] ("acme").base_url: expected an http(s) URL');
  });

  test("a negative, non-numeric or infinite price", () => {
    expect(loadBroken((f) => (f.models[1]!.endpoints[0]!.pricing.output = -1))).toBe(
      'PROVIDERS_FILE: models[1] ("acme/bar").endpoints[0].pricing.output: expected a finite price ≥ 0 in USD per 1M tokens, got -1',
    );
    const file = validFile();
    const text = JSON.stringify(file).replace('"input":0.5', '"input":"0.5"').replace('"input":1,', '"input":1e400,');
    const message = errorOf(() => loadCatalog(writeCatalogFile(text))).message;
    expect(message).toContain('models[0] ("acme/foo").endpoints[0].pricing.input: expected a finite price ≥ 0 in USD per 1M tokens, got Infinity');
    expect(message).toContain('models[0] ("acme/foo").endpoints[1].pricing.input: expected a finite price ≥ 0 in USD per 1M tokens, got "0.5"');
  });

  test("a model id without the <vendor>/<model> shape", () => {
    expect(loadBroken((f) => (f.models[1]!.id = "bar"))).toContain('models[1] ("bar").id: expected a model id shaped "<vendor>/<model>", got "bar"');
    expect(loadBroken((f) => (f.models[1]!.id = "@fast/bar"))).toContain('models[1] ("@fast/bar").id');
  });

  test("a model id ending in a routing profile, which could never be addressed", () => {
    expect(loadBroken((f) => (f.models[1]!.id = "acme/bar:cost"))).toContain('models[1] ("acme/bar:cost").id: must not end in a routing profile suffix');
  });

  test("duplicate provider, model and endpoint entries", () => {
    expect(loadBroken((f) => (f.providers[1]!.id = "acme"))).toContain('providers[1] ("acme").id: duplicate provider id');
    expect(loadBroken((f) => (f.models[1]!.id = "acme/foo"))).toContain('models[1] ("acme/foo").id: duplicate model id');
    expect(loadBroken((f) => (f.models[0]!.endpoints[1] = { ...f.models[0]!.endpoints[0]! }))).toContain(
      'models[0] ("acme/foo").endpoints[1]: duplicate endpoint "acme/foo-1"',
    );
  });

  test("a missing required field and a misspelt optional one", () => {
    const message = loadBroken((f) => {
      const provider: Record<string, unknown> = f.providers[0]!;
      delete provider.api_key_env;
      const endpoint: Record<string, unknown> = f.models[0]!.endpoints[0]!;
      endpoint.protocl = "openai-responses";
    });
    expect(message).toContain('providers[0] ("acme").api_key_env: is required');
    expect(message).toContain('models[0] ("acme/foo").endpoints[0].protocl: is not a known field');
  });

  test("an unknown capability and a model without endpoints", () => {
    expect(loadBroken((f) => (f.models[0]!.capabilities = ["tools", "telepathy"]))).toContain('models[0] ("acme/foo").capabilities[1]: expected one of');
    expect(loadBroken((f) => (f.models[1]!.endpoints = []))).toContain('models[1] ("acme/bar").endpoints: expected at least one endpoint');
  });

  test("duplicate context tier bounds", () => {
    expect(
      loadBroken((f) => {
        const pricing: Record<string, unknown> = f.models[1]!.endpoints[0]!.pricing;
        pricing.context_tiers = [{ above_input_tokens: 1000, input: 1 }, { above_input_tokens: 1000, output: 2 }];
      }),
    ).toContain('models[1] ("acme/bar").endpoints[0].pricing.context_tiers[1].above_input_tokens: duplicate bound 1000');
  });

  test("a document that is not an object at all", () => {
    expect(errorOf(() => parseCatalog([], "PROVIDERS_FILE")).message).toBe("PROVIDERS_FILE: catalog: expected an object, got []");
  });

  test("every problem is reported, not only the first", () => {
    const error = errorOf(() =>
      loadCatalog(
        writeCatalogFile({
          ...validFile(),
          models: [{ id: "acme/x", endpoints: [{ provider: "a", provider_model_id: "x", pricing: { input: 1, output: 1 } }, { provider: "b", provider_model_id: "x", pricing: { input: 1, output: 1 } }] }],
        }),
      ),
    );
    expect(error.issues).toEqual([
      'PROVIDERS_FILE: models[0] ("acme/x").endpoints[0].provider "a" is not a provider id',
      'PROVIDERS_FILE: models[0] ("acme/x").endpoints[1].provider "b" is not a provider id',
    ]);
  });
});

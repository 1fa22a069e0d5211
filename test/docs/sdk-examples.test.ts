import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import OpenAI from "openai";
import builtinCatalog from "../../src/providers/builtin-catalog.json";
import type { CatalogFile } from "../../src/providers/catalog-schema";
import { DEFAULT_TEXT, DEFAULT_TOOL_NAME, MOCK_PROVIDERS, mockProviderEnv, startAllMockUpstreams, type MockUpstreamSet } from "../support/mock-upstreams";
import { startTestServer, type TestServer } from "../support/test-server";
import { fencedBlocks, readRepositoryFile, ROOT } from "./markdown";

/**
 * docs/sdks.md's examples, run as written: each ```ts sdk-example``` and ```sh sdk-example```
 * block in its own process with only SWITCHYARD_URL and SWITCHYARD_API_KEY set, against a test
 * server on the built-in catalog (the model ids the page names) whose providers point at the
 * stand-in upstreams; the Claude Code block with only the variables its ```sh sdk-env```
 * block exports; Codex from its ```toml sdk-config``` block. Every example prints the
 * stand-in's answer.
 */
const MOCK_KEY = "docs-example-platform-key";
const DOC = readRepositoryFile("docs/sdks.md");
const BLOCKS = fencedBlocks(DOC);

let mocks: MockUpstreamSet;
let server: TestServer;
let key: string;
const previousEnv: Record<string, string | undefined> = {};

/**
 * The built-in catalog with every provider's base URL on the stand-in of its protocol and
 * its key variable the stand-in's. An endpoint that overrides its provider's protocol gets a
 * provider of its own on that protocol's stand-in, so every model id stays as it is.
 */
function catalogOnMocks(set: MockUpstreamSet): CatalogFile {
  const catalog = structuredClone(builtinCatalog) as CatalogFile;
  const mockFor = (protocol: string) => set.list.find((mock) => mock.protocol === protocol)!;
  const keyEnvFor = (protocol: string) => MOCK_PROVIDERS[protocol as keyof typeof MOCK_PROVIDERS].apiKeyEnv;
  const extra: CatalogFile["providers"] = [];
  for (const provider of catalog.providers) Object.assign(provider, { base_url: mockFor(provider.protocol).baseUrl, api_key_env: keyEnvFor(provider.protocol) });
  for (const model of catalog.models) {
    for (const endpoint of model.endpoints) {
      const provider = catalog.providers.find((candidate) => candidate.id === endpoint.provider)!;
      if (!endpoint.protocol || endpoint.protocol === provider.protocol) continue;
      const id = `${provider.id}-${endpoint.protocol}`;
      if (!extra.some((candidate) => candidate.id === id)) extra.push({ ...provider, id, protocol: endpoint.protocol, base_url: mockFor(endpoint.protocol).baseUrl, api_key_env: keyEnvFor(endpoint.protocol) });
      endpoint.provider = id;
      delete endpoint.protocol;
    }
  }
  catalog.providers.push(...extra);
  return catalog;
}

beforeAll(async () => {
  mocks = await startAllMockUpstreams({ apiKey: MOCK_KEY });
  for (const [name, value] of Object.entries(mockProviderEnv(MOCK_KEY))) {
    previousEnv[name] = process.env[name];
    process.env[name] = value;
  }
  const providersFile = join(mkdtempSync(join(tmpdir(), "switchyard-docs-catalog-")), "providers.json");
  writeFileSync(providersFile, JSON.stringify(catalogOnMocks(mocks)));
  server = await startTestServer({ providersFile });
  const account = await server.createAccount(undefined, 100_000_000);
  key = await server.mintKey(account.apiKey, ["inference:invoke"]);
});
afterAll(async () => {
  await server.close();
  await mocks.close();
  for (const [name, value] of Object.entries(previousEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** Runs one example in its own process, from a file inside the repository (so its imports resolve), with exactly `env` and PATH. */
async function runExample(language: "ts" | "sh", code: string, env: Record<string, string>): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const folder = join(ROOT, ".tmp", "docs-examples");
  mkdirSync(folder, { recursive: true });
  const file = join(mkdtempSync(join(folder, "example-")), language === "ts" ? "example.ts" : "example.sh");
  writeFileSync(file, code);
  const command = language === "ts" ? [process.execPath, file] : ["bash", "-eu", file];
  const child = Bun.spawn(command, { cwd: ROOT, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { exitCode, stdout, stderr };
}

/** `export NAME=value` lines of a shell block, `$SWITCHYARD_URL` and `$SWITCHYARD_API_KEY` expanded. */
function exportedVariables(code: string, values: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, name, raw] of code.matchAll(/^export ([A-Z_][A-Z0-9_]*)=(.*)$/gm)) {
    env[name!] = raw!.trim().replace(/^"(.*)"$/, "$1").replace(/\$\{?([A-Z_]+)\}?/g, (_, variable: string) => values[variable] ?? "");
  }
  return env;
}

/** `key = "value"` lines of a TOML block, by section (`""` for the top level). */
function tomlValues(code: string): Record<string, Record<string, string>> {
  const sections: Record<string, Record<string, string>> = { "": {} };
  let section = "";
  for (const line of code.split("\n")) {
    const header = /^\[([^\]]+)\]\s*$/.exec(line);
    if (header) sections[(section = header[1]!)] = {};
    const pair = /^([a-z_]+)\s*=\s*"([^"]*)"\s*$/.exec(line);
    if (pair) sections[section]![pair[1]!] = pair[2]!;
  }
  return sections;
}

describe("docs/sdks.md", () => {
  const examples = BLOCKS.filter((block) => /^(ts|sh) sdk-example$/.test(block.info));

  test("has an example for each client the page covers", () => {
    expect(examples.length).toBeGreaterThanOrEqual(6);
    for (const module of ["openai", "@anthropic-ai/sdk", "@google/genai", "ai"]) expect(examples.some((block) => block.code.includes(`from "${module}"`))).toBe(true);
    expect(BLOCKS.filter((block) => ["sh sdk-env claude-code", "ts sdk-example claude-code", "toml sdk-config codex"].includes(block.info))).toHaveLength(3);
  });

  examples.forEach((block, index) => {
    const language = block.info.startsWith("ts") ? "ts" : "sh";
    const firstLine = block.code.split("\n").find((line) => line.trim() !== "")!;
    test(`example ${index + 1} (${language}: ${firstLine.slice(0, 60)}) prints the answer`, async () => {
      const result = await runExample(language, block.code, { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: key });
      expect({ exitCode: result.exitCode, stderr: result.stderr }).toEqual({ exitCode: 0, stderr: expect.any(String) });
      const lines = result.stdout.split("\n").filter((line) => line.trim() !== "");
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toContain(DEFAULT_TEXT);
    }, 30_000);
  });

  test("Claude Code: the variables the page exports are all the Anthropic SDK needs to reach Switchyard", async () => {
    const variables = exportedVariables(BLOCKS.find((block) => block.info === "sh sdk-env claude-code")!.code, { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: key });
    expect(Object.keys(variables).sort()).toEqual(["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL"]);
    const result = await runExample("ts", BLOCKS.find((block) => block.info === "ts sdk-example claude-code")!.code, variables);
    expect({ exitCode: result.exitCode, stderr: result.stderr }).toEqual({ exitCode: 0, stderr: expect.any(String) });
    expect(result.stdout).toContain(DEFAULT_TEXT);
  }, 30_000);

  test("Codex: the page's config.toml (model, base_url's path, env_key, wire_api) streams a Responses turn as Codex does", async () => {
    const config = tomlValues(BLOCKS.find((block) => block.info === "toml sdk-config codex")!.code);
    const provider = config[`model_providers.${config[""]!.model_provider}`]!;
    expect({ wire_api: provider.wire_api, env_key: provider.env_key }).toEqual({ wire_api: "responses", env_key: "SWITCHYARD_API_KEY" });
    const baseURL = new URL(new URL(provider.base_url!).pathname, server.url).toString();
    const env: Record<string, string> = { [provider.env_key!]: key };
    const codex = new OpenAI({ apiKey: env[provider.env_key!], baseURL, maxRetries: 0 });
    const stream = await codex.responses.create({
      model: config[""]!.model!,
      instructions: "You are Codex, a coding agent.",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "List the files." }] }],
      tools: [{ type: "function", name: DEFAULT_TOOL_NAME, description: "Run a shell command", parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } }, strict: false }],
      store: false,
      include: ["reasoning.encrypted_content"],
      stream: true,
    });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === "response.completed") completed = event.response;
    const text = (completed?.output ?? []).flatMap((item) => (item.type === "message" ? item.content : [])).map((part) => (part.type === "output_text" ? part.text : "")).join("");
    expect(text).toBe(DEFAULT_TEXT);
  }, 30_000);
});

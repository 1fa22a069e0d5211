import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";

async function startWith(catalog: unknown): Promise<{ code: number; stderr: string }> {
  const file = join(mkdtempSync(join(tmpdir(), "catalog-")), "providers.json");
  writeFileSync(file, typeof catalog === "string" ? catalog : JSON.stringify(catalog));
  const child = Bun.spawn([process.execPath, "src/main.ts"], {
    env: { ...process.env, PROVIDERS_FILE: file, PORT: "0", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const stderr = await new Response(child.stderr).text();
  return { code: await child.exited, stderr };
}

describe("PROVIDERS_FILE validation at start", () => {
  test("a bad entry stops the process with an error that names it", async () => {
    const catalog = {
      providers: [{ id: "acme", name: "Acme", protocol: "openai-chat", base_url: "https://api.acme.test/v1", api_key_env: "ACME_KEY" }],
      models: [
        {
          id: "acme/fast",
          name: "Fast",
          open_weights: false,
          input_modalities: ["text"],
          output_modalities: ["text"],
          capabilities: [],
          endpoints: [{ provider: "nope", provider_model_id: "fast", pricing: { input: 1, output: 2 } }],
        },
      ],
    };
    const result = await startWith(catalog);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot start");
    expect(result.stderr).toContain("acme/fast");
    expect(result.stderr).toContain("nope");
  });

  test("a file that is not JSON stops the process with the path in the error", async () => {
    const result = await startWith("{ providers: ");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("PROVIDERS_FILE");
    expect(result.stderr).toContain("not valid JSON");
  });
});

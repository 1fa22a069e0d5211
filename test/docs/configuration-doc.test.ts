import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readRepositoryFile, ROOT } from "./markdown";

/**
 * Every environment variable src/ reads is documented in docs/configuration.md, written as
 * code (`NAME`): the server's (src/config.ts, the tracing and logging setup, the server
 * processes) and the command-line tools'. Provider keys are named by the catalog
 * (`api_key_env`), so the built-in catalog's are checked too.
 */
const READS = [
  /\benv\.([A-Z][A-Z0-9_]+)/g, // env.PORT, process.env.ADMIN_TOKEN
  /\benv\[["']([A-Z][A-Z0-9_]+)["']\]/g, // env["PORT"]
  /\b(?:integer|count|setting)\((?:env, )?["']([A-Z][A-Z0-9_]+)["']/g, // integer("PORT", …), setting(env, "OTEL_…")
  /_ENV = ["']([A-Z][A-Z0-9_]+)["']/g, // SERVER_PROCESS_ENV = "SWITCHYARD_SERVER_PROCESS"
];
/** `previousOf("ADMIN_TOKEN", env)` reads ADMIN_TOKEN_PREVIOUS. */
const PREVIOUS = /\bpreviousOf\(["']([A-Z][A-Z0-9_]+)["']/g;

export function variablesRead(source: string): string[] {
  const names = new Set<string>();
  for (const pattern of READS) for (const match of source.matchAll(pattern)) names.add(match[1]!);
  for (const match of source.matchAll(PREVIOUS)) names.add(`${match[1]}_PREVIOUS`);
  return [...names];
}

function sourceFiles(): string[] {
  return readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join("src", file));
}

describe("docs/configuration.md", () => {
  const doc = readRepositoryFile("docs/configuration.md");

  test("documents every environment variable src/ reads", () => {
    const read = new Set(sourceFiles().flatMap((file) => variablesRead(readFileSync(join(ROOT, file), "utf8"))));
    const undocumented = [...read].filter((name) => !doc.includes(`\`${name}\``)).sort();
    expect(undocumented).toEqual([]);
    // The scan finds the variables it is meant to (a check of the check).
    for (const name of ["PORT", "DATABASE_URL", "ADMIN_TOKEN_PREVIOUS", "OTEL_BSP_MAX_QUEUE_SIZE", "SWITCHYARD_SERVER_PROCESS", "SWITCHYARD_API_KEY", "LOG_LEVEL"]) expect(read).toContain(name);
  });

  test("documents every provider key variable of the built-in catalog", async () => {
    const catalog = (await import("../../src/providers/builtin-catalog.json")).default;
    const undocumented = catalog.providers.map((provider) => provider.api_key_env).filter((name) => !doc.includes(`\`${name}\``));
    expect(undocumented).toEqual([]);
  });

  test("the scan reads each form a variable is read in", () => {
    const source = 'env.PORT; process.env.ADMIN_TOKEN; env["HOST"]; integer("WORKER_POOL_SIZE", 2, env); setting(env, "OTEL_SERVICE_NAME"); previousOf("BYOK_MASTER_KEY", env); const X_ENV = "SOME_VAR";';
    expect(variablesRead(source).sort()).toEqual(["ADMIN_TOKEN", "BYOK_MASTER_KEY_PREVIOUS", "HOST", "OTEL_SERVICE_NAME", "PORT", "SOME_VAR", "WORKER_POOL_SIZE"]);
  });
});

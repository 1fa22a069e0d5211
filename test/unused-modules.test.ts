import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../src");
/** The programs: main.ts (the server) and the two command-line tools. */
const ENTRY_POINTS = ["main.ts", "cli/admin.ts", "cli/switchyard.ts"];
/** Relative imports, re-exports, dynamic imports and worker scripts named by URL. */
const REFERENCE = /(?:(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?|import\(\s*|new URL\(\s*)["'](\.[^"']+)["']/g;

/**
 * A module that no other module of src/ imports is either a program or dead code (a file
 * only tests use belongs with the tests).
 */
test("every module in src/ is imported by another one in src/, except the entry points", () => {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(SRC, file));
  const imported = new Set<string>();
  for (const file of files) {
    for (const match of readFileSync(file, "utf8").matchAll(REFERENCE)) {
      const base = resolve(dirname(file), match[1]!);
      const target = [`${base}.ts`, join(base, "index.ts"), base].find((candidate) => candidate.endsWith(".ts") && existsSync(candidate));
      if (target) imported.add(target);
    }
  }
  const unimported = files.filter((file) => !imported.has(file)).map((file) => relative(SRC, file));
  expect(unimported.sort()).toEqual([...ENTRY_POINTS].sort());
});

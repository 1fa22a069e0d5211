import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { sourceFiles } from "./support/source-files";

/**
 * One entry point per management resource (src/management/README.md): only a resource's
 * service touches its queries and caches. Route files (`*-routes.ts`, anywhere in src/) and
 * the console's pages call services, so none of them may import a value from
 * src/db/queries/. Row types may still be named (`import type`, or `import { type X }`
 * where every name is a type): they are no access.
 */
const SRC = resolve(import.meta.dir, "../src");
const QUERIES = join(SRC, "db", "queries");
/** An import or re-export with a `from` clause (the clause captured), or a bare side-effect import. */
const IMPORT = /(?:^|[;\n])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*["'](\.[^"']+)["']|(?:^|[;\n])\s*import\s*["'](\.[^"']+)["']/g;

/** `{ type A, type B }` names types only; `{ a, type B }`, a default or a namespace import names values. */
function namesOnlyTypes(clause: string): boolean {
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]!.split(",").map((name) => name.trim()).filter((name) => name !== "");
  return names.length > 0 && names.every((name) => name.startsWith("type "));
}

/** The modules under src/db/queries/ a file imports values from. */
function queryValueImports(file: string): string[] {
  const found: string[] = [];
  for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
    const [, , typeKeyword, clause, fromPath, bareImport] = match;
    const target = resolve(dirname(file), (fromPath ?? bareImport)!);
    if (target !== QUERIES && !target.startsWith(QUERIES + sep)) continue;
    if (bareImport === undefined && (typeKeyword !== undefined || namesOnlyTypes(clause!))) continue;
    found.push(relative(SRC, target));
  }
  return found;
}

function isEntryFile(file: string): boolean {
  return file.endsWith("-routes.ts") || file.startsWith(join(SRC, "console") + sep);
}

describe("management entry points", () => {
  test("no route file and no console file imports a value from src/db/queries: they call the resource's service", () => {
    const offenders = sourceFiles(SRC)
      .filter(isEntryFile)
      .flatMap((file) => queryValueImports(file).map((target) => `${relative(SRC, file)} -> ${target}`))
      .sort();
    expect(offenders).toEqual([]);
  });

  test("the check reads value, type-only and mixed imports apart", () => {
    expect(namesOnlyTypes("{ type NamespaceRow }")).toBe(true);
    expect(namesOnlyTypes("{ type A, type B }")).toBe(true);
    expect(namesOnlyTypes("{ listLiveNamespaces, type NamespaceRow }")).toBe(false);
    expect(namesOnlyTypes("* as queries")).toBe(false);
    expect(namesOnlyTypes("listLiveNamespaces")).toBe(false);
  });

  test("a route file and a console file are both held to it", () => {
    expect(isEntryFile(join(SRC, "management", "keys", "key-routes.ts"))).toBe(true);
    expect(isEntryFile(join(SRC, "public", "stats-routes.ts"))).toBe(true);
    expect(isEntryFile(join(SRC, "console", "namespace-principals.ts"))).toBe(true);
    expect(isEntryFile(join(SRC, "management", "keys", "key-service.ts"))).toBe(false);
  });
});

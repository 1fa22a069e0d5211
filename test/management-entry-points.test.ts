import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { sourceFiles } from "./support/source-files";

/**
 * One entry point per management resource (src/management/README.md): only a resource's
 * service (or src/identity/, for credentials) touches its queries and caches. Route files (`*-routes.ts`, anywhere in src/) and
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

/**
 * Outside src/db/ itself, who may import a value from src/db/queries/ at all: src/identity/
 * (credentials end to end: keys, OAuth grants, their cache, `me`; src/identity/README.md)
 * and a resource's service (`*-service.ts`). So a credential has one write path, and a
 * rule about it cannot be written a second time beside a route, a page or a grant.
 */
function mayImportQueries(file: string): boolean {
  const path = relative(SRC, file);
  return path.startsWith("db" + sep) || path.startsWith("identity" + sep) || path.endsWith("-service.ts");
}

/**
 * The files that read or write their own tables without being a service, each the one
 * reader or writer of those tables, none of them a credential's. Each is on the request
 * path, where a service's `(deps, …)` call would add nothing but a hop, or is the
 * composition root.
 */
const QUERY_IMPORT_EXCEPTIONS: Readonly<Record<string, string>> = {
  "server.ts": "the composition root: refuses to start until every migration is applied",
  "admission/policy-counters.ts": "the budget and rate-limit counters admission holds per request",
  "admission/counter-leases.ts": "the leases of those counters an instance takes in advance",
  "admission/wallet-leases.ts": "the wallet leases admission takes, renews and gives back",
  "metering/metering-sink.ts": "the request records, ledger and usage rollups written in batches",
  "metering/refusal-sampler.ts": "the per-day counts of refused requests that get no record",
  "policy/policy-store.ts": "the request path's cache of the policies bound to a principal",
  "routing/routing-preset-store.ts": "the request path's cache of routing presets by name",
  "byok/byok-key-store.ts": "the request path's cache of an account's opened BYOK keys, and their use",
  "byok/kek-store.ts": "the key-encryption keys every instance shares",
  "byok/reseal-keys.ts": "re-sealing BYOK keys under the current key-encryption key",
};

/** The query modules of credentials: only identity and services may touch them, never an exception. */
const CREDENTIAL_QUERIES = ["api-keys", "oauth-tokens", "oauth-grants", "oauth-clients", "oauth-authorization-codes", "oauth-device-codes", "namespaces", "accounts", "auth-throttle"].map(
  (name) => join("db", "queries", name),
);

/** The `*Row` names a file imports from src/db/ (rows are the database's shape, not a page's). */
function rowTypeImports(file: string): string[] {
  const found: string[] = [];
  for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
    const [, , , clause, fromPath] = match;
    if (fromPath === undefined) continue;
    const target = resolve(dirname(file), fromPath);
    if (!target.startsWith(join(SRC, "db") + sep)) continue;
    const names = (clause ?? "").replace(/[{}]/g, "").split(",").map((name) => name.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!);
    for (const name of names) if (name.endsWith("Row")) found.push(`${relative(SRC, file)} -> ${name}`);
  }
  return found;
}

function isEntryFile(file: string): boolean {
  return file.endsWith("-routes.ts") || file.startsWith(join(SRC, "console") + sep);
}

/**
 * The files that take what they show from services, never from a row: the console, every
 * route file, and every module of src/public/ but its service (the public answers are
 * computed from the service's figures, outside any route file).
 */
function handsOutDomainObjects(file: string): boolean {
  return isEntryFile(file) || (file.startsWith(join(SRC, "public") + sep) && !file.endsWith("-service.ts"));
}

describe("management entry points", () => {
  test("no route file and no console file imports a value from src/db/queries: they call the resource's service", () => {
    const offenders = sourceFiles(SRC)
      .filter(isEntryFile)
      .flatMap((file) => queryValueImports(file).map((target) => `${relative(SRC, file)} -> ${target}`))
      .sort();
    expect(offenders).toEqual([]);
  });

  test("outside src/db/, only src/identity/ and *-service.ts files import a value from src/db/queries, but for the listed exceptions", () => {
    const offenders = sourceFiles(SRC)
      .filter((file) => !mayImportQueries(file) && !(relative(SRC, file) in QUERY_IMPORT_EXCEPTIONS))
      .flatMap((file) => queryValueImports(file).map((target) => `${relative(SRC, file)} -> ${target}`))
      .sort();
    expect(offenders).toEqual([]);
  });

  test("every listed exception still imports queries, and none of them a credential's", () => {
    const stale = Object.keys(QUERY_IMPORT_EXCEPTIONS).filter((path) => queryValueImports(join(SRC, path)).length === 0);
    expect(stale).toEqual([]);
    const credentialReaders = Object.keys(QUERY_IMPORT_EXCEPTIONS).flatMap((path) =>
      queryValueImports(join(SRC, path))
        .filter((target) => CREDENTIAL_QUERIES.includes(target))
        .map((target) => `${path} -> ${target}`),
    );
    expect(credentialReaders).toEqual([]);
  });

  test("no console file, route file or public module but its service imports a *Row type from src/db: the services hand pages and answers domain objects", () => {
    const offenders = sourceFiles(SRC).filter(handsOutDomainObjects).flatMap(rowTypeImports).sort();
    expect(offenders).toEqual([]);
    // A check of the check: a service does import its rows.
    expect(rowTypeImports(join(SRC, "management", "namespaces", "namespace-service.ts"))).toContain("management/namespaces/namespace-service.ts -> NamespaceRow");
  });

  test("the check reads value, type-only and mixed imports apart", () => {
    expect(namesOnlyTypes("{ type NamespaceRow }")).toBe(true);
    expect(namesOnlyTypes("{ type A, type B }")).toBe(true);
    expect(namesOnlyTypes("{ listLiveNamespaces, type NamespaceRow }")).toBe(false);
    expect(namesOnlyTypes("* as queries")).toBe(false);
    expect(namesOnlyTypes("listLiveNamespaces")).toBe(false);
  });

  test("identity and service files may import queries; routes, pages and other files may not", () => {
    expect(mayImportQueries(join(SRC, "identity", "oauth", "refresh-grant.ts"))).toBe(true);
    expect(mayImportQueries(join(SRC, "management", "keys", "key-routes.ts"))).toBe(false);
    expect(mayImportQueries(join(SRC, "management", "namespaces", "namespace-service.ts"))).toBe(true);
    expect(mayImportQueries(join(SRC, "oauth", "oauth-routes.ts"))).toBe(false);
    expect(mayImportQueries(join(SRC, "metering", "usage-rollups.ts"))).toBe(false);
  });

  test("a route file and a console file are both held to it", () => {
    expect(isEntryFile(join(SRC, "management", "keys", "key-routes.ts"))).toBe(true);
    expect(isEntryFile(join(SRC, "public", "stats-routes.ts"))).toBe(true);
    expect(isEntryFile(join(SRC, "console", "namespace-principals.ts"))).toBe(true);
    expect(isEntryFile(join(SRC, "management", "keys", "key-service.ts"))).toBe(false);
  });

  test("the rule on *Row types holds the console, route files and src/public/ but its service", () => {
    expect(handsOutDomainObjects(join(SRC, "console", "namespace-principals.ts"))).toBe(true);
    expect(handsOutDomainObjects(join(SRC, "public", "discovery-routes.ts"))).toBe(true);
    expect(handsOutDomainObjects(join(SRC, "public", "usage-stats.ts"))).toBe(true);
    expect(handsOutDomainObjects(join(SRC, "management", "usage", "usage-routes.ts"))).toBe(true);
    expect(handsOutDomainObjects(join(SRC, "public", "public-figures-service.ts"))).toBe(false);
    expect(handsOutDomainObjects(join(SRC, "policy", "policy-store.ts"))).toBe(false);
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../support/test-server";
import { readRepositoryFile, ROOT } from "./markdown";

/**
 * docs/api/ and the server's OpenAPI document agree: every path `/openapi/json` lists is
 * written in some docs/api/*.md, and every `/v1/…` path those pages write is one the
 * server serves. Paths are compared with their parameters as `{…}`, whatever the name; a
 * served `*` (Google's `models/{model}:generateContent`) matches what it routes. The
 * console's HTML pages and forms (`/`, `/console/…`) are checked against the pages table of
 * docs/console-and-cli.md instead: a form posts under the page it belongs to.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** `/v1/namespaces/{nsid}/keys/{id}` → `/v1/namespaces/{}/keys/{}`. */
export function pathShape(path: string): string {
  return path.replace(/\{[^}/]*\}/g, "{}").replace(/\/+$/, "");
}

function apiPages(): Array<{ file: string; text: string }> {
  return readdirSync(join(ROOT, "docs", "api"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => ({ file: `docs/api/${file}`, text: readRepositoryFile(`docs/api/${file}`) }));
}

/**
 * The paths a page writes: every `/…` inside inline code, the method dropped, a query
 * string cut off. `…/keys` (relative to the paths around it) and `:suffix` forms are not
 * complete paths and are left out.
 */
export function documentedPaths(markdown: string): string[] {
  const paths = new Set<string>();
  for (const [, code] of markdown.matchAll(/`([^`\n]+)`/g)) {
    for (const match of code!.matchAll(/(?:^|[\s(])(\/(?:v1|v1beta|oauth|admin|\.well-known|openapi|docs|ping|ready|health|metrics)\b[^\s`?,)]*)/g)) {
      const path = match[1]!.replace(/[.:]$/, "");
      if (path.includes("…") || path.includes("|")) continue;
      paths.add(path);
    }
  }
  return [...paths];
}

/** A served path's shape as a pattern: `{}` is one segment, a `*` anything to the end. */
function servedPattern(shape: string): RegExp {
  const escaped = shape.replace(/[.+?^$()[\]\\|]/g, "\\$&").replace(/\{\}/g, "[^/]+").replace(/\*/g, ".+");
  return new RegExp(`^${escaped}$`);
}

/** A documented path matches a served one when their shapes are equal or the served one's `*` covers it (`me` stands for `{nsid}`). */
function matches(documented: string, served: string[]): boolean {
  const shape = pathShape(documented).replace("/namespaces/me/", "/namespaces/{}/");
  return served.some((path) => pathShape(path) === shape || (path.includes("*") && servedPattern(pathShape(path)).test(shape)));
}

function isConsolePage(path: string): boolean {
  return path === "/" || path === "/console" || path.startsWith("/console/");
}

describe("docs/api/ against GET /openapi/json", () => {
  let served: string[];
  beforeAll(async () => {
    const spec = await server.api("GET", "/openapi/json");
    served = Object.keys(spec.body.paths as Record<string, unknown>);
  });

  test("every path in the OpenAPI document is written in some docs/api/*.md", () => {
    const written = apiPages().flatMap(({ text }) => documentedPaths(text));
    const undocumented = served.filter((path) => !isConsolePage(path) && !written.some((documented) => matches(documented, [path])));
    expect(undocumented).toEqual([]);
    expect(served.length).toBeGreaterThan(50);
  });

  test("every console page and form in the OpenAPI document belongs to a page docs/console-and-cli.md lists", () => {
    const pages = new Set([...readRepositoryFile("docs/console-and-cli.md").matchAll(/^\| `(\/console[^`]*|\/oauth\/[a-z]+)` \|/gm)].map((match) => pathShape(match[1]!)));
    const page = (path: string) => (path === "/" ? "/console" : pathShape(path).split("/").slice(0, 3).join("/").replace(/\.csv$/, ""));
    const unlisted = served.filter(isConsolePage).filter((path) => !pages.has(pathShape(path)) && !pages.has(page(path)) && !path.startsWith("/console/assets/") && !["/console/sign-in", "/console/sign-out"].includes(path)); // sign-in and out: the `/console` row
    expect(unlisted).toEqual([]);
  });

  test("every /v1 path docs/api/ writes is served", () => {
    const unknown = apiPages().flatMap(({ file, text }) =>
      documentedPaths(text)
        .filter((path) => (path.startsWith("/v1/") || path.startsWith("/v1beta/")) && !path.endsWith("/"))
        .filter((path) => !matches(path, served))
        .map((path) => `${file}: ${path}`),
    );
    expect(unknown).toEqual([]);
  });

  test("paths are read from inline code, with methods, queries and placeholders handled (a check of the check)", () => {
    const text = "`GET /v1/namespaces/{nsid}/requests?limit=5`, `POST …/policies/{id}/bind`, `DELETE /v1/byok/keys/{provider}` and `/v1/models/…`";
    expect(documentedPaths(text)).toEqual(["/v1/namespaces/{nsid}/requests", "/v1/byok/keys/{provider}"]);
    expect(pathShape("/v1/namespaces/{nsid}/keys/{id}")).toBe("/v1/namespaces/{}/keys/{}");
  });
});
